/*
 * A band's grid: sparse pairs by index, each cell once, that turn dense
 * when they outgrow HG_SPARSE_MAX and read the same either way; scaling
 * merges cells as the doubling of columns and rows says (samples add up,
 * access shares keep the most); a grid of one cell allocates nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/heatgrid.h"

#define IX(row, col) ((uint32_t)(row) * MS_HEATMAP_COLS + (uint32_t)(col))

static uint64_t sum(struct hg *g)
{
	const struct ms_heatmap_cell *c;
	struct ms_heatmap_cell *out = NULL;
	uint64_t s = 0;
	size_t n, k;

	assert_int_equal(hg_cells(g, &c, &n, &out), 0);
	for (k = 0; k < n; k++) {
		if (k)
			assert_true(c[k - 1].index < c[k].index);
		assert_true(c[k].value > 0);
		s += c[k].value;
	}
	free(out);
	return s;
}

static void one_cell_allocates_nothing(void **state)
{
	struct hg g = { 0 };

	(void)state;
	assert_int_equal(hg_add(&g, IX(3, 7), 1, HG_SUM), 0);
	assert_int_equal(hg_add(&g, IX(3, 7), 4, HG_SUM), 0);
	assert_false(hg_holds_memory(&g));
	assert_int_equal(sizeof(g), 16);                          /* one a band, 500,000 bands: kept small */
	assert_int_equal(hg_get(&g, IX(3, 7)), 5);
	assert_int_equal(hg_get(&g, IX(3, 8)), 0);
	assert_int_equal(hg_add(&g, IX(0, 1), 2, HG_SUM), 0);     /* a second: an array, in index order */
	assert_true(hg_holds_memory(&g));
	assert_false(hg_dense(&g));
	assert_int_equal(g.pairs[0].index, IX(0, 1));
	assert_int_equal(g.pairs[1].index, IX(3, 7));
	assert_int_equal(hg_get(&g, IX(3, 7)), 5);
	assert_int_equal(hg_add(&g, HG_CELLS, 1, HG_SUM), -EINVAL);
	assert_int_equal(hg_max(&g), 5);
	assert_int_equal(hg_sum(&g), 7);
	hg_release(&g);
}

/* Every cell once, in a scattered order: sparse up to HG_SPARSE_MAX, dense past it, the same values. */
static void sparse_then_dense(void **state)
{
	struct hg g = { 0 };
	uint32_t i, ix;

	(void)state;
	for (i = 0; i < HG_CELLS; i++) {
		ix = (i * 2654435761u) % HG_CELLS;            /* a permutation: 2654435761 is odd */
		assert_int_equal(hg_add(&g, ix, ix + 1, HG_SUM), 0);
		if (i + 1 == HG_SPARSE_MAX) {
			assert_false(hg_dense(&g));
			assert_int_equal(g.n, HG_SPARSE_MAX);
		}
	}
	assert_true(hg_dense(&g));
	for (i = 0; i < HG_CELLS; i++)
		assert_int_equal(hg_get(&g, i), i + 1);
	assert_int_equal(sum(&g), (uint64_t)HG_CELLS * (HG_CELLS + 1) / 2);
	assert_int_equal(hg_sum(&g), (uint64_t)HG_CELLS * (HG_CELLS + 1) / 2);
	assert_int_equal(hg_max(&g), HG_CELLS);
	hg_release(&g);
}

/* Columns twice and four times as wide, rows twice as tall: sums add up, shares keep the most; sparse and dense alike. */
static void scaling_merges(void **state)
{
	struct hg s = { 0 }, m = { 0 }, d = { 0 };
	uint32_t col, row;

	(void)state;
	for (row = 0; row < 4; row++)
		for (col = 0; col < 8; col++) {
			assert_int_equal(hg_add(&s, IX(row, col), 1 + col, HG_SUM), 0);
			assert_int_equal(hg_add(&m, IX(row, col), 1 + col, HG_MAX), 0);
		}
	for (row = 0; row < MS_HEATMAP_ROWS; row++)             /* past HG_SPARSE_MAX: dense */
		for (col = 0; col < MS_HEATMAP_COLS; col++)
			assert_int_equal(hg_add(&d, IX(row, col), 1, HG_SUM), 0);
	assert_true(hg_dense(&d));
	hg_scale(&s, 2, 0, HG_SUM);          /* columns 0-3 -> 0, 4-7 -> 1 */
	hg_scale(&m, 2, 0, HG_MAX);
	assert_int_equal(s.n, 8);
	assert_int_equal(hg_get(&s, IX(2, 0)), 1 + 2 + 3 + 4);
	assert_int_equal(hg_get(&s, IX(2, 1)), 5 + 6 + 7 + 8);
	assert_int_equal(hg_get(&m, IX(2, 1)), 8);
	hg_scale(&s, 0, 1, HG_SUM);          /* rows 0-1 -> 0, 2-3 -> 1 */
	assert_int_equal(s.n, 4);
	assert_int_equal(hg_get(&s, IX(1, 1)), 2 * 26);
	assert_int_equal(sum(&s), 4 * 36);
	assert_int_equal(hg_sum(&s), 4 * 36);
	hg_scale(&d, 1, 1, HG_SUM);
	assert_int_equal(hg_get(&d, IX(0, 0)), 4);
	assert_int_equal(hg_get(&d, IX(MS_HEATMAP_ROWS / 2 - 1, MS_HEATMAP_COLS / 2 - 1)), 4);
	assert_int_equal(hg_get(&d, IX(MS_HEATMAP_ROWS / 2, 0)), 0);
	assert_int_equal(sum(&d), HG_CELLS);
	hg_release(&s);
	hg_release(&m);
	hg_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_cell_allocates_nothing),
		cmocka_unit_test(sparse_then_dense),
		cmocka_unit_test(scaling_merges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
