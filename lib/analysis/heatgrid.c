/*
 * A heatmap band's grid, sparse until it fills. Most regions of a big
 * recording are touched in a few cells: their pairs cost bytes where a
 * dense grid costs 16 KiB, and scaling them walks what is there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heatgrid.h"
#include "util/grow.h"

static inline uint32_t merge(uint32_t a, uint32_t b, enum hg_merge m)
{
	if (m == HG_MAX)
		return a > b ? a : b;
	return a + b;
}

static inline struct ms_heatmap_cell *pairs_of(struct hg *g)
{
	return g->cap ? g->pairs : &g->one;
}

static inline const struct ms_heatmap_cell *cpairs_of(const struct hg *g)
{
	return g->cap ? g->pairs : &g->one;
}

/* The first pair at or past index. */
static size_t lower(const struct hg *g, uint32_t index)
{
	const struct ms_heatmap_cell *p = cpairs_of(g);
	size_t lo = 0, hi = g->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pairs become a plain array: past HG_SPARSE_MAX, a lookup and an insertion cost too much. */
static int densify(struct hg *g)
{
	uint32_t *d = calloc(HG_CELLS, sizeof(*d));
	size_t i;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < g->n; i++)
		d[pairs_of(g)[i].index] = pairs_of(g)[i].value;
	if (g->cap)
		free(g->pairs);
	g->dense = d;
	g->n = 0;
	g->cap = HG_DENSE;
	return 0;
}

/* Room for one more pair: the first two move out of one into an array. */
static int room(struct hg *g)
{
	struct ms_heatmap_cell *p;
	size_t cap = g->cap;

	if (!g->cap && g->n) {
		if (!(p = malloc(4 * sizeof(*p))))
			return -ENOMEM;
		p[0] = g->one;
		g->pairs = p;
		g->cap = 4;
		return 0;
	}
	if (!g->cap)
		return 0;
	if (MS_GROW(g->pairs, (size_t)g->n + 1, cap, 4, HG_SPARSE_MAX, false))
		return -ENOMEM;
	g->cap = (uint16_t)cap;
	return 0;
}

int hg_add(struct hg *g, uint32_t index, uint32_t v, enum hg_merge m)
{
	struct ms_heatmap_cell *p;
	size_t i;

	if (index >= HG_CELLS)
		return -EINVAL;
	if (hg_dense(g)) {
		g->dense[index] = merge(g->dense[index], v, m);
		return 0;
	}
	i = lower(g, index);
	p = pairs_of(g);
	if (i < g->n && p[i].index == index) {
		p[i].value = merge(p[i].value, v, m);
		return 0;
	}
	if (g->n == HG_SPARSE_MAX) {
		if (densify(g))
			return -ENOMEM;
		return hg_add(g, index, v, m);
	}
	if (room(g))
		return -ENOMEM;
	p = pairs_of(g);
	memmove(p + i + 1, p + i, (g->n - i) * sizeof(*p));
	p[i] = (struct ms_heatmap_cell){ .index = index, .value = v };
	g->n++;
	return 0;
}

uint32_t hg_get(const struct hg *g, uint32_t index)
{
	const struct ms_heatmap_cell *p;
	size_t i;

	if (index >= HG_CELLS)
		return 0;
	if (hg_dense(g))
		return g->dense[index];
	i = lower(g, index);
	p = cpairs_of(g);
	return i < g->n && p[i].index == index ? p[i].value : 0;
}

static inline uint32_t scaled(uint32_t index, unsigned int cols, unsigned int rows)
{
	return (index / MS_HEATMAP_COLS >> rows) * MS_HEATMAP_COLS + (index % MS_HEATMAP_COLS >> cols);
}

static int by_index(const void *pa, const void *pb)
{
	const struct ms_heatmap_cell *a = pa, *b = pb;

	return a->index < b->index ? -1 : a->index > b->index;
}

void hg_scale(struct hg *g, unsigned int cols, unsigned int rows, enum hg_merge m)
{
	uint32_t tmp[HG_CELLS];
	struct ms_heatmap_cell *p;
	size_t i, k;

	if (!cols && !rows)
		return;
	cols = cols > 31 ? 31 : cols;
	rows = rows > 31 ? 31 : rows;
	if (hg_dense(g)) {
		memset(tmp, 0, sizeof(tmp));
		for (i = 0; i < HG_CELLS; i++)
			if (g->dense[i])
				tmp[scaled((uint32_t)i, cols, rows)] = merge(tmp[scaled((uint32_t)i, cols, rows)],
									     g->dense[i], m);
		memcpy(g->dense, tmp, sizeof(tmp));
		return;
	}
	p = pairs_of(g);
	for (i = 0; i < g->n; i++)
		p[i].index = scaled(p[i].index, cols, rows);
	/* Narrower columns keep the order (rows stay, columns only fall); fewer rows interleave them. */
	if (rows)
		qsort(p, g->n, sizeof(*p), by_index);
	for (i = 0, k = 0; i < g->n; i++) {
		if (k && p[k - 1].index == p[i].index)
			p[k - 1].value = merge(p[k - 1].value, p[i].value, m);
		else
			p[k++] = p[i];
	}
	g->n = (uint16_t)k;
}

int hg_cells(const struct hg *g, const struct ms_heatmap_cell **cells, size_t *n, struct ms_heatmap_cell **out)
{
	struct ms_heatmap_cell *o;
	size_t i, k = 0;

	if (!hg_dense(g)) {
		*cells = cpairs_of(g);
		*n = g->n;
		return 0;
	}
	if (!(o = realloc(*out, HG_CELLS * sizeof(*o))))
		return -ENOMEM;
	*out = o;
	for (i = 0; i < HG_CELLS; i++)
		if (g->dense[i])
			o[k++] = (struct ms_heatmap_cell){ .index = (uint32_t)i, .value = g->dense[i] };
	*cells = o;
	*n = k;
	return 0;
}

/* g's values merged as m says, from 0: their sum or their largest. */
static uint64_t fold(const struct hg *g, enum hg_merge m)
{
	const struct ms_heatmap_cell *p = cpairs_of(g);
	uint64_t v = 0;
	size_t i;

	if (hg_dense(g)) {
		for (i = 0; i < HG_CELLS; i++)
			v = m == HG_SUM ? v + g->dense[i] : g->dense[i] > v ? g->dense[i] : v;
		return v;
	}
	for (i = 0; i < g->n; i++)
		v = m == HG_SUM ? v + p[i].value : p[i].value > v ? p[i].value : v;
	return v;
}

uint64_t hg_sum(const struct hg *g)
{
	return fold(g, HG_SUM);
}

uint32_t hg_max(const struct hg *g)
{
	return (uint32_t)fold(g, HG_MAX);
}

void hg_release(struct hg *g)
{
	if (hg_dense(g))
		free(g->dense);
	else if (g->cap)
		free(g->pairs);
	memset(g, 0, sizeof(*g));
}
