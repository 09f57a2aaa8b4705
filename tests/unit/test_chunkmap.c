/* Pages' bitmaps by chunk key: each key keeps one bitmap of its own, across the table's growth. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/chunkmap.h"

#define N 20000

static void empty_map(void **state)
{
	struct ms_chunkmap m = { 0 };

	(void)state;
	ms_chunkmap_release(&m);
	assert_int_equal(m.len, 0);
	assert_null(m.bits);
}

/* Keys of many slots and chunks: a new one gets a zeroed bitmap, a known one its own, after every growth. */
static void keys_keep_their_bitmaps(void **state)
{
	static int64_t first[N];
	struct ms_chunkmap m = { 0 };
	uint64_t key;
	int64_t idx;
	size_t i, w;

	(void)state;
	for (i = 0; i < N; i++) {
		key = ms_chunk_key(i % 97, (uint64_t)i * MS_CHUNK_PAGES + i % MS_CHUNK_PAGES);
		idx = first[i] = ms_chunkmap_bits(&m, key);
		assert_int_equal(idx, (int64_t)i);
		for (w = 0; w < MS_CHUNK_PAGES / 64; w++)
			assert_int_equal(m.bits[idx][w], 0);
		m.bits[idx][i % (MS_CHUNK_PAGES / 64)] = i + 1;
	}
	assert_int_equal(m.len, N);
	for (i = 0; i < N; i++) {
		/* Another page of the same chunk: the same key. */
		key = ms_chunk_key(i % 97, (uint64_t)i * MS_CHUNK_PAGES + (i + 1) % MS_CHUNK_PAGES);
		idx = ms_chunkmap_bits(&m, key);
		assert_int_equal(idx, first[i]);
		assert_int_equal(m.bits[idx][i % (MS_CHUNK_PAGES / 64)], i + 1);
	}
	assert_int_equal(m.len, N);
	ms_chunkmap_release(&m);
	assert_int_equal(m.cap, 0);
}

/* The same chunk in two slots is two keys; the slot comes back from the key. */
static void slots_apart(void **state)
{
	struct ms_chunkmap m = { 0 };
	uint64_t a = ms_chunk_key(1, 5000), b = ms_chunk_key(2, 5000);

	(void)state;
	assert_int_not_equal(a, b);
	assert_int_equal(a >> MS_CHUNK_KEY_SLOT, 1);
	assert_int_equal(b >> MS_CHUNK_KEY_SLOT, 2);
	assert_int_equal(ms_chunkmap_bits(&m, a), 0);
	assert_int_equal(ms_chunkmap_bits(&m, b), 1);
	assert_int_equal(ms_chunkmap_bits(&m, a), 0);
	ms_chunkmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_map),
		cmocka_unit_test(keys_keep_their_bitmaps),
		cmocka_unit_test(slots_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
