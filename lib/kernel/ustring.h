/*
 * Internal: the strings a syscall's entry points to, which its tracepoint
 * does not hold (a rename's paths, the name prctl gives a VMA). record
 * reads each from the caller's memory as it writes the entry (from the
 * stack the sample copied where the string lies there, else with
 * process_vm_readv), makes a path absolute as /proc would print it, and
 * writes it after the entry as a sample of a tracepoint the kernel does
 * not have, mapscope:user_string, its format in the TRACING_DATA like
 * vma_referenced's (kernel/refsample.h).
 */
#ifndef MS_KERNEL_USTRING_H
#define MS_KERNEL_USTRING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "util/buf.h"

#define MS_USTRING_EVENT "user_string"
#define MS_USTRING_NAME "mapscope:" MS_USTRING_EVENT
/* As MS_REFERENCED_ID: an IDENTIFIER the kernel never gives. */
#define MS_USTRING_ID ((1ULL << 62) | 0x6d73737472ULL)
/* The largest record: a path of PATH_MAX and its fields. */
#define MS_USTRING_RECORD_MAX (4096 + 80)

/* Appends the event's format file text, as tracefs would write it, with id tp_id. */
void ms_ustring_format(uint16_t tp_id, struct ms_buf *out);

/*
 * A sample of event tp_id in out (cap bytes): the string str, argument arg
 * (1 or 2) of thread tid of process pid's syscall entry at time. Its size,
 * or 0 where it does not fit.
 */
size_t ms_ustring_encode(uint16_t tp_id, uint32_t pid, uint32_t tid, uint64_t time, uint32_t arg,
			 const char *str, void *out, size_t cap);

/*
 * The NUL-terminated string at addr in process pid, into out (len bytes):
 * from stack (stack_size bytes copied from sp up) where it lies there
 * whole, else from the process's memory. 0, -EFAULT, or -ENAMETOOLONG.
 */
int ms_ustring_read(pid_t pid, uint64_t addr, const unsigned char *stack, uint64_t sp, uint64_t stack_size,
		    char *out, size_t len);

/*
 * name as d_path would print it: relative to directory fd dirfd of
 * process pid (AT_FDCWD: thread tid's working directory), under procfs
 * (normally "/proc"), its directory's symbolic links resolved where it
 * exists. 0, or -errno where the directory cannot be told (-ENOENT for
 * an empty name, which names no file).
 */
int ms_ustring_path(const char *procfs, pid_t pid, pid_t tid, int dirfd, const char *name, char *out, size_t len);

#endif
