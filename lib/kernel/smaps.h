/*
 * Internal: what /proc/PID/smaps says of each VMA's pages, and the
 * accessed bits that /proc/PID/clear_refs clears. Cleared, then read an
 * interval later, Referenced: is what the process touched in between:
 * ongoing access with no PMU and no DAMON (record --referenced).
 */
#ifndef MS_KERNEL_SMAPS_H
#define MS_KERNEL_SMAPS_H

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
 * negative errno.
 */
int ms_smaps_clear_refs(const char *proc, pid_t pid);

#endif
