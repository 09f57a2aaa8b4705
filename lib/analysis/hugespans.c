/*
 * The hugepage advisor's spans (hugespans.h). The indexes hold positions
 * in the array, not the spans: growing it moves 4 bytes a span, and
 * sorting the array marks them stale, to be made again only if counting
 * goes on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/hugepages.h>

#include "analysis/hugespans.h"
#include "util/grow.h"
#include "util/hash.h"

/* Puts span i (not first in its region) in the hash index, which has room. */
static void idx_put(struct ms_hugespans *hs, size_t i)
{
	size_t j;

	for (j = ms_hash64(hs->t[i].key, hs->cap); hs->idx[j]; j = (j + 1) & (hs->cap - 1))
		;
	hs->idx[j] = (uint32_t)i + 1;
	hs->nr_idx++;
}

/* The hash index, made again with cap slots from the spans that are not first in their region. */
static int idx_build(struct ms_hugespans *hs, size_t cap)
{
	uint32_t *idx = calloc(cap, sizeof(*idx));
	size_t i;

	if (!idx)
		return -ENOMEM;
	free(hs->idx);
	hs->idx = idx;
	hs->cap = cap;
	hs->nr_idx = 0;
	for (i = 0; i < hs->len; i++)
		if (hs->first[hs->t[i].key >> 32] != i + 1)
			idx_put(hs, i);
	return 0;
}

/* Both indexes made again after a sort: a region's first span is its lowest. */
static int reindex(struct ms_hugespans *hs)
{
	size_t i, id;

	if (hs->first)
		memset(hs->first, 0, hs->cap_first * sizeof(*hs->first));
	for (i = 0; i < hs->len; i++) {
		id = hs->t[i].key >> 32;
		if (MS_GROW(hs->first, id + 1, hs->cap_first, 256, SIZE_MAX, true))
			return -ENOMEM;
		if (!hs->first[id])
			hs->first[id] = (uint32_t)i + 1;
	}
	if (hs->idx && idx_build(hs, hs->cap))
		return -ENOMEM;
	hs->stale = false;
	return 0;
}

/* Span key in the hash index, or NULL. */
static struct span *idx_find(struct ms_hugespans *hs, uint64_t key)
{
	size_t i;

	if (!hs->idx)
		return NULL;
	for (i = ms_hash64(key, hs->cap); hs->idx[i]; i = (i + 1) & (hs->cap - 1))
		if (hs->t[hs->idx[i] - 1].key == key)
			return &hs->t[hs->idx[i] - 1];
	return NULL;
}

/* A new span of key, not its region's first: the hash index has room for it. NULL without memory. */
static struct span *add_other(struct ms_hugespans *hs, uint64_t key)
{
	size_t cap = hs->cap ? hs->cap : 256;

	while ((hs->nr_idx + 1) * 2 > cap)
		cap *= 2;
	if ((cap != hs->cap || !hs->idx) && idx_build(hs, cap))
		return NULL;
	if (MS_GROW(hs->t, hs->len + 1, hs->cap_t, 256, SIZE_MAX, false))
		return NULL;
	hs->t[hs->len] = (struct span){ .key = key };
	idx_put(hs, hs->len++);
	return &hs->t[hs->len - 1];
}

struct span *ms_hugespans_find(struct ms_hugespans *hs, uint64_t key, bool create)
{
	size_t id = key >> 32;
	uint32_t f;
	struct span *s;

	if (hs->stale && reindex(hs))
		return NULL;
	f = id < hs->cap_first ? hs->first[id] : 0;
	if (f && hs->t[f - 1].key == key)
		return &hs->t[f - 1];
	if (f && (s = idx_find(hs, key)))
		return s;
	if (!create || hs->len >= UINT32_MAX - 1)
		return NULL;
	if (f)
		return add_other(hs, key);
	if (MS_GROW(hs->first, id + 1, hs->cap_first, 256, SIZE_MAX, true) ||
	    MS_GROW(hs->t, hs->len + 1, hs->cap_t, 256, SIZE_MAX, false))
		return NULL;
	hs->t[hs->len] = (struct span){ .key = key };
	hs->first[id] = (uint32_t)++hs->len;
	return &hs->t[hs->len - 1];
}

bool ms_hugespans_has(const struct ms_hugespans *hs, const struct span *s, uint32_t page)
{
	if (!s->map)
		return s->pages && s->page == page;
	return hs->maps[s->map - 1][page / 64] >> (page % 64) & 1;
}

int ms_hugespans_add(struct ms_hugespans *hs, struct span *s, uint32_t page)
{
	if (!s->map && s->pages) {           /* a second page: the span gets its map */
		if (hs->nr_maps >= UINT32_MAX - 1 ||
		    MS_GROW(hs->maps, hs->nr_maps + 1, hs->cap_maps, 256, SIZE_MAX, false))
			return -ENOMEM;
		memset(hs->maps[hs->nr_maps], 0, sizeof(hs->maps[0]));
		hs->maps[hs->nr_maps][s->page / 64] |= 1ULL << (s->page % 64);
		s->map = (uint32_t)++hs->nr_maps;
	}
	if (s->map)
		hs->maps[s->map - 1][page / 64] |= 1ULL << (page % 64);
	else
		s->page = (uint16_t)page;
	s->pages++;
	return 0;
}

