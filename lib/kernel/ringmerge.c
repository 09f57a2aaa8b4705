/*
 * The rings drained in time order (ringmerge.h). Every record of every
 * ring is looked at where it lies (one that wraps round a ring's end is
 * copied whole), the rings' records are sorted and merged as pointers, and
 * only then handed out and their room freed: the kernel writes over none
 * of them before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/live_impl.h"
#include "kernel/ringmerge.h"
#include "perfdata/format.h"
#include "util/grow.h"

struct mring {
	uint64_t head;                   /* where this drain stops */
	size_t wrap_idx;                 /* the entry of its record that wraps, or SIZE_MAX */
	size_t wrap_off;                 /* that record's copy, in wrap */
};

struct ringmerge {
	int state;                       /* 0: not looked at; 1: times found; -1: drained unmerged */
	uint16_t sample_at, trailer_from_end;
	struct ms_ringmerge_ent *ents, *out;
	size_t cap_ents, cap_out;
	size_t *start, *heap;            /* nr_cpus + 1, 2 * nr_cpus */
	struct mring *rings;
	unsigned char *wrap;
	size_t cap_wrap;
};

#define ID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
		 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

int ms_ringmerge_time_offsets(const struct perf_event_attr *const *attrs, size_t n, uint16_t *sample_at,
			      uint16_t *trailer_from_end)
{
	uint64_t t, first = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		t = attrs[i]->sample_type;
		if (!(t & PERF_SAMPLE_TIME) || !(t & PERF_SAMPLE_TID) || !(t & PERF_SAMPLE_IP) ||
		    !attrs[i]->sample_id_all || (i && (t & (ID_BITS | PERF_SAMPLE_IP)) != first))
			return -EINVAL;
		first = t & (ID_BITS | PERF_SAMPLE_IP);
	}
	if (!n)
		return -EINVAL;
	/* From the record's start: its header, then the sample's body. */
	*sample_at = (uint16_t)(sizeof(struct perf_event_header) + ms_sample_time_off(first));
	*trailer_from_end = (uint16_t)ms_trailer_time_from_end(first);
	return 0;
}

/* Stable: an entry moves only past later ones. */
static void insertion_sort(struct ms_ringmerge_ent *v, size_t n)
{
	struct ms_ringmerge_ent e;
	size_t i, j;

	for (i = 1; i < n; i++) {
		if (v[i].time >= v[i - 1].time)
			continue;
		e = v[i];
		for (j = i; j > 0 && v[j - 1].time > e.time; j--)
			v[j] = v[j - 1];
		v[j] = e;
	}
}

/* Whether run a's next entry goes before run b's: the earlier time, or the lower run at equal times. */
static int before(const struct ms_ringmerge_ent *v, const size_t *cur, size_t a, size_t b)
{
	return v[cur[a]].time < v[cur[b]].time || (v[cur[a]].time == v[cur[b]].time && a < b);
}

static void sift_down(const struct ms_ringmerge_ent *v, const size_t *cur, size_t *heap, size_t n, size_t i)
{
	size_t c, t;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && before(v, cur, heap[c + 1], heap[c]))
			c++;
		if (!before(v, cur, heap[c], heap[i]))
			break;
		t = heap[c];
		heap[c] = heap[i];
		heap[i] = t;
	}
}

void ms_ringmerge_sort(struct ms_ringmerge_ent *v, const size_t *start, size_t k, struct ms_ringmerge_ent *out,
		       size_t *heap)
{
	size_t *cur = heap + k, n = 0, i, r, o = 0;

	for (r = 0; r < k; r++) {
		insertion_sort(v + start[r], start[r + 1] - start[r]);
		cur[r] = start[r];
		if (start[r + 1] > start[r])
			heap[n++] = r;
	}
	for (i = n / 2; i-- > 0;)
		sift_down(v, cur, heap, n, i);
	while (n) {
		r = heap[0];
		out[o++] = v[cur[r]++];
		if (cur[r] == start[r + 1])
			heap[0] = heap[--n];
		sift_down(v, cur, heap, n, 0);
	}
}

void ms_ringmerge_free(struct ringmerge *m)
{
	if (!m)
		return;
	free(m->ents);
	free(m->out);
	free(m->start);
	free(m->heap);
	free(m->rings);
	free(m->wrap);
	free(m);
}

/* l's merge state, its times' places found on the first drain. NULL: out of memory. */
static struct ringmerge *merge_state(struct ms_live *l)
{
	const struct perf_event_attr **attrs;
	struct ringmerge *m = l->merge;
	size_t k = (size_t)l->nr_cpus, i;

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	attrs = calloc(l->ev.n + 1, sizeof(*attrs));
	if (!m || !attrs || !(m->start = calloc(k + 1, sizeof(*m->start))) ||
	    !(m->heap = calloc(2 * k, sizeof(*m->heap))) || !(m->rings = calloc(k, sizeof(*m->rings)))) {
		free(attrs);
		ms_ringmerge_free(m);
		return NULL;
	}
	for (i = 0; i < l->ev.n; i++)
		attrs[i] = &l->ev.v[i]->attr;
	m->state = ms_ringmerge_time_offsets(attrs, l->ev.n, &m->sample_at, &m->trailer_from_end) ? -1 : 1;
	free(attrs);
	return l->merge = m;
}

