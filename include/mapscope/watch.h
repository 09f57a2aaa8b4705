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
 *
 * MODES (ms_watch_mode() says which one a watch is in). Kernel events are
 * tried first; where they are refused (no tracefs access, paranoid level,
 * a container without perf events) a watch of the calling process falls
 * back to watching from inside it:
 *
 * MS_WATCH_KERNEL     perf tracepoints. Sees every path above, raw
 *                     syscalls, static binaries and other processes.
 *                     Blind spots: none among unmaps; as an ordinary user
 *                     (kernel excluded) it still sees every syscall.
 * MS_WATCH_INTERPOSE  the PLT/GOT relocations of munmap, mremap, madvise,
 *                     shmdt, brk, sbrk, mmap (MAP_FIXED) and dlopen in every
 *                     loaded object are pointed at hooks, as UCX's ucm does;
 *                     objects dlopen'd later are patched too. Nothing is
 *                     defined in the caller's namespace, and closing puts
 *                     the relocations back. Blind spots: raw syscalls
 *                     (syscall(SYS_munmap), inline assembly); calls inside
 *                     libc to its own aliases (free() of a large block and
 *                     malloc_trim unmap through glibc's internal __munmap);
 *                     static binaries (nothing to patch: the open fails
 *                     with -ENOTSUP); functions found with dlsym; shmat
 *                     with SHM_REMAP; exec and exit; other processes. Only
 *                     changes that release memory (and brk growth, mremap)
 *                     are reported, with an empty name; one watch at a
 *                     time per process in this mode (-EBUSY).
 * MS_WATCH_UFFD       interposition, and a userfaultfd (UFFD_USER_MODE_ONLY,
 *                     Linux 5.11+, allowed to ordinary users whatever
 *                     vm.unprivileged_userfaultfd says) whose UNMAP, REMAP
 *                     and REMOVE events cover the ranges given to
 *                     ms_watch_track(), raw syscalls included. The kernel
 *                     holds the unmapping thread until the library's own
 *                     reader thread has read the event; that thread takes
 *                     no lock and never allocates, so free() anywhere,
 *                     even while draining, cannot hang. Blind spots: as
 *                     interposition outside the tracked ranges; for a raw
 *                     syscall the generation moves when the reader has
 *                     queued the event, a few microseconds after the
 *                     unmapping thread was let go, not before it returned;
 *                     ranges must be private anonymous or shared memory
 *                     (registration fails on file mappings); a static
 *                     binary cannot interpose, so it gets no self mode.
 *
 * ms_watch_fd() serves the kernel mode only (-1 in the others: compare the
 * generation instead).
 */
#ifndef MAPSCOPE_WATCH_H
#define MAPSCOPE_WATCH_H

#include <stddef.h>
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
#define MS_WATCH_NO_KERNEL     (1u << 2) /* no perf events: interposition (+ userfaultfd), this process only */
#define MS_WATCH_NO_UFFD       (1u << 3) /* no userfaultfd: interposition alone where kernel events fail */
#define MS_WATCH_KERNEL_ONLY   (1u << 4) /* kernel events or nothing: no fallback */

/* How a watch sees changes; see MODES above. */
enum ms_watch_mode {
	MS_WATCH_KERNEL,
	MS_WATCH_INTERPOSE,
	MS_WATCH_UFFD,
};

/*
 * Starts watching pid and all its threads, present and future (pid 0: the
 * calling process). Its current mappings are read from /proc first. On
 * success *w is the caller's, to ms_watch_close(). 0 or a negative errno:
 * -EACCES/-EPERM without the privileges (root, CAP_PERFMON or
 * kernel.perf_event_paranoid=-1 for every event; an ordinary user gets
 * its own processes with the kernel excluded, every syscall still seen,
 * once tracefs is readable for it: `mapscope setup`; the log
 * callback says which), -ESRCH for no such process. For the calling
 * process, where kernel events are refused, the watch falls back to
 * MS_WATCH_UFFD, or MS_WATCH_INTERPOSE where userfaultfd is refused too,
 * unless MS_WATCH_KERNEL_ONLY; the error is the kernel's when no mode
 * works. The environment variable MAPSCOPE_WATCH=kernel|interpose|uffd
 * forces a mode when flags do not (for tests).
 */
int ms_watch_open(pid_t pid, unsigned int flags, struct ms_watch **w);

/* The mode w watches in. */
enum ms_watch_mode ms_watch_mode(const struct ms_watch *w);

/*
 * Asks that every unmap of [addr, addr + len) be seen, raw syscalls
 * included: in MS_WATCH_UFFD mode, registers the range with the
 * userfaultfd (0, or a negative errno: -EINVAL for a file mapping or a
 * range not mapped); in MS_WATCH_KERNEL mode nothing is needed (0); in
 * MS_WATCH_INTERPOSE mode it cannot be done (-ENOTSUP).
 */
int ms_watch_track(struct ms_watch *w, const void *addr, size_t len);

/* A file descriptor that polls readable when events are waiting (see MS_WATCH_WAKEUP); -1 outside MS_WATCH_KERNEL. */
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
