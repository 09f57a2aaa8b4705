/*
 * The hugepage advisor's spans: found again by key as the array and its
 * index grow, a span of one page with no map until its second, pages
 * taken off with and without a map, and the sort by key, after which the
 * index is made again when a span is looked up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis/hugespans.h"

#define KEY(region, idx) (((uint64_t)(region) + 1) << 32 | (idx))

static void found_again(void **state)
{
	struct ms_hugespans hs = { 0 };
	struct span *s;
	uint32_t i;

	(void)state;
	assert_null(ms_hugespans_find(&hs, KEY(0, 1), false));
	for (i = 0; i < 5000; i++) {             /* made in a scattered order, keys never repeated */
		s = ms_hugespans_find(&hs, KEY(i * 7919 % 5000, i % 3), true);
		assert_non_null(s);
		s->samples = i + 1;
	}
	assert_int_equal(hs.len, 5000);
	for (i = 0; i < 5000; i++) {
		s = ms_hugespans_find(&hs, KEY(i * 7919 % 5000, i % 3), false);
		assert_non_null(s);
		assert_int_equal(s->samples, i + 1);
	}
	assert_null(ms_hugespans_find(&hs, KEY(1, 7), false));
	ms_hugespans_sort(&hs);
	for (i = 1; i < hs.len; i++)
		assert_true(hs.t[i - 1].key < hs.t[i].key);
	s = ms_hugespans_find(&hs, KEY(3 * 7919 % 5000, 0), false);     /* the index, made again */
	assert_non_null(s);
	assert_int_equal(s->samples, 4);
	assert_non_null(ms_hugespans_find(&hs, KEY(6000, 0), true));
	assert_int_equal(hs.len, 5001);
	ms_hugespans_release(&hs);
}

/*
 * A region's first span is found by its id, its others through the hash:
 * 1,000 spans of one region among one-span regions, found again before
 * and after the sort, and one more made after it.
 */
static void a_region_of_many_spans(void **state)
{
	struct ms_hugespans hs = { 0 };
	struct span *s;
	uint32_t i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		assert_non_null(s = ms_hugespans_find(&hs, KEY(5, 999 - i), true));
		s->samples = 999 - i;
		assert_non_null(s = ms_hugespans_find(&hs, KEY(6 + i, 0), true));
		s->samples = 5000 + i;
	}
	assert_int_equal(hs.len, 2000);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(ms_hugespans_find(&hs, KEY(5, i), false)->samples, i);
		assert_int_equal(ms_hugespans_find(&hs, KEY(6 + i, 0), false)->samples, 5000 + i);
	}
	assert_null(ms_hugespans_find(&hs, KEY(5, 1000), false));
	assert_null(ms_hugespans_find(&hs, KEY(6, 1), false));
	ms_hugespans_sort(&hs);
	assert_int_equal(hs.t[0].key, KEY(5, 0));
	assert_non_null(s = ms_hugespans_find(&hs, KEY(5, 1000), true));
	s->samples = 1000;
	for (i = 0; i <= 1000; i++)
		assert_int_equal(ms_hugespans_find(&hs, KEY(5, i), false)->samples, i);
	for (i = 0; i < 1000; i++)
		assert_int_equal(ms_hugespans_find(&hs, KEY(6 + i, 0), false)->samples, 5000 + i);
	assert_int_equal(hs.len, 2001);
	ms_hugespans_release(&hs);
}

static void pages(void **state)
{
	struct ms_hugespans hs = { 0 };
	struct span *s, *t;
	uint32_t p;

	(void)state;
	s = ms_hugespans_find(&hs, KEY(0, 0), true);
	assert_false(ms_hugespans_has(&hs, s, 0));
	assert_int_equal(ms_hugespans_add(&hs, s, 511), 0);
	assert_int_equal(s->map, 0);                   /* one page: no map */
	assert_true(ms_hugespans_has(&hs, s, 511));
	assert_false(ms_hugespans_has(&hs, s, 0));
	ms_hugespans_drop(&hs, s, 511);
	assert_false(ms_hugespans_has(&hs, s, 511));
	assert_int_equal(ms_hugespans_add(&hs, s, 3), 0);
	assert_int_equal(ms_hugespans_add(&hs, s, 64), 0);
	assert_int_not_equal(s->map, 0);               /* its second page made its map, with the first in it */
	assert_true(ms_hugespans_has(&hs, s, 3));
	assert_true(ms_hugespans_has(&hs, s, 64));
	assert_false(ms_hugespans_has(&hs, s, 511));
	assert_int_equal(s->pages, 2);
	t = ms_hugespans_find(&hs, KEY(1, 0), true);   /* another span's pages are its own */
	s = ms_hugespans_find(&hs, KEY(0, 0), false);
	for (p = 0; p < 512; p += 2)
		assert_int_equal(ms_hugespans_add(&hs, t, p), 0);
	assert_int_equal(t->pages, 256);
	assert_false(ms_hugespans_has(&hs, s, 0));
	assert_false(ms_hugespans_has(&hs, t, 3));
	ms_hugespans_drop(&hs, s, 3);
	assert_false(ms_hugespans_has(&hs, s, 3));
	assert_true(ms_hugespans_has(&hs, s, 64));
	assert_int_equal(s->pages, 1);
	ms_hugespans_release(&hs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_again),
		cmocka_unit_test(a_region_of_many_spans),
		cmocka_unit_test(pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
