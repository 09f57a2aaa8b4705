/*
 * The code symbols under region rows: counted by (region, symbol, binary),
 * each row's top N; samples whose code is named later, counted under their names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/children.h"

/*
 * Region 0: f 3 samples (in two runs), g 5, h 1 (its first symbol is f,
 * the others go to the table); region 1: one symbol; region 2: none. With
 * room for two: region 0 has g then f, region 1 its one, region 2 none.
 * A tie goes by name: j before k.
 */
static void top_n_by_row(void **state)
{
	static const char f[] = "f", g[] = "g", h[] = "h", j[] = "j", k[] = "k", bin[] = "/bin/x";
	struct ms_report_child kids[2];
	struct ms_children cs = { 0 };

	(void)state;
	assert_int_equal(ms_children_count(&cs, 1, f, bin, 2), 0);
	assert_int_equal(ms_children_count(&cs, 1, g, bin, 5), 0);
	assert_int_equal(ms_children_count(&cs, 1, f, bin, 1), 0);
	assert_int_equal(ms_children_count(&cs, 1, h, bin, 1), 0);
	assert_int_equal(ms_children_count(&cs, 2, g, bin, 7), 0);
	assert_int_equal(ms_children_count(&cs, 4, k, bin, 2), 0);
	assert_int_equal(ms_children_count(&cs, 4, j, bin, 2), 0);
	assert_int_equal(ms_children_index(&cs, 4), 0);
	assert_int_equal(ms_children_top(&cs, 3, 2, kids), 0);       /* region 2 */
	assert_int_equal(ms_children_top(&cs, 2, 2, kids), 1);       /* region 1 */
	assert_string_equal(kids[0].symbol, "g");
	assert_int_equal(kids[0].samples, 7);
	assert_int_equal(ms_children_top(&cs, 1, 2, kids), 2);       /* region 0: h left out */
	assert_string_equal(kids[0].symbol, "g");
	assert_int_equal(kids[0].samples, 5);
	assert_string_equal(kids[1].symbol, "f");
	assert_int_equal(kids[1].samples, 3);
	assert_int_equal(ms_children_top(&cs, 4, 2, kids), 2);
	assert_string_equal(kids[0].symbol, "j");
	assert_string_equal(kids[1].symbol, "k");
	assert_int_equal(ms_children_top(&cs, 4, 0, kids), 0);
	/* A region past the index (none of its symbols counted in the table): its first symbol only. */
	assert_int_equal(ms_children_index(&cs, 2), 0);
	assert_int_equal(ms_children_top(&cs, 4, 2, kids), 1);
	assert_string_equal(kids[0].symbol, "k");
	ms_children_release(&cs);
}

/* Names later: entry i (its symbol i + 1 as a pointer, its binary the tag) is ctx's i-th pair. */
static const char tag[] = "tag";

static void rename_entry(void *ctx, const char **symbol, const char **dso)
{
	const char *const (*pairs)[2] = ctx;
	size_t i = (size_t)(uintptr_t)*symbol - 1;

	if (*dso != tag)
		return;
	*symbol = pairs[i][0];
	*dso = pairs[i][1];
}

/*
 * Samples whose code is named later: entries 0 and 2 turn out to be one
 * symbol (f), entry 1 another (g); in region 1 they meet f counted at once
 * and add to it; region 2's entry 1 is counted in two runs. Settled, the
 * rows are those of counting each under its name at once.
 */
static void named_later_counted_as_named_now(void **state)
{
	static const char f[] = "f", g[] = "g", bin[] = "/bin/x";
	static const char *const pairs[3][2] = { { f, bin }, { g, bin }, { f, bin } };
	struct ms_report_child kids[3];
	struct ms_children cs = { 0 };

	(void)state;
	assert_int_equal(ms_children_count(&cs, 1, f, bin, 1), 0);
	assert_int_equal(ms_children_count_later(&cs, 1, (const char *)(uintptr_t)1, tag, 2), 0);
	assert_int_equal(ms_children_count_later(&cs, 1, (const char *)(uintptr_t)2, tag, 4), 0);
	assert_int_equal(ms_children_count_later(&cs, 1, (const char *)(uintptr_t)3, tag, 3), 0);
	assert_int_equal(ms_children_count_later(&cs, 2, (const char *)(uintptr_t)2, tag, 1), 0);
	assert_int_equal(ms_children_count_later(&cs, 2, (const char *)(uintptr_t)2, tag, 1), 0);
	assert_int_equal(cs.nr_later, 4);                  /* the last two in one */
	assert_int_equal(ms_children_settle(&cs, rename_entry, (void *)pairs), 0);
	assert_int_equal(cs.nr_later, 0);
	assert_int_equal(ms_children_index(&cs, 2), 0);
	assert_int_equal(ms_children_top(&cs, 1, 3, kids), 2);
	assert_ptr_equal(kids[0].symbol, f);               /* 1 + 2 + 3 */
	assert_int_equal(kids[0].samples, 6);
	assert_ptr_equal(kids[1].symbol, g);
	assert_int_equal(kids[1].samples, 4);
	assert_int_equal(ms_children_top(&cs, 2, 3, kids), 1);
	assert_ptr_equal(kids[0].symbol, g);
	assert_ptr_equal(kids[0].dso, bin);
	assert_int_equal(kids[0].samples, 2);
	ms_children_release(&cs);
}

/*
 * Samples of three entries in turn, a run each, 100,000 times: the list
 * kept in turn stays small (entries of one pair merged once they are
 * many), and every sample is counted, under its name, once settled.
 */
static void many_runs_kept_small(void **state)
{
	static const char f[] = "f", g[] = "g", bin[] = "/bin/x";
	static const char *const pairs[3][2] = { { f, bin }, { g, bin }, { f, bin } };
	struct ms_report_child kids[3];
	struct ms_children cs = { 0 };
	size_t i, most = 0;

	(void)state;
	for (i = 0; i < 100000; i++) {
		assert_int_equal(ms_children_count_later(&cs, 1 + i % 2, (const char *)(uintptr_t)(1 + i % 3), tag, 1), 0);
		if (cs.nr_later > most)
			most = cs.nr_later;
	}
	assert_true(most <= 16u << 10);
	assert_int_equal(ms_children_settle(&cs, rename_entry, (void *)pairs), 0);
	assert_int_equal(ms_children_index(&cs, 2), 0);
	assert_int_equal(ms_children_top(&cs, 1, 3, kids), 2);    /* region 1: entries 0 and 2 (f), 1 (g) */
	assert_ptr_equal(kids[0].symbol, f);
	assert_int_equal(kids[0].samples, 33334);
	assert_int_equal(kids[1].samples, 16666);
	assert_int_equal(ms_children_top(&cs, 2, 3, kids), 2);
	assert_int_equal(kids[0].samples + kids[1].samples, 50000);
	ms_children_release(&cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(top_n_by_row),
		cmocka_unit_test(named_later_counted_as_named_now),
		cmocka_unit_test(many_runs_kept_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
