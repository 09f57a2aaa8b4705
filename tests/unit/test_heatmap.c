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

#include "runs.h"

#define P 4096ULL
#define PID 5

/* The value of cell index in a band's sparse cells (0: not filled). */
static uint32_t cell(const struct ms_heatmap_cell *c, size_t n, uint32_t index)
{
	size_t k;

	for (k = 0; k < n; k++) {
		if (k)
			assert_true(c[k - 1].index < c[k].index);   /* by index, each once */
		if (c[k].index == index)
			return c[k].value;
	}
	return 0;
}

static struct ms_event ev(enum ms_event_kind k, uint64_t t)
{
	struct ms_event e = { .kind = k, .time = t, .pid = PID, .tid = PID };

	return e;
}

static void grid_keeps_every_sample(void **state)
{
	struct ms_heatmap *hm = ms_heatmap_new(NULL);
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
	for (sum = 0, k = 0; k < b[0].nr_cells; k++)
		sum += b[0].cells[k].value;
	assert_int_equal(sum, 1000);
	/* A second over 128 columns: the column width doubled from 1 us to 2^k us >= 1 s / 128. */
	assert_true(col_ns * MS_HEATMAP_COLS >= 999000001ULL);
	assert_true(col_ns * MS_HEATMAP_COLS / 2 < 999000001ULL);
	/* 1000 pages over 32 rows: rows of 32 pages. */
	assert_int_equal(b[0].row_bytes, 32 * P);
	/* The first sample (time 1, offset 8) is in the first column and row; the last row holds pages 992-1023. */
	assert_true(cell(b[0].cells, b[0].nr_cells, 0) >= 1);
	for (sum = 0, k = 0; k < MS_HEATMAP_COLS; k++)
		sum += cell(b[0].cells, b[0].nr_cells, (MS_HEATMAP_ROWS - 1) * MS_HEATMAP_COLS + k);
	assert_int_equal(sum, 8);                                /* pages 992 to 999 */
	ms_heatmap_free(hm);
	ms_aspace_free(as);
}

/*
 * Runs of samples through ms_aspace_apply_run fill the same cells as one
 * sample at a time: two regions of two processes, one shown (the map of
 * one pid), columns and rows that double along the way.
 */
static void runs_fill_cells_as_one_by_one(void **state)
{
	static struct ms_event evs[4000];
	const struct ms_heatmap_opts opts = { .pid = PID };   /* the map of one process */
	struct ms_heatmap *hm[2] = { ms_heatmap_new(&opts), ms_heatmap_new(&opts) };
	struct ms_aspace *as[2] = { ms_aspace_new(), ms_aspace_new() };
	struct ms_aspace_listener l[2] = { { .charge = ms_heatmap_analysis.charge },
					   { .charge = ms_heatmap_analysis.charge,
					     .charge_run = ms_heatmap_analysis.charge_run } };
	const struct ms_heatmap_band *b[2];
	struct ms_event m[2] = { ev(MS_EV_MAP, 1), ev(MS_EV_MAP, 1) };
	uint64_t start[2], col_ns[2];
	size_t n[2], i, k;
	int j;

	(void)state;
	for (j = 0; j < 2; j++)
		m[j].map = (struct ms_event_map){ .start = (1 << 20) << j, .end = ((1 << 20) << j) + 2048 * P,
						  .vma_start = (1 << 20) << j,
						  .vma_end = ((1 << 20) << j) + 2048 * P,
						  .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE,
						  .name = "//anon", .via = MS_VIA_MMAP };
	m[1].pid = m[1].tid = PID + 1;
	srand(5);
	for (i = 0; i < 4000; i++) {
		j = (i / 50) % 3 == 2;           /* clusters, a third of them the other process's */
		evs[i] = ev(MS_EV_SAMPLE, 1 + i * 500000);
		evs[i].pid = evs[i].tid = (uint32_t)(PID + j);
		evs[i].sample.addr = (((uint64_t)1 << 20) << j) + (uint64_t)(rand() % 2048) * P + 8;
		evs[i].sample.has_addr = true;
	}
	for (j = 0; j < 2; j++) {
		ms_aspace_set_listener(as[j], &l[j], hm[j]);
		for (k = 0; k < 2; k++)
			assert_int_equal(ms_aspace_apply(as[j], &m[k], NULL), 0);
		apply_in_runs(as[j], evs, 4000, j ? 120 : 0);
		assert_int_equal(ms_heatmap_bands(hm[j], &b[j], &n[j], &start[j], &col_ns[j]), 0);
	}
	assert_int_equal(n[0], 1);                    /* PID's region only */
	assert_int_equal(n[1], n[0]);
	assert_int_equal(col_ns[1], col_ns[0]);
	assert_int_equal(b[1][0].samples, b[0][0].samples);
	assert_true(b[0][0].samples > 2000 && b[0][0].samples < 4000);
	assert_int_equal(b[1][0].row_bytes, b[0][0].row_bytes);
	assert_int_equal(b[1][0].size, b[0][0].size);
	assert_int_equal(b[1][0].nr_cells, b[0][0].nr_cells);
	assert_memory_equal(b[1][0].cells, b[0][0].cells, b[0][0].nr_cells * sizeof(*b[0][0].cells));
	for (j = 0; j < 2; j++) {
		ms_heatmap_free(hm[j]);
		ms_aspace_free(as[j]);
	}
}

