/*
 * Records in time order (ordered.h): a ring of queue entries sorted by a
 * natural merge, or, while records come in order, segments of them with
 * nothing written per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/ordered.h"

struct chunk {
	struct chunk *next;
	size_t used;
	unsigned char data[1 << 20] __attribute__((aligned(8)));
};

void ms_ordered_init(struct ms_ordered *o, bool copy)
{
	memset(o, 0, sizeof(*o));
	o->copy = copy;
}

void ms_ordered_set_runs(struct ms_ordered *o, uint16_t run_size, int16_t run_time, ms_ordered_run_fn is_run,
			 void *ctx)
{
	o->run_size = run_size;
	o->run_time = run_time;
	o->is_run = is_run;
	o->run_ctx = ctx;
}

void ms_ordered_use_segments(struct ms_ordered *o)
{
	o->seg_ok = o->run_size && !o->copy;
	o->seg_mode = o->seg_ok && !o->nq;
}

/*
 * Natural merge sort of q[qh, qh + nq): the queue is a few sorted runs, one
 * per CPU buffer drained in the round (and what was left from the round
 * before), so each pass merges neighbouring runs and halves their number.
 * Returns the number of runs found in src (1: sorted), having merged
 * neighbouring pairs into dst.
 */
static size_t merge_pass(const struct qent *src, struct qent *dst, size_t n, size_t sorted)
{
	size_t lo, mid, hi, i, j, k, runs = 0;

	for (lo = 0; lo < n; lo = hi) {
		mid = lo == 0 && sorted > 1 ? sorted : lo + 1;
		for (; mid < n && src[mid].time >= src[mid - 1].time; mid++)
			;
		runs++;
		if (mid == n) {
			if (runs == 1)
				break;   /* sorted: no pass needed */
			memcpy(dst + lo, src + lo, (n - lo) * sizeof(*src));
			hi = n;
			continue;
		}
		for (hi = mid + 1; hi < n && src[hi].time >= src[hi - 1].time; hi++)
			;
		runs++;
		for (i = lo, j = mid, k = lo; i < mid && j < hi; k++)
			dst[k] = src[j].time < src[i].time ? src[j++] : src[i++];
		memcpy(dst + k, src + i, (mid - i) * sizeof(*src));
		memcpy(dst + k + (mid - i), src + j, (hi - j) * sizeof(*src));
	}
	return runs;
}

/*
 * The first nsorted entries are known to be in order already (queueing
 * keeps count while records come in order), so most rounds need no pass.
 * A pass writes from index 0 of the other array, which compacts the queue;
 * the arrays swap places if the result ends in tmp. Stable: records of
 * equal time keep their queued order.
 */
static void sort_queue(struct ms_ordered *o)
{
	struct qent *src, *dst = o->tmp, *t;
	size_t n = o->nq, runs, sorted = o->nsorted;

	if (o->nsorted >= n)
		return;                  /* an empty queue too, whose q may be NULL: no NULL + 0 */
	src = o->q + o->qh;
	if (o->qh + n > o->capq) {       /* the ring wraps: lay it out straight in tmp first */
		memcpy(o->tmp, o->q + o->qh, (o->capq - o->qh) * sizeof(*src));
		memcpy(o->tmp + (o->capq - o->qh), o->q, (n - (o->capq - o->qh)) * sizeof(*src));
		src = o->tmp;
		dst = o->q;
	}
	for (;;) {
		runs = merge_pass(src, dst, n, sorted);
		if (runs <= 1)
			break;
		t = src == o->q + o->qh ? o->q : src == o->tmp ? o->tmp : o->q;   /* free from index 0 on */
		src = dst;
		dst = t;
		sorted = 0;
		if (runs == 2)
			break;               /* the one merge made it sorted: no pass to find that */
	}
	if (src != o->q + o->qh) {
		if (src == o->tmp) {     /* the result is in tmp: swap the arrays */
			o->tmp = o->q;
			o->q = src;
		}
		o->qh = 0;
	}
	o->nsorted = n;
	o->tail_time = src[n - 1].time;
}

size_t ms_ordered_sort_upto(struct ms_ordered *o, uint64_t limit, bool *in_order)
{
	size_t lo, hi, i;

	*in_order = o->nsorted >= o->nq;
	sort_queue(o);
	for (lo = 0, hi = o->nq; lo < hi;) {    /* the first entry later than limit */
		i = lo + (hi - lo) / 2;
		if (ms_ordered_at(o, i)->time <= limit)
			lo = i + 1;
		else
			hi = i;
	}
	return lo;
}

