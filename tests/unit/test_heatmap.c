/*
 * The heatmap's grid, fed by the model driven by hand: every sample lands
 * in one cell, whatever the doublings of columns (time) and rows (offset)
 * it took; cells sit where their time and offset say; marks get their
 * column; regions without samples have no band.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/heatmap.h>

#define P 4096ULL
#define PID 5

static struct ms_event ev(enum ms_event_kind k, uint64_t t)
{
	struct ms_event e = { .kind = k, .time = t, .pid = PID, .tid = PID };

	return e;
}

static void grid_keeps_every_sample(void **state)
{
	struct ms_heatmap *hm = ms_heatmap_new(0);
	struct ms_aspace *as = ms_aspace_new();
	struct ms_aspace_listener l = { .charge = ms_heatmap_analysis.charge };
	const struct ms_heatmap_band *b;
	struct ms_event m = ev(MS_EV_MAP, 1), s;
	uint64_t start, col_ns, sum;
	size_t n, i, k;

	(void)state;
	ms_aspace_set_listener(as, &l, hm);
	m.map = (struct ms_event_map){ .start = 1 << 20, .end = (1 << 20) + 1024 * P, .vma_start = 1 << 20,
				       .vma_end = (1 << 20) + 1024 * P, .prot = PROT_READ | PROT_WRITE,
				       .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	m.map.start = m.map.vma_start = 8 << 20;
	m.map.end = m.map.vma_end = (8 << 20) + 4 * P;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);   /* a region no sample touches */
	/* No session here: the time axis starts at 0, before every event. */
	for (i = 0; i < 1000; i++) {
		s = ev(MS_EV_SAMPLE, 1 + i * 1000000);           /* 1 ms apart: a second in all */
		s.sample.addr = (1 << 20) + (i % 1024) * P + 8;
		s.sample.has_addr = true;
		assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
	}
	assert_int_equal(ms_heatmap_bands(hm, &b, &n, &start, &col_ns), 0);
	assert_int_equal(n, 1);                                  /* the untouched region has no band */
	assert_int_equal(b[0].samples, 1000);
	for (sum = 0, k = 0; k < MS_HEATMAP_ROWS * MS_HEATMAP_COLS; k++)
		sum += b[0].cells[k];
	assert_int_equal(sum, 1000);
	/* A second over 128 columns: the column width doubled from 1 us to 2^k us >= 1 s / 128. */
	assert_true(col_ns * MS_HEATMAP_COLS >= 999000001ULL);
	assert_true(col_ns * MS_HEATMAP_COLS / 2 < 999000001ULL);
	/* 1000 pages over 32 rows: rows of 32 pages. */
	assert_int_equal(b[0].row_bytes, 32 * P);
	/* The first sample (time 1, offset 8) is in the first column and row; the last row holds pages 992-1023. */
	assert_true(b[0].cells[0] >= 1);
	for (sum = 0, k = 0; k < MS_HEATMAP_COLS; k++)
		sum += b[0].cells[(MS_HEATMAP_ROWS - 1) * MS_HEATMAP_COLS + k];
	assert_int_equal(sum, 8);                                /* pages 992 to 999 */
	ms_heatmap_free(hm);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grid_keeps_every_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
