/*
 * Internal: a kdamond of our own, through DAMON's sysfs interface
 * (/sys/kernel/mm/damon/admin), monitoring the virtual address spaces of
 * the processes we record; its damon:damon_aggregated tracepoint says
 * how often each region was found accessed.
 *
 * A kdamond that mapscope did not start is never stopped, reconfigured or
 * removed: writing nr_kdamonds recreates every kdamond's directory (what
 * others configured is lost) and fails with EBUSY while one runs. So one
 * is created only where nr_kdamonds reads 0, and what was created is torn
 * down by a watchdog process that outlives the recorder: when the
 * recorder's end of a pipe closes (a clean stop, or the recorder killed),
 * it turns our kdamond off and sets nr_kdamonds back to 0.
 *
 * The root is MS_DAMON_SYSFS, or the environment's MAPSCOPE_DAMON_SYSFS
 * (a debug variable: the tests point it at a fake tree).
 */
#ifndef MS_KERNEL_DAMON_H
#define MS_KERNEL_DAMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#define MS_DAMON_SYSFS "/sys/kernel/mm/damon/admin"

/*
 * A damon:damon_aggregated sample as ms_live opens it (IDENTIFIER, IP,
 * TID, TIME, ADDR, RAW); the raw fields follow raw_size, target_id first
 * after the 8 bytes of common fields.
 */
struct ms_damon_sample {
	struct perf_event_header header;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
	uint32_t raw_size;
};
#define MS_DAMON_SAMPLE_RAW (offsetof(struct ms_damon_sample, raw_size) + 4)
#define MS_DAMON_SAMPLE_TARGET (MS_DAMON_SAMPLE_RAW + 8)
#define MS_DAMON_SAMPLE_MIN (MS_DAMON_SAMPLE_TARGET + 8)

/*
 * A damon:damon_aggregated sample h, as its target's: copied into out
 * (outlen bytes) with pid and tid set to pids[target_id]. Returns out, or
 * h itself where it is too short or large, or its target_id is not
 * below n.
 */
const struct perf_event_header *ms_damon_sample_as_target(const struct perf_event_header *h, const pid_t *pids,
							  size_t n, void *out, size_t outlen);

/* DAMON's monitoring attributes; zeroed fields take DAMON's own defaults. */
struct ms_damon_opts {
	uint64_t sample_us;          /* how often a region's accessed bit is checked (5 ms) */
	uint64_t aggr_us;            /* how often the counts are reported and reset (100 ms) */
	uint64_t update_us;          /* how often the regions follow the maps (1 s) */
	uint32_t min_regions, max_regions;   /* how finely a space is split (10, 1000) */
};

struct ms_damon;

/* The sysfs root in use: MAPSCOPE_DAMON_SYSFS where set, else MS_DAMON_SYSFS. */
const char *ms_damon_root(void);

/* o with its zeroed fields set to DAMON's defaults. */
void ms_damon_opts_fill(struct ms_damon_opts *o);

/*
 * Whether a kdamond of ours may be made under root: 0, -EBUSY where any
 * kdamond exists (nr_kdamonds is not 0: someone else's), -ENOENT where the
 * kernel has no DAMON sysfs interface, or another negative errno.
 */
int ms_damon_available(const char *root);

/*
 * Makes kdamond 0 under root, with one vaddr context monitoring pids[0, n)
 * in that order (target i's damon_aggregated samples carry target_id i),
 * starts it, and leaves its teardown to a watchdog process. NULL with
 * errno: EBUSY (a kdamond exists, or DAMON refused ours: nothing was
 * changed that is not undone), others from sysfs; the cause is logged.
 */
struct ms_damon *ms_damon_start(const char *root, const struct ms_damon_opts *o, const pid_t *pids, size_t n);

/* The kdamond's thread, whose tracepoint hits are ours to record. */
pid_t ms_damon_kdamond(const struct ms_damon *d);

/* The watchdog process (for tests). */
pid_t ms_damon_watchdog(const struct ms_damon *d);

/*
 * Turns our kdamond off and removes it (the watchdog does, and is waited
 * for), then frees d. 0 or a negative errno (-EIO: the watchdog could not
 * tear it all down). Accepts NULL.
 */
int ms_damon_stop(struct ms_damon *d);

/* The teardown itself, as the watchdog does it: state off, nr_kdamonds 0. 0 or a negative errno. */
int ms_damon_teardown(const char *root);

#endif
