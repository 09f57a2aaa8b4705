/* The string table (util/strtab.h): indexes in the order first added, one per text, past its table's growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "util/strtab.h"

static void indexes_in_order(void **state)
{
	struct ms_strtab t = { 0 };
	char buf[32];
	int i;

	(void)state;
	assert_int_equal(ms_strtab_intern(&t, ""), 0);
	assert_int_equal(ms_strtab_intern(&t, "main"), 1);
	assert_int_equal(ms_strtab_intern(&t, "libc.so.6"), 2);
	assert_int_equal(ms_strtab_intern(&t, "main"), 1);
	for (i = 0; i < 5000; i++) {                        /* the slots grow from 1024, four times */
		snprintf(buf, sizeof(buf), "fn%d", i);
		assert_int_equal(ms_strtab_intern(&t, buf), 3 + i);
	}
	assert_int_equal(t.n, 5003);
	assert_int_equal(ms_strtab_intern(&t, "fn4321"), 3 + 4321);
	assert_int_equal(ms_strtab_intern(&t, ""), 0);
	assert_string_equal(t.s[2], "libc.so.6");
	assert_string_equal(t.s[5002], "fn4999");
	ms_strtab_release(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.s);
	assert_int_equal(ms_strtab_intern(&t, "again"), 0);  /* empty again, and usable */
	ms_strtab_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(indexes_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
