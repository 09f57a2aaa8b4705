/* The u32 -> pointer map, against a plain array that knows the truth. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/u32map.h"

#define N 20000

static void empty_map(void **state)
{
	struct ms_u32map m;
	size_t pos = 0;
	uint32_t key;

	(void)state;
	ms_u32map_init(&m);
	assert_null(ms_u32map_get(&m, 0));
	assert_null(ms_u32map_get(&m, 12345));
	assert_null(ms_u32map_del(&m, 7));
	assert_null(ms_u32map_next(&m, &pos, &key));
	ms_u32map_release(&m);
}

/* Puts, overwrites, deletes and lookups in a random order agree with an array. */
static void agrees_with_an_array(void **state)
{
	static int vals[N];
	static void *truth[N];
	struct ms_u32map m;
	size_t pos = 0, seen = 0, live = 0;
	uint32_t i, key;
	void *v;

	(void)state;
	srand(7);
	ms_u32map_init(&m);
	for (i = 0; i < 5 * N; i++) {
		uint32_t k = (uint32_t)rand() % N;

		if (rand() % 3) {
			assert_int_equal(ms_u32map_put(&m, k * 2654435761u % 4000000000u, &vals[k]), 0);
			truth[k] = &vals[k];
		} else {
			assert_ptr_equal(ms_u32map_del(&m, k * 2654435761u % 4000000000u), truth[k]);
			truth[k] = NULL;
		}
	}
	for (i = 0; i < N; i++) {
		assert_ptr_equal(ms_u32map_get(&m, i * 2654435761u % 4000000000u), truth[i]);
		live += truth[i] != NULL;
	}
	assert_int_equal(m.len, live);
	while ((v = ms_u32map_next(&m, &pos, &key))) {
		int idx = (int *)v - vals;

		assert_ptr_equal(truth[idx], v);
		assert_int_equal(key, (uint32_t)idx * 2654435761u % 4000000000u);
		seen++;
	}
	assert_int_equal(seen, live);
	ms_u32map_release(&m);
}

/* Key 0 and the largest key are ordinary keys. */
static void edge_keys(void **state)
{
	struct ms_u32map m;
	int a, b;

	(void)state;
	ms_u32map_init(&m);
	assert_int_equal(ms_u32map_put(&m, 0, &a), 0);
	assert_int_equal(ms_u32map_put(&m, UINT32_MAX, &b), 0);
	assert_ptr_equal(ms_u32map_get(&m, 0), &a);
	assert_ptr_equal(ms_u32map_get(&m, UINT32_MAX), &b);
	assert_ptr_equal(ms_u32map_del(&m, 0), &a);
	assert_null(ms_u32map_get(&m, 0));
	assert_ptr_equal(ms_u32map_get(&m, UINT32_MAX), &b);
	ms_u32map_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_map),
		cmocka_unit_test(agrees_with_an_array),
		cmocka_unit_test(edge_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
