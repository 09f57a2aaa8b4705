/* Strict number parsing for options. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli.h"

static void parses_in_range(void **state)
{
	uint64_t v = 0;

	assert_int_equal(cli_parse_u64("1024", 1, 4096, &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
}

static void rejects_junk_sign_and_range(void **state)
{
	uint64_t v = 7;

	assert_int_equal(cli_parse_u64("", 0, 10, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("12x", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("+1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("0", 1, 100, &v), -ERANGE);
	assert_int_equal(cli_parse_u64("101", 1, 100, &v), -ERANGE);
	assert_int_equal(cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 7);                 /* untouched on failure */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_in_range),
		cmocka_unit_test(rejects_junk_sign_and_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
