/* The code symbols under region rows: counted by (region, symbol, binary), each row's top N. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(top_n_by_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
