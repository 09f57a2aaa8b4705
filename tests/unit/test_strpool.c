/*
 * Interned strings: one copy of each text, the same pointer for equal
 * texts, pointers that stay valid as the pool grows (ASan sees a stale
 * one), and a string longer than a block kept whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/strpool.h"

static void one_copy_each(void **state)
{
	struct ms_strpool p = { 0 };
	const char *first[3000];
	char buf[64];
	int i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "reason %d", i % 1000);
		first[i] = ms_strpool_intern(&p, buf);
		assert_non_null(first[i]);
		assert_string_equal(first[i], buf);
		if (i >= 1000)
			assert_ptr_equal(first[i], first[i - 1000]);
	}
	assert_int_equal(p.len, 1000);
	for (i = 0; i < 1000; i++) {                  /* still there, and apart, after every growth */
		snprintf(buf, sizeof(buf), "reason %d", i);
		assert_string_equal(first[i], buf);
	}
	assert_ptr_equal(ms_strpool_intern(&p, ""), ms_strpool_intern(&p, ""));
	ms_strpool_release(&p);
	assert_int_equal(p.len, 0);
	ms_strpool_release(&p);
}

static void long_strings(void **state)
{
	struct ms_strpool p = { 0 };
	size_t n = MS_STRPOOL_BLOCK + 100;
	char *big = malloc(n);
	const char *a, *b, *c;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', n - 1);
	big[n - 1] = '\0';
	a = ms_strpool_intern(&p, "small, first");
	b = ms_strpool_intern(&p, big);
	c = ms_strpool_intern(&p, "small, after");
	assert_non_null(b);
	assert_int_equal(strlen(b), n - 1);
	assert_ptr_equal(ms_strpool_intern(&p, big), b);
	assert_string_equal(a, "small, first");
	assert_string_equal(c, "small, after");
	assert_true(c == a + strlen(a) + 1);          /* the small ones share the block still filling */
	free(big);
	ms_strpool_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_copy_each),
		cmocka_unit_test(long_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
