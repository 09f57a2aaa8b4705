/* The CSV writer: fields as they are, or quoted with quotes doubled; control bytes escaped, in quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "output/csv.h"

static char *csv_of(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ms_csv_str(f, s);
	fclose(f);
	return buf;
}

static void check(const char *in, const char *want)
{
	char *got = csv_of(in);

	assert_string_equal(got, want);
	free(got);
}

static void fields(void **state)
{
	(void)state;
	check("plain", "plain");
	check("", "");
	check("/lib/a b.so", "/lib/a b.so");
	check("a,b", "\"a,b\"");
	check("say \"hi\"", "\"say \"\"hi\"\"\"");
}

/* A name with a newline or an escape sequence stays one field on one line. */
static void controls(void **state)
{
	(void)state;
	check("two\nlines", "\"two\\nlines\"");
	check("\033[31mred", "\"\\x1b[31mred\"");
	check("a\\b", "\"a\\\\b\"");
	check("x,\n\"FAKE\"", "\"x,\\n\"\"FAKE\"\"\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields),
		cmocka_unit_test(controls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