/* A record's time, or prev where it holds none where the events put theirs. */
static uint64_t time_of(const struct ringmerge *m, const struct perf_event_header *h, uint64_t prev)
{
	size_t at;
	uint64_t t;

	if (h->type == PERF_RECORD_SAMPLE)
		at = m->sample_at;
	else if (h->size >= sizeof(*h) + m->trailer_from_end)
		at = h->size - m->trailer_from_end;
	else
		return prev;
	if (at + 8 > h->size)
		return prev;
	memcpy(&t, (const unsigned char *)h + at, 8);
	return t;
}

/* A copy of the record at off that wraps round r's end, in m->wrap at *wrap_len. 0 or -ENOMEM. */
static int copy_wrapped(struct ringmerge *m, const struct ring *r, size_t off, size_t *wrap_len, size_t *size)
{
	struct perf_event_header h;
	size_t first = r->size - off;

	memcpy(&h, r->data + off, first < sizeof(h) ? first : sizeof(h));
	if (first < sizeof(h))
		memcpy((unsigned char *)&h + first, r->data, sizeof(h) - first);
	*size = h.size;
	if (h.size < sizeof(h))
		return 0;
	if (MS_GROW(m->wrap, *wrap_len + h.size, m->cap_wrap, 65536, SIZE_MAX, false))
		return -ENOMEM;
	memcpy(m->wrap + *wrap_len, r->data + off, first < h.size ? first : h.size);
	if (h.size > first)
		memcpy(m->wrap + *wrap_len + first, r->data, h.size - first);
	return 0;
}

/* Ring c's records, from its tail to its head, appended to m->ents. 0 or -ENOMEM. */
static int collect(struct ringmerge *m, struct ring *r, struct mring *mr, size_t *n, size_t *wrap_len)
{
	uint64_t tail = r->pg->data_tail, t = 0;
	size_t mask = r->size - 1, off, size;
	const struct perf_event_header *h;
	int err;

	mr->head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	mr->wrap_idx = SIZE_MAX;
	for (; tail < mr->head; tail += size) {
		off = tail & mask;
		h = (const void *)(r->data + off);
		if (off + sizeof(*h) > r->size || off + h->size > r->size) {
			if ((err = copy_wrapped(m, r, off, wrap_len, &size)))
				return err;
			if (size < sizeof(*h)) {
				mr->head = tail;     /* as below */
				break;
			}
			mr->wrap_idx = *n;
			mr->wrap_off = *wrap_len;
			h = (const void *)(m->wrap + *wrap_len);
			*wrap_len += size;
		}
		size = h->size;
		if (size < sizeof(*h) || size > mr->head - tail) {
			mr->head = tail;         /* cannot happen with a sane kernel: drained up to here */
			break;
		}
		if (MS_GROW(m->ents, *n + 1, m->cap_ents, 4096, SIZE_MAX, false))
			return -ENOMEM;
		t = time_of(m, h, t);
		m->ents[(*n)++] = (struct ms_ringmerge_ent){ t, h };
	}
	return 0;
}

long ms_live_drain_merged(struct ms_live *l, ms_live_fn fn, void *ctx)
{
	struct ringmerge *m = merge_state(l);
	size_t n = 0, wrap_len = 0, i, k = (size_t)l->nr_cpus;
	int c, ret = 0;

	if (!m)
		return -ENOMEM;
	if (m->state < 0)
		return ms_live_drain(l, fn, ctx);
	for (c = 0; c < l->nr_cpus; c++) {
		m->start[c] = n;
		m->rings[c].head = 0;
		if (l->rings[c].fd >= 0 && (ret = collect(m, &l->rings[c], &m->rings[c], &n, &wrap_len)))
			return ret;
	}
	m->start[k] = n;
	/* The copies' places, now that wrap has stopped growing. */
	for (c = 0; c < l->nr_cpus; c++)
		if (l->rings[c].fd >= 0 && m->rings[c].wrap_idx != SIZE_MAX)
			m->ents[m->rings[c].wrap_idx].rec = (const void *)(m->wrap + m->rings[c].wrap_off);
	if (MS_GROW(m->out, n, m->cap_out, 4096, SIZE_MAX, false))
		return -ENOMEM;
	ms_ringmerge_sort(m->ents, m->start, k, m->out, m->heap);
	for (i = 0; i < n && !ret; i++)
		ret = fn(m->out[i].rec, ctx);
	for (c = 0; c < l->nr_cpus; c++)
		if (l->rings[c].fd >= 0)
			__atomic_store_n(&l->rings[c].pg->data_tail, m->rings[c].head, __ATOMIC_RELEASE);
	return ret ? ret : (long)n;
}