/*
 * Ongoing access (record --referenced): a region with no samples gets a
 * band; each interval's share lies over the columns its interval covers
 * and the rows of its range, the busiest where two meet; the heatmap says
 * which evidence it holds.
 */
static void access_shares_per_interval(void **state)
{
	struct ms_heatmap *hm = ms_heatmap_new(NULL);
	struct ms_aspace *as = ms_aspace_new();
	struct ms_aspace_listener l = { .access = ms_heatmap_analysis.access };
	const struct ms_heatmap_band *b;
	struct ms_event m = ev(MS_EV_MAP, 1), a;
	uint64_t start, col_ns, col;
	size_t n;

	(void)state;
	ms_aspace_set_listener(as, &l, hm);
	m.map = (struct ms_event_map){ .start = 1 << 20, .end = (1 << 20) + 32 * P, .vma_start = 1 << 20,
				       .vma_end = (1 << 20) + 32 * P, .prot = PROT_READ | PROT_WRITE,
				       .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	assert_null(ms_heatmap_evidence(hm));
	a = ev(MS_EV_ACCESS, 100);                  /* the first interval, [0, 100): all of the region */
	a.access = (typeof(a.access)){ .start = 1 << 20, .end = (1 << 20) + 32 * P, .interval_ns = 100,
				       .referenced = 8 * P, .source = MS_ACCESS_REFERENCED };
	assert_int_equal(ms_aspace_apply(as, &a, NULL), 0);
	a.time = 200;                               /* the second, [100, 200): its first half only */
	a.access.end = (1 << 20) + 16 * P;
	a.access.referenced = 16 * P;
	assert_int_equal(ms_aspace_apply(as, &a, NULL), 0);
	assert_int_equal(ms_heatmap_bands(hm, &b, &n, &start, &col_ns), 0);
	assert_int_equal(n, 1);
	assert_int_equal(b[0].samples, 0);
	assert_int_equal(b[0].access_events, 2);
	assert_non_null(b[0].access_cells);
	assert_non_null(strstr(ms_heatmap_evidence(hm), "record --referenced"));
	assert_int_equal(b[0].row_bytes, P);
	assert_int_equal(col_ns, 1000);             /* columns of 1 us: both intervals lie in the first */
	/* Both intervals fall in column 0: row 0 holds the busier (all of its half), row 31 the first's quarter. */
	assert_int_equal(cell(b[0].access_cells, b[0].nr_access_cells, 0), MS_HEATMAP_ACCESS_FULL);
	assert_int_equal(cell(b[0].access_cells, b[0].nr_access_cells, 31 * MS_HEATMAP_COLS), MS_HEATMAP_ACCESS_FULL / 4);
	for (col = 1; col < MS_HEATMAP_COLS; col++)
		assert_int_equal(cell(b[0].access_cells, b[0].nr_access_cells, (uint32_t)col), 0);
	ms_heatmap_free(hm);
	ms_aspace_free(as);
}

/* Three regions: at 1, 2 and 3 MiB, with 1, 3 and 5 samples (the busiest last in address order). */
static struct ms_aspace *three_regions(struct ms_heatmap *hm, struct ms_aspace_listener *l)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = ev(MS_EV_MAP, 1), s;
	uint64_t j, k;

	ms_aspace_set_listener(as, l, hm);
	for (j = 1; j <= 3; j++) {
		m.map = (struct ms_event_map){ .start = j << 20, .end = (j << 20) + j * 4 * P, .vma_start = j << 20,
					       .vma_end = (j << 20) + j * 4 * P, .prot = PROT_READ | PROT_WRITE,
					       .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
		assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	}
	for (j = 1; j <= 3; j++)
		for (k = 0; k < 2 * j - 1; k++) {
			s = ev(MS_EV_SAMPLE, 10 + k);
			s.sample.addr = (j << 20) + 8;
			s.sample.has_addr = true;
			assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
		}
	return as;
}

static bool not_at_2mib(const struct ms_region *r, void *ctx)
{
	(void)ctx;
	return r->start != 2 << 20;
}

/* The busiest first by default, by address or size on request; keep, min_share and limit; the totals. */
static void order_keep_share_limit(void **state)
{
	struct ms_aspace_listener l = { .charge = ms_heatmap_analysis.charge };
	struct ms_heatmap_opts o[] = {
		{ 0 }, { .order = MS_HEATMAP_BY_PLACE }, { .order = MS_HEATMAP_BY_SIZE, .limit = 2 },
		{ .min_share = 0.2 }, { .keep = not_at_2mib, .order = MS_HEATMAP_BY_PLACE },
	};
	static const uint64_t want[][3] = { { 5, 3, 1 }, { 1, 3, 5 }, { 5, 3, 0 }, { 5, 3, 0 }, { 1, 5, 0 } };
	const struct ms_heatmap_band *b;
	struct ms_heatmap_totals t;
	struct ms_heatmap *hm;
	struct ms_aspace *as;
	uint64_t start, col_ns;
	size_t i, k, n;

	(void)state;
	for (i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
		hm = ms_heatmap_new(&o[i]);
		as = three_regions(hm, &l);
		assert_int_equal(ms_heatmap_bands(hm, &b, &n, &start, &col_ns), 0);
		assert_int_equal(n, want[i][2] ? 3 : 2);
		for (k = 0; k < n; k++)
			assert_int_equal(b[k].samples, want[i][k]);
		ms_heatmap_totals(hm, &t);
		assert_int_equal(t.samples, 9);             /* every band's, whatever keep left out */
		assert_int_equal(t.bands, i == 4 || i == 3 ? 2 : 3);
		assert_int_equal(t.under_share, i == 3);
		assert_int_equal(ms_heatmap_max(hm), 5);
		ms_heatmap_free(hm);
		ms_aspace_free(as);
	}
}

/* Band a and b alike: figures, cells and marks. */
static void same_band(const struct ms_heatmap_band *a, const struct ms_heatmap_band *b)
{
	size_t k;

	assert_int_equal(a->region->id, b->region->id);          /* two models alike: the same region */
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->row_bytes, b->row_bytes);
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->nr_cells, b->nr_cells);
	assert_memory_equal(a->cells, b->cells, a->nr_cells * sizeof(*a->cells));
	assert_int_equal(a->nr_marks, b->nr_marks);
	for (k = 0; k < a->nr_marks; k++) {
		assert_int_equal(a->marks[k].time_ns, b->marks[k].time_ns);
		assert_int_equal(a->marks[k].col, b->marks[k].col);
		assert_int_equal(a->marks[k].op, b->marks[k].op);
	}
}

