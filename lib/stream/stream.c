/*
 * The stream: records in, ordered and decoded events out. It knows no
 * source. A file's reader is bound to it for a run (struct
 * ms_stream_source: the reader's spans, holding records until a round
 * releases them); the live rings' records are pushed in and flushed. Here
 * records are taken and queued for ordering (ordered.c), and the fast
 * paths check and queue the only event's samples straight from a span,
 * in one pass; decode.c turns what the ordering lets out into events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"
#include "util/log.h"

static bool is_run(void *ctx, const struct perf_event_header *rec)
{
	return fast_sample(ctx, rec);
}

struct ms_stream *ms_stream_new(const struct ms_evlist *ev, const void *tracing, size_t len, bool copy)
{
	struct ms_stream *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->sev.kind = MS_EV_SAMPLE;
	s->sev.sample.has_addr = true;
	ms_ordered_init(&s->ord, copy);
	ms_u32map_init(&s->threads);
	ms_u32map_init(&s->brks);
	ms_u32map_init(&s->mms);
	err = stream_setup_evsels(s, ev, tracing, len);
	if (err) {
		ms_stream_free(s);
		errno = -err;
		return NULL;
	}
	ms_ordered_set_runs(&s->ord, s->fast_size, s->fast_time, is_run, s);
	return s;
}

static inline int enqueue(struct ms_stream *s, const struct perf_event_header *rec)
{
	return ms_ordered_queue(&s->ord, rec, record_time(s, rec));
}

void ms_stream_set_in_order(struct ms_stream *s, bool in_order)
{
	s->in_order = in_order;
}

void ms_stream_set_no_stacks(struct ms_stream *s, bool no_stacks)
{
	s->no_stacks = no_stacks;
}

/* off: where this FINISHED_ROUND lies in the source. */
static int finished_round(struct ms_stream *s, uint64_t off)
{
	int err;

	if (s->in_order) {           /* nothing to come is older: everything goes, and its bytes with it */
		err = stream_flush(s, UINT64_MAX);
		if (s->src)
			s->src->release(s->src->ctx, s->round_off = off);
		ms_ordered_round(&s->ord);
		return err;
	}
	err = stream_flush(s, s->next_flush);

	/*
	 * Everything read before the previous round has been emitted now: its
	 * times are at most the newest time seen then, which was the limit.
	 */
	if (s->src) {
		s->src->release(s->src->ctx, s->round_off);
		s->round_off = off;
	}
	s->next_flush = s->ord.max_time;
	/* Everything copied before the previous round has been emitted now. */
	ms_ordered_round(&s->ord);
	return err;
}

int ms_stream_push(struct ms_stream *s, const struct perf_event_header *rec)
{
	s->st.records++;
	return rec->type < 64 ? enqueue(s, rec) : 0;
}

int ms_stream_flush(struct ms_stream *s, uint64_t limit, ms_stream_fn fn, void *ctx)
{
	int err;

	s->fn = fn;
	s->ctx = ctx;
	err = stream_flush(s, limit);
	if (!s->ord.nq)                  /* nothing queued refers to the copies any more */
		ms_ordered_recycle(&s->ord);
	return err;
}

/*
 * Queues the usual records of a span, the only event's fixed-layout samples,
 * with the queue's state in locals (the stores of queue entries could alias
 * s's fields as far as the compiler knows); stops at any other record, or
 * when the ring is full. Returns where it stopped.
 */
