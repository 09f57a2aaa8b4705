/*
 * Internal: the recording machine's settings that decide what an analysis
 * concludes, which a perf.data file has no place for (vm.mmap_min_addr:
 * where the null pages end). record reads each from /proc/sys as it
 * starts and writes it as one sample of a tracepoint the kernel does not
 * have, mapscope:sysctl, its format in the TRACING_DATA like
 * user_string's (kernel/ustring.h): perf prints it and otherwise ignores
 * it, where a header feature of its own would stop older perf.
 */
#ifndef MS_KERNEL_SYSCTL_H
#define MS_KERNEL_SYSCTL_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define MS_SYSCTL_EVENT "sysctl"
#define MS_SYSCTL_NAME "mapscope:" MS_SYSCTL_EVENT
/* As MS_REFERENCED_ID: an IDENTIFIER the kernel never gives. */
#define MS_SYSCTL_ID ((1ULL << 62) | 0x6d7373797363ULL)
/* The largest record: a name of up to MS_SYSCTL_NAME_MAX bytes and its fields. */
#define MS_SYSCTL_NAME_MAX 64
#define MS_SYSCTL_RECORD_MAX (MS_SYSCTL_NAME_MAX + 96)

/* Appends the event's format file text, as tracefs would write it, with id tp_id. */
void ms_sysctl_format(uint16_t tp_id, struct ms_buf *out);

/*
 * A sample of event tp_id in out (cap bytes): setting name (sysctl's
 * dotted name, "vm.mmap_min_addr") had value, read by process pid at
 * time. Its size, or 0 where it does not fit.
 */
size_t ms_sysctl_encode(uint16_t tp_id, uint32_t pid, uint64_t time, const char *name, uint64_t value, void *out,
			size_t cap);

/*
 * The setting name ("vm.mmap_min_addr") as a number, from procfs
 * (normally "/proc") /sys/vm/mmap_min_addr. 0, -ENOENT, -EINVAL where
 * the file does not hold one number, or another -errno.
 */
int ms_sysctl_read(const char *procfs, const char *name, uint64_t *value);

/*
 * A fact record writes beside the settings, under this name: 1 where a
 * read fault on private anonymous memory maps the shared zero page
 * (do_anonymous_page, as Linux does), 0 where it takes a page of its own,
 * and so an anon_vma (mm_forbids_zeropage, a kernel booted so).
 */
#define MS_FACT_READ_ZERO_PAGE "mm.read_fault_zero_page"

/*
 * Finds it out on this machine: reads a page of a new private anonymous
 * map and asks /proc/self/pagemap whether what it maps is a page of its
 * own (PM_MMAP_EXCLUSIVE: vm_normal_page() finds one; the zero page is
 * no normal page). 0, or -errno where it cannot tell.
 */
int ms_read_fault_zero_page(uint64_t *value);

#endif
