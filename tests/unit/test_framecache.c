/* A binary's frames by address: what is put is got back, whole, across the table's growth. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "symbols/framecache.h"

#define N 5000

static const char *const names[] = { "alpha", "beta", "gamma", "delta" };

/* The frames the test puts for key k: k % 4 + 1 of them, each naming its place. */
static int frames_for(uint64_t k, struct ms_frame *f)
{
	int n = (int)(k % 4) + 1, i;

	for (i = 0; i < n; i++)
		f[i] = (struct ms_frame){ names[(k + (uint64_t)i) % 4], i ? "caller.c" : "site.c", (int)(k % 1000) + i };
	return n;
}

static void empty_cache(void **state)
{
	struct ms_frame f[4];

	(void)state;
	assert_int_equal(ms_framecache_get(NULL, 0x1000, f, 4), -1);
	ms_framecache_free(NULL);
}

/* Thousands of addresses, spread as code is (a few bytes apart, and far apart), each got back as put. */
static void gets_what_was_put(void **state)
{
	struct ms_framecache *c = NULL;
	struct ms_frame want[4], got[8];
	uint64_t k, addr;
	int n, m;

	(void)state;
	for (k = 0; k < N; k++) {
		n = frames_for(k, want);
		addr = k < N / 2 ? 0x401000 + k * 3 : 0x7f0000000000 + k * 4096;
		assert_int_equal(ms_framecache_put(&c, addr, want, n), 0);
	}
	for (k = 0; k < N; k++) {
		n = frames_for(k, want);
		addr = k < N / 2 ? 0x401000 + k * 3 : 0x7f0000000000 + k * 4096;
		m = ms_framecache_get(c, addr, got, 8);
		assert_int_equal(m, n);
		assert_memory_equal(got, want, (size_t)n * sizeof(*got));
	}
	assert_int_equal(ms_framecache_get(c, 0x400fff, got, 8), -1);
	assert_int_equal(ms_framecache_get(c, 0x401000 + 1, got, 8), -1);
	ms_framecache_free(c);
}

/* An answer longer than the caller's room is not got (the caller computes it cut short); a second put keeps the first. */
static void room_and_repeats(void **state)
{
	struct ms_framecache *c = NULL;
	struct ms_frame f[4], other = { "other", NULL, 0 }, got[4];

	(void)state;
	assert_int_equal(frames_for(3, f), 4);
	assert_int_equal(ms_framecache_put(&c, 0x1000, f, 4), 0);
	assert_int_equal(ms_framecache_get(c, 0x1000, got, 3), -1);
	assert_int_equal(ms_framecache_get(c, 0x1000, got, 4), 4);
	assert_int_equal(ms_framecache_put(&c, 0x1000, &other, 1), 0);
	assert_int_equal(ms_framecache_get(c, 0x1000, got, 4), 4);
	assert_string_equal(got[0].name, f[0].name);
	assert_int_equal(ms_framecache_put(&c, 0x2000, f, 0), 0);
	assert_int_equal(ms_framecache_get(c, 0x2000, got, 4), -1);
	ms_framecache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_cache),
		cmocka_unit_test(gets_what_was_put),
		cmocka_unit_test(room_and_repeats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
