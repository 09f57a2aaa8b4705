/*
 * The hugepage advisor's spans (hugespans.h). The index holds positions
 * in the array, not the spans: growing it moves 4 bytes a span, and
 * sorting the array drops it, to be made again only if counting goes on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hugespans.h"
#include "util/grow.h"
#include "util/hash.h"

/* The hash index, made again with cap slots. */
static int index_build(struct ms_hugespans *hs, size_t cap)
{
	uint32_t *idx = calloc(cap, sizeof(*idx));
	size_t i, j;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < hs->len; i++) {
		for (j = ms_hash64(hs->t[i].key, cap); idx[j]; j = (j + 1) & (cap - 1))
			;
		idx[j] = (uint32_t)i + 1;
	}
	free(hs->idx);
	hs->idx = idx;
	hs->cap = cap;
	return 0;
}

struct span *ms_hugespans_find(struct ms_hugespans *hs, uint64_t key, bool create)
{
	size_t cap = hs->cap ? hs->cap : 256, i;

	while ((hs->len + 1) * 2 > cap)
		cap *= 2;
	if ((!hs->idx || cap != hs->cap) && (hs->len || create)) {
		if (hs->len >= UINT32_MAX - 1 || index_build(hs, cap))
			return NULL;
	}
	if (!hs->idx)
		return NULL;
	for (i = ms_hash64(key, hs->cap); hs->idx[i]; i = (i + 1) & (hs->cap - 1))
		if (hs->t[hs->idx[i] - 1].key == key)
			return &hs->t[hs->idx[i] - 1];
	if (!create || MS_GROW(hs->t, hs->len + 1, hs->cap_t, 256, SIZE_MAX, false))
		return NULL;
	hs->t[hs->len] = (struct span){ .key = key };
	hs->idx[i] = (uint32_t)++hs->len;
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

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key;
}

void ms_hugespans_sort(struct ms_hugespans *hs)
{
	free(hs->idx);
	hs->idx = NULL;
	if (hs->len)
		qsort(hs->t, hs->len, sizeof(*hs->t), cmp_span);
}

void ms_hugespans_release(struct ms_hugespans *hs)
{
	free(hs->t);
	free(hs->idx);
	free(hs->maps);
	memset(hs, 0, sizeof(*hs));
}
