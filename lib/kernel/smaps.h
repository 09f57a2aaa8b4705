/*
 * Internal: what /proc/PID/smaps says of each VMA's pages, and the
 * accessed bits that /proc/PID/clear_refs clears. Cleared, then read an
 * interval later, Referenced: is what the process touched in between:
 * ongoing access with no PMU and no DAMON (record --referenced).
 */
#ifndef MS_KERNEL_SMAPS_H
#define MS_KERNEL_SMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

/* One VMA of smaps; sizes in bytes. */
struct ms_smaps_vma {
	uint64_t start, end;
	uint64_t referenced, rss, anon, anon_huge;
};

/* Called for each VMA; non-zero stops the walk and is passed on. */
typedef int (*ms_smaps_fn)(const struct ms_smaps_vma *v, void *ctx);

/*
 * Walks smaps text [text, text + len) (need not end in NUL): fn hears
 * each VMA once its fields are read. Lines that do not parse are skipped.
 * 0, or what fn returned.
 */
int ms_smaps_parse(const char *text, size_t len, ms_smaps_fn fn, void *ctx);

/*
 * Reads PROC/PID/smaps whole into buf (its contents replaced; buf stays
 * the caller's) and walks it as ms_smaps_parse(). 0, a negative errno
 * (-ESRCH or -ENOENT: the process is gone), or what fn returned.
 */
int ms_smaps_read(const char *proc, pid_t pid, struct ms_buf *buf, ms_smaps_fn fn, void *ctx);

/*
 * Clears the accessed bits of every page of pid (writes "1" to
 * PROC/PID/clear_refs), which the kernel's reclaim also reads. 0 or a
 * negative errno. The kernel clears them without a TLB flush, and a CPU
 * sets a page's accessed bit only when it loads the page's translation:
 * a hot region whose translations stay in the TLB then reads as
 * unreferenced (measured here: 0 kB of a 32 MiB region rewritten every
 * 20 ms, in most 50 ms intervals). flush_tlb also writes "4", which on a
 * kernel without soft-dirty tracking only flushes the process's TLB; pass
 * it only where ms_smaps_kernel_has_soft_dirty() is false, since elsewhere
 * "4" clears the soft-dirty bits that other tools (CRIU) rely on.
 */
int ms_smaps_clear_refs(const char *proc, pid_t pid, bool flush_tlb);

/* Whether the VMA holding addr in smaps text has the "sd" (VM_SOFTDIRTY) flag. */
bool ms_smaps_vmflags_soft_dirty(const char *text, size_t len, uint64_t addr);

/*
 * Whether this kernel tracks soft-dirty pages (CONFIG_MEM_SOFT_DIRTY): a
 * fresh mapping of ours shows "sd" in its VmFlags. True when it cannot tell.
 */
bool ms_smaps_kernel_has_soft_dirty(void);

#endif