static const unsigned char *enqueue_samples(struct ms_stream *s, const unsigned char *p, const unsigned char *end)
{
	struct ms_ordered *o = &s->ord;
	const struct perf_event_header *rec;
	struct qent *q = o->q, *e;
	size_t mask = o->capq - 1, qh = o->qh, nq = o->nq, nsorted = o->nsorted, cap = o->capq;
	uint64_t t, tail = o->tail_time, max = o->max_time, records = 0;
	const uint16_t size = s->fast_size;
	const int16_t at = s->fast_time;
	const bool multi = s->multi;
	/* As many records as the bytes can hold whole and the ring can take. */
	size_t fit = (size_t)(end - p) / size, left = fit < cap - nq ? fit : cap - nq;

	for (; left; left--, p += size, records++) {
		rec = (const void *)p;
		/* The file's lines ahead (an address, not a pointer past the span: a prefetch never faults). */
		__builtin_prefetch((const void *)((uintptr_t)p + 512));
		if (rec->size != size || rec->type != PERF_RECORD_SAMPLE || (multi && !fast_sample(s, rec)))
			break;
		memcpy(&t, p + at, 8);
		if (nsorted == nq && (!nq || t >= tail))
			nsorted++;               /* still in order: no sorting to do */
		if (t > max)
			max = t;
		e = &q[(qh + nq++) & mask];
		e->time = t;
		e->rec = rec;
		tail = t;
	}
	if (records) {
		o->nq = nq;
		o->nsorted = nsorted;
		o->tail_time = o->last_time = tail;
		o->max_time = max;
		s->st.records += records;
	}
	return p;
}

/* The head of perf's CPU_MAP: which form, then the form's first fields. */
struct cpu_map_head {
	uint16_t type;                       /* 0: a list of CPUs, 1: a mask, 2: a range */
	uint16_t nr;                         /* list, mask: entries; range: any_cpu, pad */
	uint16_t long_size;                  /* mask: 4 or 8; range: the first CPU */
	uint16_t end_cpu;                    /* range: the last CPU */
};

/*
 * Whether a record of perf's own that perf record writes among the data
 * (THREAD_MAP, CPU_MAP, FINISHED_INIT: synthesised at the start; nothing
 * here reads them) holds what its type does. A byte flipped in a sample's
 * type makes one of them, and that sample is lost: it must be counted.
 */
static bool perf_record_fits(const struct perf_event_header *rec)
{
	size_t len = rec->size - sizeof(*rec);
	struct cpu_map_head c = { 0 };
	uint64_t nr;

	switch (rec->type) {
	case PERF_RECORD_THREAD_MAP_:       /* u64 nr, then nr { u64 pid; char comm[16]; } */
		if (len < 8)
			return false;
		memcpy(&nr, rec + 1, 8);
		return nr <= len / 24 && len == 8 + 24 * nr;
	case PERF_RECORD_CPU_MAP_:          /* padded to 8 bytes */
		memcpy(&c, rec + 1, len < sizeof(c) ? len : sizeof(c));
		if (len < 4 || c.type > 2)
			return false;
		if (c.type == 0)
			return len >= 4 + 2u * c.nr && len < 4 + 2u * c.nr + 8;
		return c.type == 1 ? (c.long_size == 4 || c.long_size == 8) : len >= 8 && c.long_size <= c.end_cpu;
	case PERF_RECORD_FINISHED_INIT_:
		return len == 0;
	}
	return true;
}

/* One record of a span, at byte offset off. 0 or -errno. */
static int take_record(struct ms_stream *s, const struct perf_event_header *rec, uint64_t off)
{
	s->st.records++;
	if (rec->type == PERF_RECORD_FINISHED_ROUND_)
		return finished_round(s, off);
	if (rec->type < 64)                  /* kernel records; perf's own are headers */
		return enqueue(s, rec);
	if (rec->type > STREAM_PERF_TYPE_LAST)
		stream_unknown_record(s, rec, off);
	else if (!perf_record_fits(rec) && s->st.bad_records++ < 8 && s->src)
		ms_warn("skipping a record of type %u at byte offset %llu: it does not hold what a record of "
			"that type does, so the file is damaged there, and the record is lost", rec->type,
			(unsigned long long)off);
	return 0;
}