/*
 * What is left queued after a flush, all of it in order, becomes segments
 * again (runs where its samples lie one after another), so that records
 * that follow in order join them with no queue entry of their own. 0 or
 * -ENOMEM (the queue is as it was).
 */
static int __attribute__((noinline)) queue_to_segs(struct ms_ordered *o)
{
	const size_t size = o->run_size;
	const unsigned char *p;
	const struct qent *e;
	struct seg *g;
	size_t i;
	int err;

	for (i = 0; i < o->nq; i++) {
		e = ms_ordered_at(o, i);
		p = (const void *)e->rec;
		if (!o->is_run(o->run_ctx, e->rec)) {
			err = ms_ordered_seg_push(o, p, 1, e->time, e->time, false);
		} else if (o->nseg && (g = ms_ordered_seg(o, o->nseg - 1))->run && g->p + g->n * size == p) {
			g->n++;
			g->last = e->time;
			g->clean = false;        /* not looked at */
			err = 0;
		} else {
			err = ms_ordered_seg_push(o, p, 1, e->time, e->time, true);
		}
		if (err) {
			o->sh = o->nseg = 0;
			return err;
		}
	}
	o->qh = o->nq = o->nsorted = 0;
	o->seg_mode = true;
	return 0;
}

int ms_ordered_drop(struct ms_ordered *o, size_t n, bool in_order, uint64_t emitted)
{
	o->qh = (o->qh + n) & (o->capq - 1);
	o->nq -= n;
	o->nsorted = o->nq;
	if (!o->nq && o->seg_ok) {
		/* Segments again, from no earlier than what went out: a later record is out of order. */
		o->seg_mode = true;
		if (o->tail_time < emitted)
			o->tail_time = emitted;
		return 0;
	}
	/*
	 * perf's per-CPU buffers break the order where a task moves to another
	 * CPU; a round that came in order says it is over.
	 */
	return o->seg_ok && in_order ? queue_to_segs(o) : 0;
}

int ms_ordered_seg_pop(struct ms_ordered *o, uint64_t limit, struct seg *g)
{
	const size_t size = o->run_size;
	struct seg *h;
	size_t lo, hi, mid;

	if (!o->nseg || (h = ms_ordered_seg(o, 0))->first > limit)
		return 0;
	*g = *h;
	if (h->last <= limit) {
		o->sh = (o->sh + 1) & (o->capseg - 1);
		o->nseg--;
		return 1;
	}
	/* A run, with first <= limit < last (so n >= 2): cut where a binary search finds the limit. */
	for (lo = 1, hi = h->n - 1; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (ms_ordered_time_of(o, h->p + mid * size) <= limit)
			lo = mid + 1;
		else
			hi = mid;
	}
	g->n = lo;
	g->last = ms_ordered_time_of(o, h->p + (lo - 1) * size);
	h->p += lo * size;
	h->n -= lo;
	h->first = ms_ordered_time_of(o, h->p);
	return 1;
}

/*
 * Emptied chunks are kept, not freed: freeing a 1 MiB block is a munmap,
 * which a process watching itself would see as a new event to drain, and so
 * on without end.
 */
static void recycle_chunks(struct ms_ordered *o, struct chunk *c)
{
	struct chunk *next;

	for (; c; c = next) {
		next = c->next;
		c->next = o->spare;
		o->spare = c;
	}
}