/* Three regions' bands (three_regions), with marks: the 1 MiB region's three, one the 8 MiB larger it once was. */
static struct ms_aspace *three_marked(struct ms_heatmap *hm, struct ms_aspace_listener *l)
{
	struct ms_aspace *as = three_regions(hm, l);
	struct ms_change c;
	int j;

	for (j = 0; j < 3; j++) {            /* two marks of the 1 MiB region, one of the 3 MiB */
		c = (struct ms_change){ .op = j == 2 ? MS_OP_UNMAP : MS_OP_MAP, .time_ns = 20 + (uint64_t)j,
					.region = ms_aspace_lookup(as, PID, (j == 2 ? 3 : 1) << 20) };
		assert_non_null(c.region);
		assert_int_equal(ms_heatmap_analysis.change(hm, NULL, NULL, &c), 0);
	}
	c.op = MS_OP_REMAP;
	c.region = ms_aspace_lookup(as, PID, 1 << 20);
	((struct ms_region *)c.region)->end += 8 << 20;      /* it was larger when this change came */
	assert_int_equal(ms_heatmap_analysis.change(hm, NULL, NULL, &c), 0);
	((struct ms_region *)c.region)->end -= 8 << 20;
	return as;
}

/*
 * One band at a time (ms_heatmap_select, ms_heatmap_band) gives the bands
 * ms_heatmap_bands() gives, in its order, each with its marks: the 1 MiB
 * region was 8 MiB larger when a change marked it, so it is the largest.
 */
