/*
 * ms_watch: live address-space events for a process, for caches keyed by
 * virtual address (RDMA registrations, pinned buffers, JIT code) that must
 * drop an entry when its memory goes away.
 *
 * Every unmap path (munmap, also by a direct syscall; mremap; MAP_FIXED over
 * a range; brk shrink; madvise DONTNEED/FREE/REMOVE; shmdt; exec; exit) is
 * seen through kernel tracepoints, which write their record into a per-CPU
 * ring buffer synchronously, in the unmapping thread, before the syscall
 * returns; nothing is patched and the unmapping thread never blocks.
 *
 * THE GUARANTEE: once an unmap has returned in any thread of the watched
 * process, ms_watch_generation() returns a value different from every value
 * it returned before that unmap began, and the next ms_watch_next() calls
 * report the change. So a cache that calls ms_watch_generation() before a
 * lookup, and drains ms_watch_next() whenever the value changed, never
 * hands out an entry for memory that was unmapped before the lookup.
 *
 * Threads: ms_watch_generation() may be called from any thread at any
 * time; the other functions are not reentrant (one thread at a time).
 */
#ifndef MAPSCOPE_WATCH_H
#define MAPSCOPE_WATCH_H

#include <stdint.h>
#include <sys/types.h>

#include <mapscope/aspace.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_watch;

/* An event: what changed, and which range's old contents are gone. */
struct ms_watch_event {
	struct ms_change change;   /* op (ms_aspace_op_name() names it), range, new range, name, release range */
	uint64_t lost;             /* op MS_OP_NONE and lost > 0: records were lost; drop everything */
};

#define MS_WATCH_WAKEUP        (1u << 0) /* ms_watch_fd() wakes for every record (costs ~10 us per change) */
#define MS_WATCH_ENABLE_ON_EXEC (1u << 1)/* pid is a child about to exec: start at its exec */

/*
 * Starts watching pid and all its threads, present and future (pid 0: the
 * calling process). Its current mappings are read from /proc first. On
 * success *w is the caller's, to ms_watch_close(). 0 or a negative errno:
 * -EACCES/-EPERM without the privileges (root, CAP_PERFMON or
 * kernel.perf_event_paranoid=-1 for every event; an ordinary user gets
 * its own processes with the kernel excluded, every syscall still seen,
 * once tracefs is readable for it: `mapscope setup`; the log
 * callback says which), -ESRCH for no such process.
 */
int ms_watch_open(pid_t pid, unsigned int flags, struct ms_watch **w);

/* A file descriptor that polls readable when events are waiting (see MS_WATCH_WAKEUP). */
int ms_watch_fd(const struct ms_watch *w);

/*
 * The next event: 1 with *ev filled, 0 when there is none now, or a
 * negative errno. ev->change.name is the watch's, valid until the next
 * call or ms_watch_close().
 */
int ms_watch_next(struct ms_watch *w, struct ms_watch_event *ev);

/*
 * A number that changes whenever a record has been written since it was
 * last read, with no system call: a few loads of each CPU's ring head. When
 * a ring is nearly full (records may be lost), every call returns a new
 * value, so the caller drains and sees the loss.
 */
uint64_t ms_watch_generation(struct ms_watch *w);

/* Stops watching and frees w. Accepts NULL. */
void ms_watch_close(struct ms_watch *w);

#ifdef __cplusplus
}
#endif
#endif
