/* The terminal-text writer: control bytes escaped, printable UTF-8 and ordinary names as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/text.h"

/* Both writers, the buffer and the stream, give want for in. */
static void check(const char *in, const char *want)
{
	char buf[MS_TEXT_QUOTED], *got = NULL;
	size_t len;
	FILE *f = open_memstream(&got, &len);

	assert_string_equal(ms_text_quote(in, buf, sizeof(buf)), want);
	assert_non_null(f);
	ms_text_str(f, in);
	fclose(f);
	assert_string_equal(got, want);
	free(got);
}

static void ordinary_names_unchanged(void **state)
{
	const char *s = "/usr/lib/x86_64-linux-gnu/libc.so.6 (deleted)";
	char buf[64];

	(void)state;
	check("", "");
	check("[heap]", "[heap]");
	check(s, s);
	check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	check("latin1 \xe9t\xe9", "latin1 \xe9t\xe9");    /* not UTF-8, but no control either */
	/* Nothing to escape: the name itself comes back, no copy. */
	assert_ptr_equal(ms_text_quote(s, buf, sizeof(buf)), s);
	assert_false(ms_text_needs_quote(s));
	assert_string_equal(ms_text_quote(NULL, buf, sizeof(buf)), "");
}

static void controls_escaped(void **state)
{
	(void)state;
	check("a\nb", "a\\nb");
	check("\t\r", "\\t\\r");
	check("\033[31mred", "\\x1b[31mred");
	check("del\x7f", "del\\x7f");
	check("\x01\x1f", "\\x01\\x1f");
	check("back\\slash", "back\\\\slash");
	check("csi\xc2\x9b" "0m", "csi\\xc2\\x9b0m");     /* C1 control, UTF-8 encoded */
	check("raw\x9b" "0m", "raw\\x9b0m");              /* C1 control, 8-bit */
	check("\xc2\xa0nbsp", "\xc2\xa0nbsp");            /* U+00A0 is printable */
	check("row\n   9999 99.99%  FAKE", "row\\n   9999 99.99%  FAKE");
	assert_true(ms_text_needs_quote("x\n"));
}

static void long_names_cut_whole(void **state)
{
	char buf[12];

	(void)state;
	/* Each newline is 2 bytes escaped; the buffer holds the escapes that fit, then "...". */
	assert_string_equal(ms_text_quote("\n\n\n\n\n", buf, sizeof(buf)), "\\n\\n\\n\\n...");
	assert_string_equal(ms_text_quote("\033\033", buf, sizeof(buf)), "\\x1b\\x1b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordinary_names_unchanged),
		cmocka_unit_test(controls_escaped),
		cmocka_unit_test(long_names_cut_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