void ms_hugespans_drop(struct ms_hugespans *hs, struct span *s, uint32_t page)
{
	if (s->map)                /* with no map, the one page goes with the count */
		hs->maps[s->map - 1][page / 64] &= ~(1ULL << (page % 64));
	s->pages--;
}

/* A page that mremap moved: where to, and the pages it stands for (estimated, could be). */
struct moved {
	uint64_t addr, est, upper;
};

/*
 * Span s had before pages; the m = before - s->pages last of mv are those
 * that left it: they take their share of its estimates, spread exactly
 * over them, and its counts go into share (faults, samples, TLB misses).
 */
static void move_share(struct span *s, uint32_t before, struct moved *mv, uint64_t share[3])
{
	uint64_t *c[3] = { &s->faults, &s->samples, &s->tlb }, m = before - s->pages, k, x;
	uint64_t est = s->est * m / before, upper = s->upper * m / before;
	int i;

	for (i = 0; i < 3; i++) {
		x = *c[i] * m / before;
		*c[i] -= x;
		share[i] += x;
	}
	for (k = 0; k < m; k++) {
		mv[k].est = est * (k + 1) / m - est * k / m;
		mv[k].upper = upper * (k + 1) / m - upper * k / m;
	}
	s->est -= est;
	s->upper -= upper;
}

/* The pages of region id that ms_hugespans_move() took, put where they went; the counts go with the first. */
static int land(struct ms_hugespans *hs, uint32_t id, const struct moved *mv, size_t n, const uint64_t share[3])
{
	struct span *t;
	uint32_t page;
	uint64_t key;
	size_t b;

	for (b = 0; b < n; b++) {
		key = ((uint64_t)id + 1) << 32 | ((mv[b].addr / MS_HUGE_SPAN) & 0xffffffffULL);
		if (!(t = ms_hugespans_find(hs, key, true)))
			return -ENOMEM;
		page = (uint32_t)((mv[b].addr % MS_HUGE_SPAN) >> 12);
		if (!ms_hugespans_has(hs, t, page)) {
			if (ms_hugespans_add(hs, t, page))
				return -ENOMEM;
			t->est += mv[b].est;
			t->upper += mv[b].upper;
		}
		if (b == 0) {
			t->faults += share[0];
			t->samples += share[1];
			t->tlb += share[2];
		}
	}
	return 0;
}

int ms_hugespans_move(struct ms_hugespans *hs, uint32_t id, uint64_t os, uint64_t oe, uint64_t new_start)
{
	uint64_t delta = new_start - os, first = os / MS_HUGE_SPAN, last = (oe - 1) / MS_HUGE_SPAN;
	uint64_t idx, addr, share[3] = { 0 };
	struct moved *mv = NULL;
	size_t nmoved = 0, cap = 0, from;
	struct span *s;
	uint32_t page, before;
	int err;

	if (oe <= os || delta == 0 || last - first > hs->len + 1)
		return 0;            /* no move, or a range larger than every span there is */
	for (idx = first; idx <= last; idx++) {
		s = ms_hugespans_find(hs, ((uint64_t)id + 1) << 32 | (idx & 0xffffffffULL), false);
		if (!s || !s->pages)
			continue;
		before = s->pages;
		from = nmoved;
		for (page = 0; page < 512; page++) {
			addr = idx * MS_HUGE_SPAN + (uint64_t)page * 4096;
			if (addr < os || addr >= oe || !ms_hugespans_has(hs, s, page))
				continue;
			if (MS_GROW(mv, nmoved + 1, cap, 512, SIZE_MAX, false)) {
				free(mv);
				return -ENOMEM;
			}
			mv[nmoved++].addr = addr + delta;
			ms_hugespans_drop(hs, s, page);
		}
		if (nmoved > from)
			move_share(s, before, mv + from, share);
	}
	err = land(hs, id, mv, nmoved, share);
	free(mv);
	return err;
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key;
}

/* Spans are made as regions are, mostly in order: a sorted array is left as it is (qsort copies it whole). */
void ms_hugespans_sort(struct ms_hugespans *hs)
{
	size_t i;

	for (i = 1; i < hs->len && hs->t[i - 1].key < hs->t[i].key; i++)
		;
	if (i >= hs->len)
		return;
	hs->stale = true;
	qsort(hs->t, hs->len, sizeof(*hs->t), cmp_span);
}

void ms_hugespans_release(struct ms_hugespans *hs)
{
	free(hs->t);
	free(hs->first);
	free(hs->idx);
	free(hs->maps);
	memset(hs, 0, sizeof(*hs));
}
