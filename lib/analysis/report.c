/*
 * Samples, pages and times per region. Memory grows with regions and
 * distinct pages only. Distinct pages are bits in 2 MiB chunks (512 pages,
 * 64 bytes); accesses cluster, so each slot remembers its last chunk and
 * most samples set a bit without hashing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/report.h>

#include "util/log.h"

#define CHUNK_PAGES 512

struct stat {
	uint64_t samples, pages, first, last;
	uint64_t last_chunk;      /* key of the chunk used last, or UINT64_MAX */
	uint32_t last_idx;        /* its bitmap (an index: the bitmaps move as they grow) */
};

/* Chunk key -> index of its bitmap. */
struct chunkmap {
	uint64_t *keys;           /* UINT64_MAX: empty */
	uint32_t *idx;
	size_t cap, len;
	uint64_t (*bits)[CHUNK_PAGES / 64];
	size_t nbits, capbits;
};

struct ms_report {
	uint64_t from, to;
	struct stat *st;          /* [0]: unmapped; [id + 1]: region id */
	size_t cap;
	struct chunkmap chunks;   /* key: (slot << 27) | (page / 512) */
	uint64_t total;
	int error;
};

MS_EXPORT struct ms_report *ms_report_new(uint64_t from_ns, uint64_t to_ns)
{
	struct ms_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->from = from_ns;
	rep->to = to_ns;
	return rep;
}

MS_EXPORT void ms_report_set_window(struct ms_report *rep, uint64_t from_ns, uint64_t to_ns)
{
	rep->from = from_ns;
	rep->to = to_ns;
}

static size_t hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static int chunk_grow(struct chunkmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024, i, j;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *idx = malloc(cap * sizeof(*idx));

	if (!keys || !idx) {
		free(keys);
		free(idx);
		return -ENOMEM;
	}
	memset(keys, 0xff, cap * sizeof(*keys));
	for (i = 0; i < m->cap; i++) {
		if (m->keys[i] == UINT64_MAX)
			continue;
		for (j = hash(m->keys[i], cap); keys[j] != UINT64_MAX; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		idx[j] = m->idx[i];
	}
	free(m->keys);
	free(m->idx);
	m->keys = keys;
	m->idx = idx;
	m->cap = cap;
	return 0;
}

/* The index of chunk key's bitmap, created empty if new; -ENOMEM. */
static int64_t chunk_bits(struct chunkmap *m, uint64_t key)
{
	size_t i;
	void *grown;

	if ((m->len + 1) * 2 > m->cap && chunk_grow(m))
		return -ENOMEM;
	for (i = hash(key, m->cap); m->keys[i] != UINT64_MAX; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->idx[i];
	if (m->nbits == m->capbits) {
		grown = realloc(m->bits, (m->capbits ? 2 * m->capbits : 256) * sizeof(*m->bits));
		if (!grown)
			return -ENOMEM;
		m->bits = grown;
		m->capbits = m->capbits ? 2 * m->capbits : 256;
	}
	memset(m->bits[m->nbits], 0, sizeof(m->bits[0]));
	m->keys[i] = key;
	m->idx[i] = (uint32_t)m->nbits;
	m->len++;
	return (int64_t)m->nbits++;
}

static struct stat *slot(struct ms_report *rep, size_t i)
{
	size_t cap;
	struct stat *grown;

	if (i >= rep->cap) {
		cap = rep->cap ? rep->cap : 256;
		while (cap <= i)
			cap *= 2;
		grown = realloc(rep->st, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + rep->cap, 0, (cap - rep->cap) * sizeof(*grown));
		for (size_t k = rep->cap; k < cap; k++)
			grown[k].last_chunk = UINT64_MAX;
		rep->st = grown;
		rep->cap = cap;
	}
	return &rep->st[i];
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_report *rep = ctx;
	size_t i = r ? r->id + 1 : 0;
	uint64_t page = ev->sample.addr >> 12, key, bit, *bits;
	struct stat *s;
	int64_t idx;

	if (ev->time < rep->from || ev->time > rep->to)
		return;
	s = slot(rep, i);
	if (!s) {
		rep->error = -ENOMEM;
		return;
	}
	if (!s->samples++)
		s->first = ev->time;
	s->last = ev->time;
	rep->total++;
	/* Pages: 2^52 of them at most (64-bit addresses), so a key holds slot and chunk. */
	key = ((uint64_t)i << 43) ^ (page / CHUNK_PAGES);
	if (key != s->last_chunk) {
		idx = chunk_bits(&rep->chunks, key);
		if (idx < 0) {
			rep->error = (int)idx;
			s->last_chunk = UINT64_MAX;
			return;
		}
		s->last_chunk = key;
		s->last_idx = (uint32_t)idx;
	}
	bits = rep->chunks.bits[s->last_idx];
	bit = page % CHUNK_PAGES;
	if (!(bits[bit / 64] >> (bit % 64) & 1)) {
		bits[bit / 64] |= 1ULL << (bit % 64);
		s->pages++;
	}
}

MS_EXPORT void ms_report_attach(struct ms_report *rep, struct ms_aspace *as)
{
	struct ms_aspace_listener l = { .charge = on_charge };

	ms_aspace_set_listener(as, &l, rep);
}

MS_EXPORT uint64_t ms_report_total(const struct ms_report *rep)
{
	return rep->total;
}

static const enum ms_report_key *sort_keys;
static size_t sort_nr;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct ms_report_row *a = pa, *b = pb;
	size_t k;
	int c = 0;

	for (k = 0; k < sort_nr && !c; k++) {
		switch (sort_keys[k]) {
		case MS_SORT_SAMPLES: c = cmp_u64(b->samples, a->samples); break;
		case MS_SORT_PAGES: c = cmp_u64(b->pages, a->pages); break;
		case MS_SORT_PID: c = cmp_u64(a->region->pid, b->region->pid); break;
		case MS_SORT_KIND: c = (int)a->region->kind - (int)b->region->kind; break;
		case MS_SORT_NAME: c = strcmp(a->region->name, b->region->name); break;
		case MS_SORT_REGION:
			c = cmp_u64(a->region->pid, b->region->pid);
			if (!c)
				c = cmp_u64(a->region->start, b->region->start);
			break;
		}
	}
	/* Ties: a fixed order, so output is the same on every run. */
	if (!c)
		c = cmp_u64(a->region->id, b->region->id);
	return c;
}

MS_EXPORT int ms_report_rows(struct ms_report *rep, const struct ms_aspace *as,
			     const enum ms_report_key *keys, size_t nr_keys,
			     struct ms_report_row **rows, size_t *nr_rows, struct ms_report_row *unmapped)
{
	size_t n = ms_aspace_nr_regions(as), i;
	struct ms_report_row *out;
	struct stat zero = { 0 }, *s;

	if (rep->error)
		return rep->error;
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s = i + 1 < rep->cap ? &rep->st[i + 1] : &zero;
		out[i] = (struct ms_report_row){ ms_aspace_region(as, i), s->samples, s->pages, s->first, s->last };
	}
	sort_keys = keys;
	sort_nr = nr_keys;
	qsort(out, n, sizeof(*out), cmp_rows);
	s = rep->cap ? &rep->st[0] : &zero;
	*unmapped = (struct ms_report_row){ NULL, s->samples, s->pages, s->first, s->last };
	*rows = out;
	*nr_rows = n;
	return 0;
}

MS_EXPORT void ms_report_free(struct ms_report *rep)
{
	if (!rep)
		return;
	free(rep->chunks.keys);
	free(rep->chunks.idx);
	free(rep->chunks.bits);
	free(rep->st);
	free(rep);
}
