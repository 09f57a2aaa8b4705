/*
 * Internal: one band's grid of MS_HEATMAP_ROWS x MS_HEATMAP_COLS cells,
 * sparse while few cells are filled (a sorted array of index, value
 * pairs) and a plain array once it fills. A recording of 500,000 regions
 * touched once each costs a pair per region, not 16 KiB.
 */
#ifndef MS_ANALYSIS_HEATGRID_H
#define MS_ANALYSIS_HEATGRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/heatmap.h>

#define HG_CELLS (MS_HEATMAP_ROWS * MS_HEATMAP_COLS)
/* Pairs kept before the grid turns dense: an insertion then moves 4 KiB at most. */
#define HG_SPARSE_MAX 512

/* How two values of one cell merge: samples add up, access shares keep the most. */
enum hg_merge { HG_SUM, HG_MAX };

/*
 * Zeroed: an empty grid. 16 bytes, and no allocation for a grid of one
 * cell (most bands have one): the cell lies where the array's pointer
 * would, and cap says which of the three the grid is.
 */
struct hg {
	union {
		struct ms_heatmap_cell one;      /* cap 0: the only cell, where n is 1 */
		struct ms_heatmap_cell *pairs;   /* cap 4 to HG_SPARSE_MAX: by index */
		uint32_t *dense;                 /* cap HG_DENSE: [HG_CELLS] */
	};
	uint16_t n, cap;                         /* pairs (sparse) */
	uint8_t owner[4];                        /* its owner's, never touched here: room a struct would pad */
};

#define HG_DENSE UINT16_MAX

/* Whether g is a plain array of every cell. */
static inline bool hg_dense(const struct hg *g)
{
	return g->cap == HG_DENSE;
}

/* Whether g holds memory of its own, pairs or a dense grid, that hg_release() frees. */
static inline bool hg_holds_memory(const struct hg *g)
{
	return g->cap != 0;
}

/* Merges v into cell index (row * MS_HEATMAP_COLS + col). 0, or -ENOMEM with g unchanged. */
int hg_add(struct hg *g, uint32_t index, uint32_t v, enum hg_merge m);

/* The value of cell index (0: empty). */
uint32_t hg_get(const struct hg *g, uint32_t index);

/* Columns 2^cols and rows 2^rows times as wide: cell (row, col) moves to (row >> rows, col >> cols). */
void hg_scale(struct hg *g, unsigned int cols, unsigned int rows, enum hg_merge m);

/*
 * The filled cells, by index, into *cells and *n: borrowed from g (or, for
 * a dense grid, made in *out, the caller's to free, reallocated) until the
 * next change of g or *out. 0, or -ENOMEM with *out as it was.
 */
int hg_cells(const struct hg *g, const struct ms_heatmap_cell **cells, size_t *n, struct ms_heatmap_cell **out);

/* The sum of g's values: a band's samples, which it need not keep beside its cells. */
uint64_t hg_sum(const struct hg *g);

/* The largest value of g (0: empty). */
uint32_t hg_max(const struct hg *g);

/* Frees what g holds; g is then empty. */
void hg_release(struct hg *g);

#endif