static void bands_one_at_a_time(void **state)
{
	struct ms_aspace_listener l = { .charge = ms_heatmap_analysis.charge };
	struct ms_heatmap_opts o[] = {
		{ 0 }, { .order = MS_HEATMAP_BY_PLACE }, { .order = MS_HEATMAP_BY_SIZE }, { .limit = 2 },
		{ .keep = not_at_2mib, .order = MS_HEATMAP_BY_SIZE },
	};
	static const uint64_t first[] = { 5, 1, 1, 5, 1 };
	const struct ms_heatmap_band *b, *one;
	struct ms_heatmap *hm[2];
	struct ms_aspace *as[2];
	uint64_t start, col_ns, start2, col_ns2;
	size_t i, k, n, n2;

	(void)state;
	for (i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
		for (k = 0; k < 2; k++) {           /* the same twice: each way on its own */
			hm[k] = ms_heatmap_new(&o[i]);
			as[k] = three_marked(hm[k], &l);
		}
		assert_int_equal(ms_heatmap_select(hm[1], &n2, &start2, &col_ns2), 0);
		assert_int_equal(ms_heatmap_bands(hm[0], &b, &n, &start, &col_ns), 0);
		assert_int_equal(n2, n);
		assert_int_equal(start2, start);
		assert_int_equal(col_ns2, col_ns);
		assert_int_equal(b[0].samples, first[i]);
		assert_int_equal(b[0].nr_marks, first[i] == 1 ? 3 : 1);  /* the 1 MiB region's three, the 3 MiB's one */
		for (k = 0; k < n; k++) {
			assert_non_null(one = ms_heatmap_band(hm[1], k));
			same_band(one, &b[k]);
		}
		assert_null(ms_heatmap_band(hm[1], n));
		for (k = 0; k < 2; k++) {
			ms_heatmap_free(hm[k]);
			ms_aspace_free(as[k]);
		}
	}
}

/* Regions 1 MiB apart, region j with samples[j] samples: the same for each heatmap of hm[]. */
static struct ms_aspace *many_regions(struct ms_heatmap *hm, struct ms_aspace_listener *l, const uint32_t *samples,
				      size_t n)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = ev(MS_EV_MAP, 1), s;
	uint64_t j, k;

	ms_aspace_set_listener(as, l, hm);
	for (j = 0; j < n; j++) {
		m.map = (struct ms_event_map){ .start = (j + 1) << 20, .end = ((j + 1) << 20) + 4 * P,
					       .vma_start = (j + 1) << 20, .vma_end = ((j + 1) << 20) + 4 * P,
					       .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon",
					       .via = MS_VIA_MMAP };
		assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
		for (k = 0; k < samples[j]; k++) {
			s = ev(MS_EV_SAMPLE, 10 + k);
			s.sample.addr = ((j + 1) << 20) + 8;
			s.sample.has_addr = true;
			assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
		}
	}
	return as;
}

/*
 * A limit keeps the busiest bands, ties by place, as the first of all
 * bands sorted would: 300 regions of 1 to 40 samples in a scattered
 * order, many tied, limits of 1, 24 and 299.
 */
static void limit_keeps_the_busiest(void **state)
{
	static const size_t limits[] = { 1, 24, 299 };
	struct ms_aspace_listener l = { .charge = ms_heatmap_analysis.charge };
	const struct ms_heatmap_band *all, *kept;
	struct ms_heatmap *hm[2];
	struct ms_aspace *as[2];
	uint32_t samples[300];
	uint64_t start, col_ns;
	size_t i, j, k, n, nk;

	(void)state;
	for (j = 0; j < 300; j++)
		samples[j] = (uint32_t)(j * 37 % 40) + 1;
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		hm[0] = ms_heatmap_new(NULL);
		hm[1] = ms_heatmap_new(&(struct ms_heatmap_opts){ .limit = limits[i] });
		for (k = 0; k < 2; k++)
			as[k] = many_regions(hm[k], &l, samples, 300);
		assert_int_equal(ms_heatmap_bands(hm[0], &all, &n, &start, &col_ns), 0);
		assert_int_equal(ms_heatmap_bands(hm[1], &kept, &nk, &start, &col_ns), 0);
		assert_int_equal(n, 300);
		assert_int_equal(nk, limits[i]);
		for (k = 0; k < nk; k++)
			same_band(&kept[k], &all[k]);
		for (k = 0; k < 2; k++) {
			ms_heatmap_free(hm[k]);
			ms_aspace_free(as[k]);
		}
	}
}

