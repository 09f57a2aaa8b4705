/*
 * Internal: the per-CPU rings' records handed out in time order (a k-way
 * merge), so that a recording's rounds need no sorting when read.
 *
 * Each ring is in time order only nearly: a record whose writer was
 * interrupted between taking its time and reserving its room follows the
 * interrupt's own record, and a LOST record carries the time of the record
 * that reports it. So each ring's records are first put in order on their
 * own (an insertion sort: few are out of place, and not far), then the
 * rings are merged through a heap of their cursors. Records of equal time
 * keep their ring's order, and the lower ring goes first.
 */
#ifndef MS_KERNEL_RINGMERGE_H
#define MS_KERNEL_RINGMERGE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include <mapscope/live.h>

struct ms_ringmerge_ent {
	uint64_t time;
	const struct perf_event_header *rec;
};

/*
 * Where a record's time lies, for every event of l alike: in a sample, the
 * bytes from its start; in any other record, from its end (sample_id_all's
 * trailer). 0, or -EINVAL where the events differ or lack TIME, or a
 * sample's TIME does not follow IDENTIFIER, IP and TID at fixed places.
 */
int ms_ringmerge_time_offsets(const struct perf_event_attr *const *attrs, size_t n, uint16_t *sample_at,
			      uint16_t *trailer_from_end);

/*
 * Sorts the k runs of v (run i: v[start[i], start[i + 1])) each on its
 * own, then merges them into out (start[k] entries). heap: room for k
 * run indexes.
 */
void ms_ringmerge_sort(struct ms_ringmerge_ent *v, const size_t *start, size_t k, struct ms_ringmerge_ent *out,
		       size_t *heap);

/*
 * ms_live_drain(), the records of every ring handed to fn merged in time
 * order. Where the events' times do not lie at fixed places, as
 * ms_live_drain() does it. A non-zero return of fn stops the drain: the
 * records not handed out yet are dropped with it. The number of records
 * handed out, or what fn returned, or -ENOMEM (nothing handed out).
 */
long ms_live_drain_merged(struct ms_live *l, ms_live_fn fn, void *ctx);

#endif