static void free_chunks(struct chunk *c)
{
	struct chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

void ms_ordered_round(struct ms_ordered *o)
{
	recycle_chunks(o, o->arena_prev);
	o->arena_prev = o->arena_cur;
	o->arena_cur = NULL;
}

void ms_ordered_recycle(struct ms_ordered *o)
{
	recycle_chunks(o, o->arena_prev);
	recycle_chunks(o, o->arena_cur);
	o->arena_prev = o->arena_cur = NULL;
}

/* A chunk with need bytes free. */
static struct chunk *chunk_with(struct ms_ordered *o, size_t need)
{
	struct chunk *c = o->arena_cur;

	if (c && sizeof(c->data) - c->used >= need)
		return c;
	if (o->spare) {
		c = o->spare;
		o->spare = c->next;
	} else if (!(c = malloc(sizeof(*c))))
		return NULL;
	c->next = o->arena_cur;
	c->used = 0;
	o->arena_cur = c;
	return c;
}

const struct perf_event_header * __attribute__((noinline)) ms_ordered_copy(struct ms_ordered *o,
									  const struct perf_event_header *rec)
{
	size_t i, words = rec->size / 8, need = (rec->size + 7) & ~7u;
	struct chunk *c = chunk_with(o, need);
	const uint64_t *src = (const void *)rec;
	uint64_t *dst;

	if (!c)
		return NULL;
	dst = (uint64_t *)(void *)(c->data + c->used);
	/* A word loop: most records are a few words, where a call to memcpy costs more. */
	if (words <= 8) {
		/* unrolled */
		switch (words) {
		case 8: dst[7] = src[7]; /* fall through */
		case 7: dst[6] = src[6]; /* fall through */
		case 6: dst[5] = src[5]; /* fall through */
		case 5: dst[4] = src[4]; /* fall through */
		case 4: dst[3] = src[3]; /* fall through */
		case 3: dst[2] = src[2]; /* fall through */
		case 2: dst[1] = src[1]; /* fall through */
		case 1: dst[0] = src[0]; /* fall through */
		default: break;
		}
	} else
		for (i = 0; i < words; i++)
			dst[i] = src[i];
	if (rec->size % 8)               /* the kernel and the reader keep sizes to 8s; a live one might not */
		memcpy(dst + words, src + words, rec->size % 8);
	c->used += need;
	return (const void *)dst;
}

/* A ring twice the size, its entries laid out from index 0. 0 or -ENOMEM. */
int __attribute__((noinline)) ms_ordered_grow(struct ms_ordered *o)
{
	/*
	 * 8192 entries (128 KiB) to start: a block that size is mapped on its
	 * own, so only the pages used cost a fault. tmp's contents do not
	 * matter, so it is not copied.
	 */
	size_t cap = o->capq ? o->capq * 2 : 8192, first = o->capq - o->qh < o->nq ? o->capq - o->qh : o->nq;
	struct qent *q = malloc(cap * sizeof(*q)), *t = malloc(cap * sizeof(*t));

	if (!q || !t) {
		free(q);
		free(t);
		return -ENOMEM;
	}
	if (o->nq) {
		memcpy(q, o->q + o->qh, first * sizeof(*q));
		memcpy(q + first, o->q, (o->nq - first) * sizeof(*q));
	}
	free(o->q);
	free(o->tmp);
	o->q = q;
	o->tmp = t;
	o->qh = 0;
	o->capq = cap;
	return 0;
}

/* A segment ring twice the size, laid out from index 0. 0 or -ENOMEM. */
static int __attribute__((noinline)) seg_grow(struct ms_ordered *o)
{
	size_t cap = o->capseg ? o->capseg * 2 : 256, i;
	struct seg *g = malloc(cap * sizeof(*g));

	if (!g)
		return -ENOMEM;
	for (i = 0; i < o->nseg; i++)
		g[i] = *ms_ordered_seg(o, i);
	free(o->segs);
	o->segs = g;
	o->sh = 0;
	o->capseg = cap;
	return 0;
}

int ms_ordered_seg_push(struct ms_ordered *o, const unsigned char *p, size_t n, uint64_t first, uint64_t last,
			bool run)
{
	struct seg *g;
	int err;

	if (o->nseg == o->capseg && (err = seg_grow(o)))
		return err;
	g = ms_ordered_seg(o, o->nseg++);
	g->p = p;
	g->n = n;
	g->first = first;
	g->last = last;
	g->run = run;
	g->clean = false;
	ms_ordered_seg_ends_at(o, last);
	return 0;
}

int __attribute__((noinline)) ms_ordered_segs_to_queue(struct ms_ordered *o)
{
	const struct seg *g;
	struct qent *e;
	size_t total = 0, i, j;
	int err;

	for (i = 0; i < o->nseg; i++)
		total += ms_ordered_seg(o, i)->n;
	while (o->capq - o->nq < total)
		if ((err = ms_ordered_grow(o)))
			return err;
	for (i = 0; i < o->nseg; i++)
		for (g = ms_ordered_seg(o, i), j = 0; j < g->n; j++) {
			e = &o->q[(o->qh + o->nq++) & (o->capq - 1)];
			e->rec = (const void *)(g->run ? g->p + j * o->run_size : g->p);
			e->time = g->run ? ms_ordered_time_of(o, (const unsigned char *)e->rec) : g->first;
		}
	o->nsorted = o->nq;
	o->sh = o->nseg = 0;
	o->seg_mode = false;
	return 0;
}

void ms_ordered_release(struct ms_ordered *o)
{
	free_chunks(o->arena_cur);
	free_chunks(o->arena_prev);
	free_chunks(o->spare);
	free(o->q);
	free(o->tmp);
	free(o->segs);
	memset(o, 0, sizeof(*o));
}
