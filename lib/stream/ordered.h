/*
 * Internal: records put in time order, as perf's ordered-events does it.
 * Records are queued with their times, and flushed up to a limit: the
 * caller (the stream) flushes at each FINISHED_ROUND everything up to the
 * newest time seen at the round before. Each per-CPU buffer is in time
 * order, so a round holds a few sorted runs, which a natural merge sort
 * joins cheaply.
 *
 * While records come in time order, as they do from one CPU, they are
 * queued as segments instead, with nothing to sort and nothing per record:
 * a run of samples of one size lying one after another in the source's
 * buffer (its time at a fixed offset), or one other record.
 *
 * The records are the source's, which holds them until they go out;
 * with copy set, each is copied as it is queued (live rings, whose bytes
 * are written over), and the copies live until the round after.
 */
#ifndef MS_STREAM_ORDERED_H
#define MS_STREAM_ORDERED_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

/* Records of equal time keep their queued order: the merge is stable. */
struct qent {
	uint64_t time;
	const struct perf_event_header *rec;
};

struct seg {
	const unsigned char *p;       /* the first record */
	uint64_t first, last;         /* the times of the first and the last */
	size_t n;                     /* records: more than 1 only in a run */
	bool run;                     /* samples run_size bytes apart */
	bool clean;                   /* a run known to hold no address that is set aside */
};

struct chunk;

/* Whether rec is one of the run samples (run_size bytes, its time at run_time). */
typedef bool (*ms_ordered_run_fn)(void *ctx, const struct perf_event_header *rec);

struct ms_ordered {
	struct qent *q, *tmp;
	/* A ring: entry i of nq is q[(qh + i) & (capq - 1)], so nothing moves as it turns. */
	size_t qh, nq, capq;          /* capq: a power of two, or 0 */
	size_t nsorted;               /* entries [0, nsorted) are known to be in time order */
	uint64_t tail_time;           /* the time of the last entry, when nq > 0, or of the last segment */
	struct seg *segs;             /* a ring as q is; in use while seg_mode holds */
	size_t sh, nseg, capseg;
	bool seg_mode;                /* the queue is segs (q is empty) while records come in order */
	bool seg_ok;                  /* segments may be used (run_size set) */
	uint16_t run_size;            /* the size of the samples that make runs, or 0 */
	int16_t run_time;             /* their TIME's offset from the record's start */
	ms_ordered_run_fn is_run;
	void *run_ctx;
	uint64_t max_time;            /* the newest time queued */
	uint64_t last_time;           /* the time of the record queued last */
	bool copy;
	struct chunk *arena_cur, *arena_prev;     /* copies of records */
	struct chunk *spare;                      /* emptied chunks, kept for reuse */
};

/* Sets o up empty; copy: records are copied as they are queued. */
void ms_ordered_init(struct ms_ordered *o, bool copy);
/*
 * Samples of run_size bytes, whose time lies at run_time, that is_run()
 * (with ctx) tells from other records, may be queued as runs (segments).
 */
void ms_ordered_set_runs(struct ms_ordered *o, uint16_t run_size, int16_t run_time, ms_ordered_run_fn is_run,
			 void *ctx);
/* Records held by their source (not copied) are queued as segments while they come in order. */
void ms_ordered_use_segments(struct ms_ordered *o);
void ms_ordered_release(struct ms_ordered *o);

static inline uint64_t ms_ordered_time_of(const struct ms_ordered *o, const unsigned char *rec)
{
	uint64_t t;

	memcpy(&t, rec + o->run_time, 8);
	return t;
}

static inline struct seg *ms_ordered_seg(const struct ms_ordered *o, size_t i)
{
	return &o->segs[(o->sh + i) & (o->capseg - 1)];
}

static inline const struct qent *ms_ordered_at(const struct ms_ordered *o, size_t i)
{
	return &o->q[(o->qh + i) & (o->capq - 1)];
}

/* Queue growth and copies, out of line: the queueing below stays small. 0 or -ENOMEM. */
int ms_ordered_grow(struct ms_ordered *o);
const struct perf_event_header *ms_ordered_copy(struct ms_ordered *o, const struct perf_event_header *rec);
/* Appends a segment of n records, times first to last (run: samples run_size apart). 0 or -ENOMEM. */
int ms_ordered_seg_push(struct ms_ordered *o, const unsigned char *p, size_t n, uint64_t first, uint64_t last,
			bool run);
/* A record came out of order: the segments become queue entries. 0 or -ENOMEM. */
int ms_ordered_segs_to_queue(struct ms_ordered *o);

/* The queue now ends at time last (records joined the last segment). */
static inline void ms_ordered_seg_ends_at(struct ms_ordered *o, uint64_t last)
{
	o->tail_time = o->last_time = last;
	if (last > o->max_time)
		o->max_time = last;
}

/* Queues rec, of time t. 0 or -ENOMEM. */
static inline int ms_ordered_queue(struct ms_ordered *o, const struct perf_event_header *rec, uint64_t t)
{
	size_t nq, nsorted;
	struct qent *q;
	int err;

	if (o->seg_mode) {
		if (t >= o->tail_time)
			return ms_ordered_seg_push(o, (const void *)rec, 1, t, t, false);
		if ((err = ms_ordered_segs_to_queue(o)))
			return err;
	}
	nq = o->nq;
	nsorted = o->nsorted;
	if (nq == o->capq && (err = ms_ordered_grow(o)))
		return err;
	if (o->copy && !(rec = ms_ordered_copy(o, rec)))
		return -ENOMEM;
	/* Everything read before the stores: they could alias o's fields. */
	if (nsorted == nq && (!nq || t >= o->tail_time))
		nsorted++;                    /* still in order: no sorting to do */
	if (t > o->max_time)
		o->max_time = t;
	q = &o->q[(o->qh + nq) & (o->capq - 1)];
	o->nq = nq + 1;
	o->nsorted = nsorted;
	o->tail_time = o->last_time = t;
	q->time = t;
	q->rec = rec;
	return 0;
}

/*
 * The queue (not segments) sorted; the number of its first entries with
 * time <= limit, which a flush sends out in order and then drops.
 * *in_order: nothing had come out of order since the flush before.
 */
size_t ms_ordered_sort_upto(struct ms_ordered *o, uint64_t limit, bool *in_order);
/*
 * The first n entries went out. in_order: nothing had come out of order
 * since the flush before; emitted: the newest time sent out so far. The
 * queue goes back to segments where it can. 0 or -ENOMEM.
 */
int ms_ordered_drop(struct ms_ordered *o, size_t n, bool in_order, uint64_t emitted);

/*
 * The next piece of the segments with time <= limit, taken off them: 1
 * with *g set (a run cut where the limit falls), 0 where none is left.
 */
int ms_ordered_seg_pop(struct ms_ordered *o, uint64_t limit, struct seg *g);

/* A round ended: the copies made before the round before are no longer needed. */
void ms_ordered_round(struct ms_ordered *o);
/* Nothing queued refers to the copies any more (the queue is empty): they go back to be used again. */
void ms_ordered_recycle(struct ms_ordered *o);

#endif
