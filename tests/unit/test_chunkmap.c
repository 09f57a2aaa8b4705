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
	struct ms_chunk_key key;
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
	struct ms_chunk_key a = ms_chunk_key(1, 5000), b = ms_chunk_key(2, 5000);

	(void)state;
	assert_int_equal(a.chunk, b.chunk);
	assert_int_equal(a.slot, 1);
	assert_int_equal(b.slot, 2);
	assert_int_equal(ms_chunkmap_bits(&m, a), 0);
	assert_int_equal(ms_chunkmap_bits(&m, b), 1);
	assert_int_equal(ms_chunkmap_bits(&m, a), 0);
	ms_chunkmap_release(&m);
}

/*
 * Slots past 2^21, as a report of more than two million rows or a profile
 * of as many regions has: each keeps bitmaps of its own, apart from the
 * slot 2^21 below it, whose key a shift into one word made the same.
 */
static void many_slots_apart(void **state)
{
	struct ms_chunkmap m = { 0 };
	const uint64_t page = 5000, far = (uint64_t)1 << 21;

	(void)state;
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(1, page)), 0);
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(1 + far, page)), 1);
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(1 + 2 * far, page)), 2);
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(1, page)), 0);
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(UINT32_MAX, page)), 3);
	/* and pages up to 64-bit addresses' last, in a slot of their own */
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(0, UINT64_MAX >> 12)), 4);
	assert_int_equal(ms_chunkmap_bits(&m, ms_chunk_key(1, UINT64_MAX >> 12)), 5);
	ms_chunkmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_map),
		cmocka_unit_test(keys_keep_their_bitmaps),
		cmocka_unit_test(slots_apart),
		cmocka_unit_test(many_slots_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
