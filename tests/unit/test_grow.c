/*
 * The growth helper: an array grows to hold what is asked (doubling, from
 * its first size), keeps what it held, zeroes what is new where asked,
 * and refuses, leaving the array and its count as they were, past its cap
 * or where the bytes would overflow; ms_calloc_written's memory is written.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/grow.h"

static void grows_by_doubling_and_keeps_contents(void **state)
{
	uint32_t *v = NULL;
	size_t alloc = 0, i;

	(void)state;
	assert_int_equal(MS_ALLOC_GROW(v, 1, alloc), 0);
	assert_non_null(v);
	assert_int_equal(alloc, 16);                 /* the first size */
	for (i = 0; i < 16; i++)
		v[i] = (uint32_t)i * 3;
	assert_int_equal(MS_ALLOC_GROW(v, 16, alloc), 0);
	assert_int_equal(alloc, 16);                 /* it fits: nothing to do */
	assert_int_equal(MS_ALLOC_GROW(v, 17, alloc), 0);
	assert_int_equal(alloc, 32);                 /* doubled */
	assert_int_equal(MS_ALLOC_GROW(v, 200, alloc), 0);
	assert_int_equal(alloc, 256);                /* doubled until 200 fit */
	for (i = 0; i < 16; i++)
		assert_int_equal(v[i], i * 3);
	v[199] = 7;                                  /* ASan: the last one asked for is there */
	free(v);
}

static void zeroes_new_elements(void **state)
{
	uint64_t *v = NULL;
	size_t alloc = 0, i;

	(void)state;
	assert_int_equal(MS_GROW(v, 3, alloc, 4, SIZE_MAX, true), 0);
	assert_int_equal(alloc, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(v[i], 0);
		v[i] = ~0ULL;
	}
	assert_int_equal(MS_ALLOC_GROW_ZERO(v, 100, alloc), 0);
	assert_int_equal(alloc, 128);
	for (i = 0; i < 128; i++)
		assert_int_equal(v[i], i < 4 ? ~0ULL : 0);
	free(v);
}

static void cap_refuses_and_leaves_array(void **state)
{
	char *v = NULL, *before;
	size_t alloc = 0;

	(void)state;
	assert_int_equal(MS_GROW(v, 5, alloc, 4, 10, false), 0);
	assert_int_equal(alloc, 8);
	memcpy(v, "abcde", 5);
	/* Doubling would give 16: the cap holds it at 10, which 9 fits. */
	assert_int_equal(MS_GROW(v, 9, alloc, 4, 10, false), 0);
	assert_int_equal(alloc, 10);
	memcpy(v + 5, "fghij", 5);
	before = v;
	assert_int_equal(MS_GROW(v, 11, alloc, 4, 10, false), -ENOMEM);
	assert_ptr_equal(v, before);
	assert_int_equal(alloc, 10);
	assert_memory_equal(v, "abcdefghij", 10);
	free(v);
}

static void overflow_refused(void **state)
{
	struct big { char b[1 << 20]; } *v = NULL;
	size_t alloc = 0;

	(void)state;
	/* SIZE_MAX / 4096 elements of 1 MiB: past SIZE_MAX bytes, so no allocation is tried. */
	assert_int_equal(MS_ALLOC_GROW(v, SIZE_MAX / 4096, alloc), -ENOMEM);
	assert_null(v);
	assert_int_equal(alloc, 0);
	assert_int_equal(MS_ALLOC_GROW(v, 2, alloc), 0);
	assert_int_equal(alloc, 16);
	/* Doubling near the limit stops at it rather than wrapping. */
	assert_null(ms_grow(v, 1 << 20, (size_t)PTRDIFF_MAX / (1 << 20) + 1, &alloc, 16, SIZE_MAX, false));
	assert_int_equal(alloc, 16);
	free(v);
}

/* Cut to what it holds, contents kept; nothing where it is full or empty. */
static void shrink_to_length(void **state)
{
	int *v = NULL, *before;
	size_t alloc = 0, i;

	(void)state;
	MS_SHRINK(v, 0, alloc);
	assert_null(v);
	assert_int_equal(MS_GROW(v, 100, alloc, 4, SIZE_MAX, false), 0);
	assert_int_equal(alloc, 128);
	for (i = 0; i < 100; i++)
		v[i] = (int)i;
	MS_SHRINK(v, 100, alloc);
	assert_int_equal(alloc, 100);
	for (i = 0; i < 100; i++)
		assert_int_equal(v[i], (int)i);
	before = v;
	MS_SHRINK(v, 100, alloc);                 /* full: left as it is */
	assert_ptr_equal(v, before);
	MS_SHRINK(v, 0, alloc);                   /* nothing held: left too */
	assert_int_equal(alloc, 100);
	free(v);
}

/* Pages of this process resident now (/proc/self/statm): the kernel's zero page is not counted. */
static long resident_pages(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, res = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &size, &res), 2);
	fclose(f);
	return res;
}

/*
 * Zeroed, and written: reading every page of 32 MiB made so finds them
 * resident (plain calloc's fresh memory reads as the kernel's zero page,
 * counted nowhere, and is copied at the first write). Overflow refused.
 */
static void calloc_written_is_resident(void **state)
{
	const size_t len = 32u << 20;
	unsigned char *p;
	long before, after;
	size_t i, sum = 0;

	(void)state;
	assert_null(ms_calloc_written(SIZE_MAX / 2, 4));
	assert_non_null(p = ms_calloc_written(0, 8));
	free(p);
	before = resident_pages();
	assert_non_null(p = ms_calloc_written(len / 16, 16));
	for (i = 0; i < len; i += 4096)
		sum += p[i];
	after = resident_pages();
	assert_int_equal(sum, 0);
	assert_true(after - before >= (long)(len / 4096) * 9 / 10);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_by_doubling_and_keeps_contents),
		cmocka_unit_test(zeroes_new_elements),
		cmocka_unit_test(cap_refuses_and_leaves_array),
		cmocka_unit_test(overflow_refused),
		cmocka_unit_test(shrink_to_length),
		cmocka_unit_test(calloc_written_is_resident),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
