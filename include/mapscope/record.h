/*
 * struct ms_record: a recording, in one object. It owns the live source
 * (mapscope/live.h) and the perf.data writer (mapscope/pdwriter.h), and
 * between the two adds what the kernel writes no record of: the binaries'
 * build-ids, [vsyscall] after each exec, and the ELF loader's trim of an
 * exec's first map.
 *
 *	struct ms_record *r = ms_record_new(&opts);
 *	ms_record_attach(r, pid);                  (or ms_record_add_task)
 *	ms_record_start(r, fd);
 *	ms_record_enable(r);
 *	ms_record_synthesize(r, pid);
 *	while (...) { poll(ms_record_fd(r, i) ...); ms_record_drain(r); }
 *	ms_record_stop(r);
 *	ms_record_drain(r);
 *	ms_record_close(r);
 *	ms_record_free(r);
 *
 * The caller runs the loop, handles signals and processes, and says what
 * it likes about the counts (ms_record_stats). Nothing here prints; causes
 * go to the library's log callback (mapscope/log.h).
 */
#ifndef MAPSCOPE_RECORD_H
#define MAPSCOPE_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_record;

/* Options of ms_record_new(). Zeroed options give the defaults noted. */
struct ms_record_opts {
	uint64_t fault_period;       /* a page-fault sample every N faults; 0: no fault samples */
	unsigned int mmap_pages;     /* ring pages per CPU, a power of two; 0: MS_LIVE_DEFAULT_PAGES */
	bool callchain;              /* user call chains by frame pointers */
	bool dwarf;                  /* user registers and stack, unwound at report time */
	bool no_vma_tree;            /* leave out maple_tree:ma_write */
	bool no_alloc_stacks;        /* no stack snapshots on the mapping syscalls (MS_LIVE_ALLOC_STACKS) */
	bool enable_on_exec;         /* events start at the tasks' next exec (a command we launch) */
	bool pipe;                   /* pipe mode: no seeking, headers as records */
	/*
	 * The data zstd-compressed as perf record -z writes it, which perf
	 * and mapscope read as they read a plain file: at compress_level (1
	 * to 22), or not at all (no_compress). 0: MS_RECORD_COMPRESS_LEVEL in
	 * a file, the records as they are in a pipe (read as it is written,
	 * stored by no one; perf 6.1's annotate dies on a compressed pipe,
	 * perf's own included).
	 */
	bool no_compress;
	uint32_t compress_level;
	/*
	 * record --referenced: every referenced_ms, each followed process's
	 * accessed bits per VMA (smaps Referenced:, then clear_refs), written
	 * as mapscope:vma_referenced samples; 0: not sampled.
	 */
	uint32_t referenced_ms;
	/*
	 * DAMON: damon:damon_aggregated is prepared, for a kdamond of ours
	 * that ms_record_damon_start() makes; zeroed intervals (us) and
	 * region counts take DAMON's defaults (5 ms, 100 ms, 1 s; 10, 1000).
	 */
	bool damon;
	uint64_t damon_sample_us, damon_aggr_us, damon_update_us;
	uint32_t damon_min_regions, damon_max_regions;
	/* Hardware data-address events (mapscope/live.h's hw_events), named as the user named them. */
	const struct perf_event_attr *hw_events;
	const char *const *hw_names;
	size_t nr_hw_events;
	/*
	 * record --prefetches: a uprobe at each data prefetch instruction of
	 * these binaries (in prefetch_func only, where given; the first
	 * prefetch_max, where not 0), each hit recorded with the registers of
	 * its addressing mode. Placed by ms_record_new(), removed by
	 * ms_record_free() and, if the recorder dies, by a watchdog process.
	 */
	const char *const *prefetch_paths;
	size_t nr_prefetch_paths;
	const char *prefetch_func;
	uint32_t prefetch_max;
	int argc;                    /* the command line, for the file's CMDLINE */
	char *const *argv;
	/*
	 * record --prefetches, beyond prefetch_paths: also every executable
	 * file the traced processes map, as it is mapped (libraries,
	 * dlopen; JIT code has no file and is out of reach)
	 * (prefetch_follow); only the prefetch_hot sites whose functions
	 * have the most IP samples after a counting phase (where not 0);
	 * the event recording only prefetch_window_ms of every
	 * prefetch_every_ms (where not 0: the traps stay, what is recorded
	 * is bounded).
	 */
	bool prefetch_follow;
	uint32_t prefetch_hot;
	uint32_t prefetch_window_ms, prefetch_every_ms;
};

/* The zstd level of the data where the caller gives none: perf record -z's, fast (11x on a browser's load). */
#define MS_RECORD_COMPRESS_LEVEL 1

/* The interval of record --referenced where the user gives none. */
#define MS_RECORD_REFERENCED_MS 100

