/*
 * Ongoing access per region (analysis/access.h): the charges of one time
 * are one interval; referenced bytes give the mean and the peak over
 * intervals; a VMA over two regions is shared by size; DAMON's ranges count
 * whole where accessed at all, and their accesses; the share of a region hot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/access.h"

#define P 4096ULL
#define A 0x10000000ULL

static struct ms_event ref(uint64_t t, uint64_t start, uint64_t end, uint64_t referenced)
{
	struct ms_event ev = { .kind = MS_EV_ACCESS, .time = t, .pid = 7 };

	ev.access.source = MS_ACCESS_REFERENCED;
	ev.access.start = start;
	ev.access.end = end;
	ev.access.interval_ns = 100;
	ev.access.referenced = referenced;
	return ev;
}

static void mean_and_peak_over_intervals(void **state)
{
	struct ms_region r = { .id = 3, .start = A, .end = A + 100 * P };
	struct ms_access_table t;
	const struct ms_access_stat *a;
	struct ms_event ev;

	(void)state;
	ms_access_table_init(&t);
	assert_null(ms_access_table_evidence(&t));
	/* Two VMAs of the region in one sampling: one interval of 30 pages. */
	ev = ref(100, A, A + 50 * P, 10 * P);
	ms_access_table_charge(&t, &ev, &r, A, A + 50 * P);
	ev = ref(100, A + 50 * P, A + 100 * P, 20 * P);
	ms_access_table_charge(&t, &ev, &r, A + 50 * P, A + 100 * P);
	ev = ref(200, A, A + 100 * P, 90 * P);
	ms_access_table_charge(&t, &ev, &r, A, A + 100 * P);
	ev = ref(300, A, A + 100 * P, 0);
	ms_access_table_charge(&t, &ev, &r, A, A + 100 * P);
	ms_access_table_settle(&t);
	a = ms_access_table_get(&t, 3);
	assert_non_null(a);
	assert_null(ms_access_table_get(&t, 2));
	assert_int_equal(a->intervals, 3);
	assert_int_equal(ms_access_ref_pages_mean(a), 40);
	assert_int_equal(ms_access_ref_pages_peak(a), 90);
	assert_true(ms_access_hot_share(a) > 0.399 && ms_access_hot_share(a) < 0.401);
	assert_int_equal(a->accesses, 0);
	assert_non_null(strstr(ms_access_table_evidence(&t), "record --referenced"));
	ms_access_table_release(&t);
}

/* One kernel VMA over two regions (merged): each gets the referenced bytes in proportion to its part. */
static void a_vma_over_two_regions_is_shared(void **state)
{
	struct ms_region r1 = { .id = 0, .start = A, .end = A + 30 * P }, r2 = { .id = 1, .start = A + 30 * P,
										  .end = A + 40 * P };
	struct ms_event ev = ref(100, A, A + 40 * P, 20 * P);
	struct ms_access_table t;

	(void)state;
	ms_access_table_init(&t);
	ms_access_table_charge(&t, &ev, &r1, A, A + 30 * P);
	ms_access_table_charge(&t, &ev, &r2, A + 30 * P, A + 40 * P);
	ms_access_table_charge(&t, &ev, NULL, A + 40 * P, A + 50 * P);   /* nothing mapped: nobody's */
	ms_access_table_settle(&t);
	assert_int_equal(ms_access_ref_pages_mean(ms_access_table_get(&t, 0)), 15);
	assert_int_equal(ms_access_ref_pages_mean(ms_access_table_get(&t, 1)), 5);
	ms_access_table_release(&t);
}

/* DAMON: a range accessed at all counts whole as hot, and its nr_accesses as accesses; not as referenced. */
static void damon_counts_accessed_ranges(void **state)
{
	struct ms_region r = { .id = 0, .start = A, .end = A + 100 * P };
	struct ms_event ev = { .kind = MS_EV_ACCESS, .time = 100, .pid = 7 };
	struct ms_access_table t;
	const struct ms_access_stat *a;

	(void)state;
	ev.access.source = MS_ACCESS_DAMON;
	ev.access.start = A;
	ev.access.end = A + 25 * P;
	ev.access.nr_accesses = 5;
	ev.access.max_nr_accesses = 20;
	ms_access_table_init(&t);
	ms_access_table_charge(&t, &ev, &r, A, A + 25 * P);
	ev.access.start = A + 25 * P;
	ev.access.end = A + 100 * P;
	ev.access.nr_accesses = 0;
	ms_access_table_charge(&t, &ev, &r, A + 25 * P, A + 100 * P);
	ms_access_table_settle(&t);
	a = ms_access_table_get(&t, 0);
	assert_int_equal(a->intervals, 1);
	assert_int_equal(a->accesses, 5);
	assert_int_equal(ms_access_ref_pages_mean(a), 0);
	assert_true(ms_access_hot_share(a) > 0.249 && ms_access_hot_share(a) < 0.251);
	assert_non_null(strstr(ms_access_table_evidence(&t), "DAMON"));
	ms_access_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mean_and_peak_over_intervals),
		cmocka_unit_test(a_vma_over_two_regions_is_shared),
		cmocka_unit_test(damon_counts_accessed_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
