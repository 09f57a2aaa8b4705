/*
 * The library's version: ms_version() says what the headers say when both
 * come from one build, its number is the one MAPSCOPE_VERSION_NUMBER
 * computes, and MAPSCOPE_VERSION_AT_LEAST compares as #if needs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <mapscope/version.h>

static void library_matches_headers(void **state)
{
	unsigned int n = 0;
	char text[32];

	(void)state;
	assert_string_equal(ms_version(&n), MAPSCOPE_VERSION);
	assert_int_equal(n, MAPSCOPE_VERSION_NUMBER);
	snprintf(text, sizeof(text), "%d.%d.%d", MAPSCOPE_VERSION_MAJOR, MAPSCOPE_VERSION_MINOR,
		 MAPSCOPE_VERSION_PATCH);
	assert_string_equal(ms_version(NULL), text);
	assert_int_equal(n, MAPSCOPE_VERSION_MAJOR * 10000u + MAPSCOPE_VERSION_MINOR * 100u + MAPSCOPE_VERSION_PATCH);
}

static void at_least_compares(void **state)
{
	(void)state;
	assert_true(MAPSCOPE_VERSION_AT_LEAST(MAPSCOPE_VERSION_MAJOR, MAPSCOPE_VERSION_MINOR, MAPSCOPE_VERSION_PATCH));
	assert_true(MAPSCOPE_VERSION_AT_LEAST(0, 0, 0));
	assert_false(MAPSCOPE_VERSION_AT_LEAST(MAPSCOPE_VERSION_MAJOR + 1, 0, 0));
	assert_false(MAPSCOPE_VERSION_AT_LEAST(MAPSCOPE_VERSION_MAJOR, MAPSCOPE_VERSION_MINOR,
					       MAPSCOPE_VERSION_PATCH + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_matches_headers),
		cmocka_unit_test(at_least_compares),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
