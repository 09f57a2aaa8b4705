/*
 * Internal: record --prefetches during a recording. All prefetch sites
 * are probes of one uprobe event (kernel/uprobe.h), opened once before
 * the program runs; the binaries are scanned as they are mapped (the
 * program's, its libraries at start, each dlopen'ed one later: the
 * recorder sees their MMAP2 records as they come), or only those the
 * options name. JIT code has no file to place a uprobe in: it is out of
 * reach.
 *
 * Two ways to bound the cost of a trap per hit:
 * - hot=N: sites wait until the IP samples (the task-clock's, one per ms
 *   of a thread's CPU time, and every other sample's) have been counted
 *   for MS_PREFETCHES_HOT_MS; then the N sites whose functions have the
 *   most samples get their uprobes, and sites never seen stay unprobed.
 * - windows of T ms every P ms: the event is enabled for T ms, then
 *   disabled until the next period. A disabled event records nothing,
 *   but the kernel keeps its breakpoints (a probe cannot be taken out of
 *   an open event), so each hit still traps: windows bound what is
 *   recorded and the recorder's work, hot= and func= bound the traps.
 */
#ifndef MS_SESSION_PREFETCHES_H
#define MS_SESSION_PREFETCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include <mapscope/record.h>

struct ms_live;
struct ms_prefetches;

/* How long hot=N counts IP samples before it places the first uprobes. */
#define MS_PREFETCHES_HOT_MS 250

/*
 * Scans o's prefetch_paths, places the event's anchor and the uprobes of
 * those binaries (none yet with hot=N), and adds the event to live
 * (before any task is added). NULL with errno: EACCES/EPERM (tracefs not
 * writable), ENOENT (no uprobe_events), ENOMEM; each binary's own error
 * is kept for ms_prefetches_binary().
 */
struct ms_prefetches *ms_prefetches_new(const struct ms_record_opts *o, struct ms_live *live);

/*
 * A record on its way to the file: an executable file mapping not seen
 * before is scanned and probed (with prefetch_follow), a sample's IP is
 * counted (with hot=N). Errors are logged, never returned: the recording
 * goes on without that binary's prefetches.
 */
void ms_prefetches_record(struct ms_prefetches *p, const struct perf_event_header *h);

/* The windows and the hot phase at now_ns: 0 or a negative errno (an ioctl's). */
int ms_prefetches_tick(struct ms_prefetches *p, uint64_t now_ns);

/* The recording's events were disabled for good: later ticks change nothing. Accepts NULL. */
void ms_prefetches_stop(struct ms_prefetches *p);

/* The ms until the next tick is due at now_ns, at most max_ms. */
int ms_prefetches_wait_ms(const struct ms_prefetches *p, uint64_t now_ns, int max_ms);

/*
 * Binary i (prefetch_paths' first, then those found mapped): its path,
 * the sites found (in prefetch_func, where given), probed and those whose
 * operand a uprobe cannot fetch. 0 or the binary's error; -ERANGE past
 * the last.
 */
int ms_prefetches_binary(const struct ms_prefetches *p, size_t i, const char **path, size_t *found,
			 size_t *probed, size_t *unsupported);

/* Removes the uprobes (after the events that use them are closed). Accepts NULL. */
void ms_prefetches_free(struct ms_prefetches *p);

#endif
