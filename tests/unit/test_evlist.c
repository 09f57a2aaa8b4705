/*
 * A recording's events (lib/perfdata/evlist.c): attrs copied and
 * zero-extended from any size, ids found after many were added, names
 * replaced, and pointers to the evsels kept while more are added.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "perfdata/evlist.h"

/* An attr of the oldest layout (64 bytes) comes out whole, zero past it, with this build's size. */
static void attrs_zero_extended(void **state)
{
	struct perf_event_attr a;
	struct ms_evlist l = { 0 };
	struct ms_evsel *e;

	(void)state;
	memset(&a, 0xff, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	e = ms_evlist_add(&l, &a, PERF_ATTR_SIZE_VER0);
	assert_non_null(e);
	assert_int_equal(e->attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(e->attr.size, sizeof(e->attr));
	assert_int_equal(e->attr.config2, 0);            /* past the first 64 bytes */
	assert_int_equal(l.n, 1);
	ms_evlist_release(&l);
	assert_int_equal(l.n, 0);
	assert_null(l.v);
}

/* 3 events with 100 ids each: each id finds its event; the first evsel's pointer stays good. */
static void ids_and_names(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct ms_evlist l = { 0 };
	struct ms_evsel *first = NULL, *e;
	uint64_t id;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		a.config = (uint64_t)i;
		e = ms_evlist_add(&l, &a, sizeof(a));
		assert_non_null(e);
		first = first ? first : e;
		for (id = 0; id < 100; id++)
			assert_int_equal(ms_evsel_add_id(&l, e, 1000 * (uint64_t)(i + 1) + id), 0);
	}
	assert_ptr_equal(l.v[0], first);
	assert_int_equal(l.nr_ids, 300);
	assert_int_equal(ms_evlist_by_id(&l, 1099), 0);
	assert_int_equal(ms_evlist_by_id(&l, 2000), 1);
	assert_int_equal(ms_evlist_by_id(&l, 3050), 2);
	assert_int_equal(ms_evlist_by_id(&l, 4000), -1);
	assert_int_equal(ms_evsel_set_name(l.v[1], "page-faultsXYZ", 11), 0);
	assert_string_equal(l.v[1]->name, "page-faults");
	assert_int_equal(ms_evsel_set_name(l.v[1], "cycles", 6), 0);   /* a second name replaces the first */
	assert_string_equal(l.v[1]->name, "cycles");
	assert_null(l.v[0]->name);
	ms_evlist_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attrs_zero_extended),
		cmocka_unit_test(ids_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