/* A run of the fast event's samples, known clean where view is used: it joins the last segment or starts one. */
static int seg_add_run(struct ms_stream *s, const unsigned char *first, size_t n, uint64_t tail, bool clean)
{
	struct ms_ordered *o = &s->ord;
	struct seg *g;

	if (o->nseg && (g = ms_ordered_seg(o, o->nseg - 1))->run && g->p + g->n * s->fast_size == first) {
		g->n += n;
		g->last = tail;
		g->clean &= clean;
		ms_ordered_seg_ends_at(o, tail);
		return 0;
	}
	if (ms_ordered_seg_push(o, first, n, ms_ordered_time_of(o, first), tail, true))
		return -ENOMEM;
	ms_ordered_seg(o, o->nseg - 1)->clean = clean;
	return 0;
}

/*
 * enqueue_samples() while the queue is segments: the samples that follow in
 * time order join the last run, or start one; it stops at any other record,
 * and at one out of order, which enqueue() takes.
 */
static const unsigned char *seg_enqueue_samples(struct ms_stream *s, const unsigned char *p,
						const unsigned char *end)
{
	const unsigned char *first = p;
	const struct perf_event_header *rec;
	const uint16_t size = s->fast_size;
	const int16_t at = s->fast_time;
	const bool multi = s->multi;
	/* Where runs go out over the file (view): each address, for a run known to be clean. */
	const uint16_t aat = s->view.n ? s->view.addr : 0;
	size_t left = (size_t)(end - p) / size;
	uint64_t t, tail = s->ord.tail_time, a, worst = 0;

	for (; left; left--, p += size) {
		rec = (const void *)p;
		__builtin_prefetch((const void *)((uintptr_t)p + 512));
		if (rec->size != size || rec->type != PERF_RECORD_SAMPLE || (multi && !fast_sample(s, rec)))
			break;
		memcpy(&t, p + at, 8);
		if (t < tail)
			break;
		tail = t;
		memcpy(&a, p + aat, 8);
		a -= 1;                  /* as not_user() orders them: 0 and the top half highest */
		worst = a > worst ? a : worst;
	}
	if (p == first)
		return p;
	/* not_user(worst + 1), as decode.c has it */
	if (seg_add_run(s, first, (size_t)(p - first) / size, tail,
			s->view.n && !(worst >= (1ULL << 63) - 1)))
		return first;            /* no memory: enqueue() meets it again and says so */
	s->st.records += (size_t)(p - first) / size;
	return p;
}

/*
 * Records of a source where the only event's samples have a fixed layout:
 * those are checked and queued straight from the span, in one pass; the
 * source checks and hands out every other record on its own, first in a
 * span.
 */
static int run_fast(struct ms_stream *s, const struct ms_stream_source *src)
{
	const struct perf_event_header *rec;
	const unsigned char *start, *p;
	const void *span;
	uint64_t off;
	size_t len;
	int ret, err;

	ms_ordered_use_segments(&s->ord);
	while ((ret = src->span(src->ctx, &span, &len, &off)) > 0) {
		start = span;
		p = s->ord.seg_mode ? seg_enqueue_samples(s, start, start + len) :
				      enqueue_samples(s, start, start + len);
		if (p != start) {
			src->consume(src->ctx, (size_t)(p - start), s->fast_size);
			continue;
		}
		rec = span;
		/* The next header, past a record that may be a 4 KiB user stack, asked for while this one is taken. */
		__builtin_prefetch((const unsigned char *)rec + rec->size);
		src->consume(src->ctx, rec->size, rec->size);
		if ((err = take_record(s, rec, off)))
			return err;
	}
	return ret;
}

/*
 * Whether a span's next record, at h with avail bytes left, is one to take
 * in the same pass: whole, sized as the kernel's are, and the kernel's
 * (the source checks perf's own records itself, first in a span).
 */
static inline bool take_next(const struct perf_event_header *h, size_t avail)
{
	return avail >= sizeof(*h) && h->size && !(h->size % 8) && h->size <= avail && h->type < 64;
}

