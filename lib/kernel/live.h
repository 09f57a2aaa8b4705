/* Internal: what the stream and the watch take of a live source beyond its public API. */
#ifndef MS_KERNEL_LIVE_H
#define MS_KERNEL_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <mapscope/live.h>

struct ms_evlist;

/* The events opened, with their ids. */
const struct ms_evlist *ms_live_evlist(const struct ms_live *l);

/*
 * Ring i's control page (data_head advances as the kernel writes) and the
 * size of its data area, for readers that watch data_head themselves.
 */
const struct perf_event_mmap_page *ms_live_ring_page(const struct ms_live *l, int i);
size_t ms_live_ring_size(const struct ms_live *l);

struct perf_event_attr;
/* Whether event a opens for this task on any CPU (opened, then closed): 0 or a negative errno. */
int ms_live_probe_open(struct perf_event_attr *a);

/*
 * Adds the tracepoints tps[0, n) ("sys/name": uprobes of ours) to the
 * events, each hit sampled as the syscalls' are, and their formats to the
 * tracing data. After ms_live_new(), before any task is added (-EBUSY
 * after). 0 or a negative errno (-ENOENT: no such tracepoint).
 */
int ms_live_add_tracepoints(struct ms_live *l, const char *const *tps, size_t n);

/*
 * Enables (on) or disables event i on every task and CPU it is open for,
 * inherited copies included: record --prefetches' windows. 0 or a
 * negative errno.
 */
int ms_live_evsel_enable(struct ms_live *l, size_t i, bool on);

#endif
