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
 * room for two: region 0 has g then f, region 1 its one, region 2 none,
 * whatever the order of the rows. A tie goes by name: j before k.
 */
static void top_n_by_row(void **state)
{
	static const char f[] = "f", g[] = "g", h[] = "h", j[] = "j", k[] = "k", bin[] = "/bin/x";
	struct ms_region regs[4] = { { .id = 0 }, { .id = 1 }, { .id = 2 }, { .id = 3 } };
	struct ms_report_row rows[4] = { { .region = &regs[2] }, { .region = &regs[1] }, { .region = &regs[0] },
					 { .region = &regs[3] } };
	struct ms_children cs = { 0 };
	struct ms_report_child *kids = NULL;

	(void)state;
	assert_int_equal(ms_children_count(&cs, 1, f, bin, 2), 0);
	assert_int_equal(ms_children_count(&cs, 1, g, bin, 5), 0);
	assert_int_equal(ms_children_count(&cs, 1, f, bin, 1), 0);
	assert_int_equal(ms_children_count(&cs, 1, h, bin, 1), 0);
	assert_int_equal(ms_children_count(&cs, 2, g, bin, 7), 0);
	assert_int_equal(ms_children_count(&cs, 4, k, bin, 2), 0);
	assert_int_equal(ms_children_count(&cs, 4, j, bin, 2), 0);
	assert_int_equal(ms_children_fill(&cs, rows, 4, 4, 2, &kids), 0);
	assert_int_equal(rows[0].nr_children, 0);        /* region 2 */
	assert_int_equal(rows[1].nr_children, 1);        /* region 1 */
	assert_string_equal(rows[1].children[0].symbol, "g");
	assert_int_equal(rows[1].children[0].samples, 7);
	assert_int_equal(rows[2].nr_children, 2);        /* region 0: h left out */
	assert_string_equal(rows[2].children[0].symbol, "g");
	assert_int_equal(rows[2].children[0].samples, 5);
	assert_string_equal(rows[2].children[1].symbol, "f");
	assert_int_equal(rows[2].children[1].samples, 3);
	assert_int_equal(rows[3].nr_children, 2);
	assert_string_equal(rows[3].children[0].symbol, "j");
	assert_string_equal(rows[3].children[1].symbol, "k");
	free(kids);
	ms_children_release(&cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(top_n_by_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