/*
 * Any other stream: every record of a span as it comes, then the next
 * span. What the source's span returned last; *err: what a record's
 * handling returned, where that stopped it.
 */
static int run_plain(struct ms_stream *s, const struct ms_stream_source *src, int *err)
{
	const struct perf_event_header *rec;
	const unsigned char *p, *start, *end;
	const void *span;
	uint64_t off;
	size_t len;
	int ret;

	while ((ret = src->span(src->ctx, &span, &len, &off)) > 0) {
		p = start = span;
		end = p + len;
		do {
			rec = (const void *)p;
			if ((*err = take_record(s, rec, off + (uint64_t)(p - start))))
				return 0;
			p += rec->size;
		} while (take_next((const void *)p, (size_t)(end - p)));
		src->consume(src->ctx, (size_t)(p - start), rec->size);
	}
	return ret;
}

int ms_stream_run(struct ms_stream *s, const struct ms_stream_source *src, ms_stream_fn fn, void *ctx)
{
	int ret, err = 0;

	s->fn = fn;
	s->ctx = ctx;
	s->src = src;
	/* The fast path's stop, as its end, still lets out what was queued; the other's does not. */
	ret = s->fast_size ? run_fast(s, src) : run_plain(s, src, &err);
	if (err) {
		s->src = NULL;
		return err;
	}
	err = stream_flush(s, UINT64_MAX);
	if (!err)
		err = stream_flush_threads(s);
	s->src = NULL;
	return err ? err : ret;
}

bool ms_stream_has_syscalls(const struct ms_stream *s)
{
	return s->has_syscalls;
}

void ms_stream_stats(const struct ms_stream *s, struct ms_stream_stats *st)
{
	*st = s->st;
}

bool ms_stream_lost_pid(const struct ms_stream *s, size_t i, struct ms_stream_lost *out)
{
	if (i >= s->st.nr_lost_pids)
		return false;
	*out = s->lost[i];
	return true;
}

struct ms_stream_lost *ms_stream_lost_copy(const struct ms_stream *s, size_t *n)
{
	struct ms_stream_lost *l = s->st.nr_lost_pids ? malloc(s->st.nr_lost_pids * sizeof(*l)) : NULL;

	*n = l ? s->st.nr_lost_pids : 0;
	if (l)
		memcpy(l, s->lost, *n * sizeof(*l));
	return l;
}

void ms_stream_note_lost_changes(struct ms_stream *s, bool on)
{
	s->note_lost = on;
	s->nr_lost_changed = 0;
}

bool ms_stream_lost_changed(const struct ms_stream *s)
{
	return s->nr_lost_changed;
}

void ms_stream_set_stats_in_order(struct ms_stream *s, bool on)
{
	s->stats_in_order = on;
}

size_t ms_stream_lost_changes(struct ms_stream *s, const size_t **idx)
{
	size_t n = s->nr_lost_changed;

	*idx = s->lost_changed;
	s->nr_lost_changed = 0;
	return n;
}

void ms_stream_restore_stats(struct ms_stream *s, const struct ms_stream_stats *st,
			     const struct ms_stream_lost *lost, size_t nr_lost)
{
	struct ms_stream_lost *l = nr_lost ? malloc(nr_lost * sizeof(*l)) : NULL;

	s->st = *st;
	s->st.nr_lost_pids = l ? (uint32_t)nr_lost : 0;
	if (l)
		memcpy(l, lost, nr_lost * sizeof(*l));
	free(s->lost);
	s->lost = l;
	s->cap_lost = s->st.nr_lost_pids;
}

void ms_stream_free(struct ms_stream *s)
{
	if (!s)
		return;
	stream_free_threads(s);
	ms_ordered_release(&s->ord);
	free(s->ev);
	free(s->ids);
	free(s->id_table);
	free(s->batch);
	free(s->lost);
	free(s->lost_changed);
	free(s);
}
