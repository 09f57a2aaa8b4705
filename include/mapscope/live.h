/*
 * ms_live: the live source. It opens the perf events that see every change
 * to a process's address space (MMAP2, COMM, FORK, EXIT side-band records,
 * syscall tracepoints for the changes the kernel has no record for) and its
 * page faults, one ring buffer per CPU, and hands out the raw records.
 *
 * Records are handed out exactly as the kernel wrote them (perf.data
 * format); every event carries PERF_SAMPLE_IDENTIFIER and the same
 * sample_id_all fields (TID, TIME, IDENTIFIER), so perf can read them mixed.
 */
#ifndef MAPSCOPE_LIVE_H
#define MAPSCOPE_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_live;

/* Options of ms_live_new(). Zeroed options give the defaults noted. */
struct ms_live_opts {
	uint64_t fault_period;     /* a page-fault sample every N faults; 0: no fault samples */
	unsigned int mmap_pages;   /* data pages per CPU ring, a power of two; 0: 1024 */
	unsigned int flags;        /* MS_LIVE_* */
	/*
	 * Hardware data-address events (record -e): each attr's type, config,
	 * config1, config2, precise_ip, exclusions and sample_period (0: 4000
	 * samples a second) are taken; samples carry ADDR, DATA_SRC and WEIGHT.
	 * Read during ms_live_new() only.
	 */
	const struct perf_event_attr *hw_events;
	const char *const *hw_names;
	size_t nr_hw_events;
};

#define MS_LIVE_CALLCHAIN      (1u << 0) /* user callchains (frame pointers) on samples */
#define MS_LIVE_ENABLE_ON_EXEC (1u << 1) /* events start at the task's next exec */
#define MS_LIVE_WAKEUP_EACH    (1u << 2) /* poll wakes for every record (costs the traced thread ~10 us) */
#define MS_LIVE_DWARF          (1u << 3) /* user registers and 8 KiB of user stack on samples, for unwinding */
#define MS_LIVE_NO_VMA_TREE    (1u << 4) /* leave out maple_tree:ma_write, the kernel's own VMA boundaries */
/*
 * User registers and a snapshot of the user stack (MS_LIVE_ALLOC_STACK_BYTES)
 * on the entries of the syscalls that make memory (mmap, mremap, brk,
 * shmat) only, for unwinding who made each region; never on page faults.
 * 4 KiB: 2 KiB already named python3's, node's and the JVM's sites with
 * two callers each; 8 KiB lost records in a storm of mmap calls
 * (docs/PERFORMANCE.md).
 */
#define MS_LIVE_ALLOC_STACKS   (1u << 5)
#define MS_LIVE_ALLOC_STACK_BYTES 4096u
#define MS_LIVE_DAMON          (1u << 6) /* damon:damon_aggregated, for the kdamond given to ms_live_add_kthread */
/*
 * Every event excludes the kernel, and maple_tree:ma_write is left out: what
 * an ordinary user may open at kernel.perf_event_paranoid=2 (with tracefs
 * readable). Page faults taken in kernel mode (copy_to_user into fresh
 * pages) are not seen. ms_live_new() sets it itself for a process without
 * CAP_PERFMON, CAP_SYS_ADMIN or paranoid -1, and says so in the log.
 */
#define MS_LIVE_USER           (1u << 7)
/*
 * In user mode, where tracefs cannot be read: record what perf record -d
 * can (maps, page faults) without the tracepoints, and so without unmaps,
 * rather than fail; ms_live_flags() then has MS_LIVE_NO_SYSCALLS. For
 * recordings only: a watch must fail, not miss every unmap.
 */
#define MS_LIVE_PERF_FALLBACK  (1u << 8)
#define MS_LIVE_NO_SYSCALLS    (1u << 9)

/* The ring buffer size used when opts->mmap_pages is 0. */
#define MS_LIVE_DEFAULT_PAGES 1024u

/*
 * Resolves the tracepoints (finding or mounting tracefs) and prepares the
 * events; opens nothing yet. NULL with errno set on failure, the cause
 * logged: ENOENT where tracefs or a tracepoint is missing, EACCES where
 * tracefs cannot be read.
 */
struct ms_live *ms_live_new(const struct ms_live_opts *opts);

/* The flags in force (MS_LIVE_*): opts' own, and MS_LIVE_USER where ms_live_new() chose it. */
unsigned int ms_live_flags(const struct ms_live *l);

/*
 * Opens every event for task tid on every online CPU, inherited by the
 * threads and children it creates from now on. Events start disabled
 * (or armed for exec, with MS_LIVE_ENABLE_ON_EXEC). 0 or a negative errno
 * (-EACCES/-EPERM: privileges, -ESRCH: no such task, -EMFILE: raise the
 * open file limit); the cause is logged.
 */
int ms_live_add_task(struct ms_live *l, pid_t tid);

/*
 * Opens the events that fire in a kernel thread of ours (MS_LIVE_DAMON: the
 * kdamond) for thread tid on every online CPU, counting at once; after
 * ms_live_add_task(), whose rings they share. 0 or a negative errno.
 */
int ms_live_add_kthread(struct ms_live *l, pid_t tid);

/* Enables every event. 0 or a negative errno. */
int ms_live_enable(struct ms_live *l);

/*
 * Disables the events: page faults first, then syscall entries, then
 * syscall exits, so that a syscall whose entry was recorded also has its
 * exit recorded. 0 or a negative errno.
 */
int ms_live_disable(struct ms_live *l);

/* The ring buffers' file descriptors, for poll(2): POLLIN when one has data. */
int ms_live_nr_fds(const struct ms_live *l);
int ms_live_fd(const struct ms_live *l, int i);

/*
 * Called for each record. rec is valid only during the call. A non-zero
 * return stops the drain and is passed on.
 */
typedef int (*ms_live_fn)(const struct perf_event_header *rec, void *ctx);

/*
 * Hands every record now in the ring buffers to fn, one ring after another,
 * and frees their space. Returns the number of records handed out, or what
 * fn returned if it was non-zero (a negative errno by convention).
 */
long ms_live_drain(struct ms_live *l, ms_live_fn fn, void *ctx);

/*
 * Hands to fn the records that describe a process that already runs: the
 * entry of each mapping call a thread of it is blocked in (its exit comes
 * later, its entry came before the events), a COMM for each of its
 * threads and an MMAP2 for each mapping in /proc/TGID/task/TGID/maps
 * (PROT_NONE ones included), stamped with time (CLOCK_MONOTONIC ns). 0 or
 * a negative errno.
 */
int ms_live_synthesize(struct ms_live *l, pid_t tgid, uint64_t time, ms_live_fn fn, void *ctx);

/* The events, for writing a file header: attr, name ("syscalls:sys_enter_munmap"), ids. */
size_t ms_live_nr_evsels(const struct ms_live *l);
const struct perf_event_attr *ms_live_evsel_attr(const struct ms_live *l, size_t i);
const char *ms_live_evsel_name(const struct ms_live *l, size_t i);
const uint64_t *ms_live_evsel_ids(const struct ms_live *l, size_t i, size_t *nr);

/* The TRACING_DATA blob that describes the tracepoints; owned by l. */
void ms_live_tracing_data(const struct ms_live *l, const void **data, size_t *len);

/* Closes every event and unmaps the rings. Accepts NULL. */
void ms_live_free(struct ms_live *l);

#ifdef __cplusplus
}
#endif
#endif
