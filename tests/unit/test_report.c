/*
 * The per-region report, fed by the model driven by hand: samples and
 * distinct pages per region, the unmapped row, the time window, the sort
 * keys, and runs of samples counted as one by one.
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

#include <mapscope/report.h>

#define P 4096ULL
#define PID 9

static struct ms_event map_ev(uint64_t t, uint64_t start, uint64_t end)
{
	struct ms_event e = { .kind = MS_EV_MAP, .time = t, .pid = PID, .tid = PID };

	e.map = (struct ms_event_map){ .start = start, .end = end, .vma_start = start, .vma_end = end,
				       .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon",
				       .via = MS_VIA_MMAP };
	return e;
}

static struct ms_event touch(uint64_t t, uint64_t addr)
{
	struct ms_event e = { .kind = MS_EV_SAMPLE, .time = t, .pid = PID, .tid = PID };

	e.sample.addr = addr;
	e.sample.has_addr = true;
	e.sample.fault = true;
	return e;
}

/*
 * Region a (16 pages at 1 MiB): 3 samples on 2 pages at 10-12 ns; region
 * b (4 pages at 2 MiB): 5 samples on its 4 pages (one twice) at 20-24 ns;
 * 2 samples where nothing is mapped, at 30 and 31 ns. runs: the samples go
 * to the model in one run.
 */
static struct ms_aspace *feed(struct ms_report *rep, bool runs)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_aspace_listener l = { .charge = ms_report_analysis.charge,
					.charge_run = ms_report_analysis.charge_run };
	struct ms_event maps[2] = { map_ev(1, 1 << 20, (1 << 20) + 16 * P), map_ev(2, 2 << 20, (2 << 20) + 4 * P) };
	struct ms_event s[10];
	size_t i, n = 0;

	assert_non_null(as);
	ms_aspace_set_listener(as, &l, rep);
	for (i = 0; i < 2; i++)
		assert_int_equal(ms_aspace_apply(as, &maps[i], NULL), 0);
	s[n++] = touch(10, (1 << 20) + 5);
	s[n++] = touch(11, (1 << 20) + 100);
	s[n++] = touch(12, (1 << 20) + 3 * P);
	for (i = 0; i < 5; i++)
		s[n++] = touch(20 + i, (2 << 20) + (i % 4) * P);
	s[n++] = touch(30, 5 << 20);
	s[n++] = touch(31, 6 << 20);
	if (runs)
		assert_int_equal(ms_aspace_apply_run(as, s, n), 0);
	else
		for (i = 0; i < n; i++)
			assert_int_equal(ms_aspace_apply(as, &s[i], NULL), 0);
	ms_aspace_finish(as);
	return as;
}

static void regions_pages_and_unmapped(void **state)
{
	static const enum ms_report_key by_region[] = { MS_SORT_REGION };
	struct ms_report_row *rows, un;
	struct ms_report *rep;
	struct ms_aspace *as;
	size_t n;
	int runs;

	(void)state;
	for (runs = 0; runs < 2; runs++) {
		rep = ms_report_new(0, UINT64_MAX);
		as = feed(rep, runs);
		assert_int_equal(ms_report_rows(rep, as, by_region, 1, &rows, &n, &un), 0);
		assert_int_equal(n, 2);
		assert_int_equal(rows[0].region->start, 1 << 20);
		assert_int_equal(rows[0].samples, 3);
		assert_int_equal(rows[0].pages, 2);
		assert_int_equal(rows[0].first_ns, 10);
		assert_int_equal(rows[0].last_ns, 12);
		assert_int_equal(rows[1].samples, 5);
		assert_int_equal(rows[1].pages, 4);
		assert_int_equal(un.samples, 2);
		assert_int_equal(un.first_ns, 30);
		assert_int_equal(ms_report_total(rep), 10);
		free(rows);
		ms_report_free(rep);
		ms_aspace_free(as);
	}
}

static void window_and_keys(void **state)
{
	static const enum ms_report_key by_samples[] = { MS_SORT_SAMPLES }, by_pages[] = { MS_SORT_PAGES };
	struct ms_report_row *rows, un;
	struct ms_report *rep = ms_report_new(11, 21);
	struct ms_aspace *as = feed(rep, true);
	size_t n;

	(void)state;
	/* 11..21 ns: a's samples at 11 and 12, b's at 20 and 21; none unmapped. */
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	assert_int_equal(ms_report_total(rep), 4);
	assert_int_equal(un.samples, 0);
	assert_int_equal(rows[0].samples, 2);
	assert_int_equal(rows[1].samples, 2);
	free(rows);
	ms_report_free(rep);
	ms_aspace_free(as);

	rep = ms_report_new(0, UINT64_MAX);
	as = feed(rep, false);
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	assert_int_equal(rows[0].region->start, 2 << 20);   /* 5 samples first */
	free(rows);
	assert_int_equal(ms_report_rows(rep, as, by_pages, 1, &rows, &n, &un), 0);
	assert_int_equal(rows[0].pages, 4);
	assert_int_equal(rows[1].pages, 2);
	free(rows);
	ms_report_free(rep);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(regions_pages_and_unmapped),
		cmocka_unit_test(window_and_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