/*
 * A mark keeps the size its region had when it changed, exactly, the
 * sizes a page count cannot hold too: 5 TiB larger (past the 4 TiB a mark
 * holds in pages), 100 bytes past a page, and 8 MiB larger.
 */
static void marks_keep_their_sizes(void **state)
{
	struct ms_heatmap *hm = ms_heatmap_new(&(struct ms_heatmap_opts){ .order = MS_HEATMAP_BY_PLACE });
	struct ms_aspace_listener l = { .charge = ms_heatmap_analysis.charge };
	struct ms_aspace *as = three_regions(hm, &l);
	static const uint64_t more[3] = { 5ULL << 40, 100, 8 << 20 };
	const struct ms_heatmap_band *b;
	struct ms_change c;
	uint64_t start, col_ns;
	size_t n;
	int j;

	(void)state;
	for (j = 0; j < 3; j++) {            /* the 1, 2 and 3 MiB regions, each larger when it changed */
		c = (struct ms_change){ .op = MS_OP_REMAP, .time_ns = 20 + (uint64_t)j,
					.region = ms_aspace_lookup(as, PID, (uint64_t)(j + 1) << 20) };
		assert_non_null(c.region);
		((struct ms_region *)c.region)->end += more[j];
		assert_int_equal(ms_heatmap_analysis.change(hm, NULL, NULL, &c), 0);
		((struct ms_region *)c.region)->end -= more[j];
	}
	assert_int_equal(ms_heatmap_bands(hm, &b, &n, &start, &col_ns), 0);
	assert_int_equal(n, 3);
	for (j = 0; j < 3; j++) {
		assert_int_equal(b[j].size, b[j].region->end - b[j].region->start + more[j]);
		assert_int_equal(b[j].nr_marks, 1);
		assert_int_equal(b[j].marks[0].op, MS_OP_REMAP);
	}
	ms_heatmap_free(hm);
	ms_aspace_free(as);
}

/*
 * A band touched once early keeps its cell while another's samples widen
 * the columns many times: the doublings reach it when it is next touched
 * or handed out, as if each had reached it at once.
 */
static void late_bands_catch_up(void **state)
{
	struct ms_heatmap *hm = ms_heatmap_new(&(struct ms_heatmap_opts){ .order = MS_HEATMAP_BY_PLACE });
	struct ms_aspace_listener l = { .charge = ms_heatmap_analysis.charge };
	struct ms_aspace *as = three_regions(hm, &l);    /* samples at 10-14 ns: column 0 */
	const struct ms_heatmap_band *b;
	struct ms_event s;
	uint64_t start, col_ns, i;
	size_t n;

	(void)state;
	s = ev(MS_EV_SAMPLE, 100000);                    /* the 1 MiB region at 100 us: column 100 of 1 us */
	s.sample.addr = (1 << 20) + 8;
	s.sample.has_addr = true;
	assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
	for (i = 1; i <= 1000; i++) {                   /* the 3 MiB region, up to 1 s */
		s = ev(MS_EV_SAMPLE, i * 1000000);
		s.sample.addr = (3 << 20) + 8;
		s.sample.has_addr = true;
		assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
	}
	s = ev(MS_EV_SAMPLE, 999000000);                /* the 2 MiB region again, near the end */
	s.sample.addr = (2 << 20) + 8;
	s.sample.has_addr = true;
	assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
	assert_int_equal(ms_heatmap_bands(hm, &b, &n, &start, &col_ns), 0);
	assert_int_equal(n, 3);
	assert_true(col_ns * MS_HEATMAP_COLS >= 1000000000ULL);
	assert_int_equal(b[0].nr_cells, 1);              /* 1 MiB: both its samples now in column 0 */
	assert_int_equal(b[0].cells[0].index, 0);
	assert_int_equal(b[0].cells[0].value, 2);
	assert_int_equal(b[1].nr_cells, 2);              /* 2 MiB: column 0 (3 samples), and the last */
	assert_int_equal(b[1].cells[0].value, 3);
	assert_int_equal(b[1].cells[1].index, 999000000 / col_ns);
	assert_int_equal(b[2].samples, 1005);
	ms_heatmap_free(hm);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grid_keeps_every_sample),
		cmocka_unit_test(runs_fill_cells_as_one_by_one),
		cmocka_unit_test(access_shares_per_interval),
		cmocka_unit_test(order_keep_share_limit),
		cmocka_unit_test(late_bands_catch_up),
		cmocka_unit_test(bands_one_at_a_time),
		cmocka_unit_test(marks_keep_their_sizes),
		cmocka_unit_test(limit_keeps_the_busiest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