/* Counts so far: for a progress line and the summary. */
struct ms_record_stats {
	uint64_t samples;            /* PERF_RECORD_SAMPLE records written */
	uint64_t data_samples;       /* of them, of events with a data address */
	uint64_t lost;               /* records the kernel reported lost */
	uint64_t bytes;              /* written so far, headers included */
};

/*
 * Prepares the events (ms_live_new); opens nothing yet and writes nothing.
 * NULL with errno on failure, the cause logged: EACCES/EPERM (privileges),
 * ENOENT/ENODEV (tracefs or a tracepoint missing).
 */
struct ms_record *ms_record_new(const struct ms_record_opts *opts);

/* Follows task tid and what it creates from now on. 0 or a negative errno (as ms_live_add_task). */
int ms_record_add_task(struct ms_record *r, pid_t tid);

/*
 * Follows the running process tgid: every thread it has, threads made
 * while they are found included, and what they create. 0 or a negative
 * errno (-ESRCH: it has exited).
 */
int ms_record_attach(struct ms_record *r, pid_t tgid);

/*
 * Starts the file on fd: header, attrs, tracing data. fd stays the
 * caller's: r never closes it, and writes to it until ms_record_close().
 * Call it once, after the tasks are added. 0 or a negative errno.
 */
int ms_record_start(struct ms_record *r, int fd);

/*
 * Resolves a hardware data-address event by the name users know
 * (mem-loads, mem-stores, dTLB-load-misses, cpu/mem-loads,ldlat=30/P,
 * ibs_op//, arm_spe//) through the PMUs' sysfs files, for hw_events. 0,
 * -ENODEV where this machine has no PMU that takes it, -ENOENT where the
 * PMU has no such event, -EINVAL where spec does not parse; why says it.
 */
int ms_record_event_resolve(const char *spec, struct perf_event_attr *attr, char *why, size_t len);

/*
 * Whether DAMON can monitor for us: 0, -EBUSY where a kdamond that is not
 * ours exists (it is never touched: record without DAMON), -ENOENT where
 * the kernel has no DAMON sysfs interface, or another negative errno.
 */
int ms_record_damon_available(void);

/*
 * Starts a kdamond of ours (opts.damon) monitoring pids[0, n), in that
 * order, and records its damon:damon_aggregated samples, each written
 * with its target's pid and tid. After the tasks are added, before
 * ms_record_start(). It is turned off and removed by ms_record_stop() or
 * ms_record_free(), and by a watchdog process if the recorder dies. 0 or
 * a negative errno (-EBUSY: DAMON is someone else's), the cause logged.
 */
int ms_record_damon_start(struct ms_record *r, const pid_t *pids, size_t n);

/*
 * record --prefetches: how many prefetch sites of binary i (in
 * prefetch_paths' order) were found and given a uprobe; those found that
 * a uprobe cannot fetch the operand of. 0, or the negative errno that
 * stopped its scan.
 */
int ms_record_prefetch_sites(const struct ms_record *r, size_t i, size_t *found, size_t *probed,
			     size_t *unsupported);

/* Enables the events of attached processes (launched ones start at exec). 0 or a negative errno. */
int ms_record_enable(struct ms_record *r);

/*
 * Writes the records of what tgid held before we came (COMMs, maps from
 * /proc), after what the rings hold now, so the file stays in time order.
 * 0 or a negative errno: -ENOSPC, -EIO, -EPIPE from the output; others
 * from /proc (the recording can go on).
 */
int ms_record_synthesize(struct ms_record *r, pid_t tgid);

/*
 * The step of the caller's loop: moves what the rings hold into the file
 * and, where an interval of --referenced has ended, the accessed bits;
 * then flushes it there, so the file reads whole up to here. 0 or a
 * negative errno (from the output).
 */
int ms_record_drain(struct ms_record *r);

/*
 * How long the caller's loop may wait (poll) before the next
 * ms_record_drain() is due, at most max_ms: with --referenced, the time
 * to the end of the interval.
 */
int ms_record_wait_ms(const struct ms_record *r, int max_ms);

/* The ring buffers' descriptors, for poll(2): POLLIN when one has data. */
int ms_record_nr_fds(const struct ms_record *r);
int ms_record_fd(const struct ms_record *r, int i);

/*
 * Disables the events, a syscall's exit after its entry; what they wrote
 * is left for one more ms_record_drain(). 0 or a negative errno.
 */
int ms_record_stop(struct ms_record *r);

/* Ends the file: features, final header. 0 or a negative errno. Once. */
int ms_record_close(struct ms_record *r);

void ms_record_stats(const struct ms_record *r, struct ms_record_stats *st);

/* Closes the events and frees r (not the output's fd). Accepts NULL. */
void ms_record_free(struct ms_record *r);

#ifdef __cplusplus
}
#endif
#endif
