/* The growable byte buffer: layout of what it appends, and its sticky failure. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/buf.h"

static void appends_in_order(void **state)
{
	struct ms_buf b;
	uint32_t u;
	uint64_t q;

	(void)state;
	ms_buf_init(&b);
	ms_buf_u32(&b, 0x11223344);
	ms_buf_u64(&b, 0x0102030405060708ULL);
	ms_buf_cstr(&b, "ab");
	ms_buf_zero(&b, 2);
	assert_int_equal(b.len, 4 + 8 + 3 + 2);
	memcpy(&u, b.data, 4);
	memcpy(&q, b.data + 4, 8);
	assert_int_equal(u, 0x11223344);
	assert_true(q == 0x0102030405060708ULL);
	assert_memory_equal(b.data + 12, "ab\0\0\0", 5);
	assert_int_equal(ms_buf_error(&b), 0);
	ms_buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

/* perf's header strings: a u32 length that is the padded size, then the string padded to 64. */
static void perf_string_pads_to_64(void **state)
{
	struct ms_buf b;
	char s64[64], s65[65];
	uint32_t len;

	(void)state;
	ms_buf_init(&b);
	ms_buf_perf_string(&b, "x86_64");
	memcpy(&len, b.data, 4);
	assert_int_equal(len, 64);
	assert_int_equal(b.len, 4 + 64);
	assert_string_equal((const char *)b.data + 4, "x86_64");
	assert_int_equal(b.data[4 + 63], 0);

	memset(s64, 'a', 63);                   /* 63 characters and the NUL: exactly 64 */
	s64[63] = 0;
	ms_buf_perf_string(&b, s64);
	memcpy(&len, b.data + 68, 4);
	assert_int_equal(len, 64);
	memset(s65, 'b', 64);                   /* 64 characters: the NUL needs another 64 */
	s65[64] = 0;
	ms_buf_perf_string(&b, s65);
	memcpy(&len, b.data + 68 + 68, 4);
	assert_int_equal(len, 128);
	assert_int_equal(b.len, 68 + 68 + 4 + 128);
	ms_buf_release(&b);
}

static void aligns_with_zeros(void **state)
{
	struct ms_buf b;

	(void)state;
	ms_buf_init(&b);
	ms_buf_append(&b, "abc", 3);
	ms_buf_align(&b, 8);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "abc\0\0\0\0\0", 8);
	ms_buf_align(&b, 8);                    /* aligned already: nothing added */
	assert_int_equal(b.len, 8);
	ms_buf_release(&b);
}

/* Growth keeps what was there, across many doublings. */
static void grows_and_keeps(void **state)
{
	struct ms_buf b;
	uint32_t i, v;

	(void)state;
	ms_buf_init(&b);
	for (i = 0; i < 100000; i++)
		ms_buf_u32(&b, i * 7);
	assert_int_equal(b.len, 400000);
	assert_true(b.cap >= b.len);
	for (i = 0; i < 100000; i += 997) {
		memcpy(&v, b.data + 4 * i, 4);
		assert_int_equal(v, i * 7);
	}
	ms_buf_release(&b);
}

/* A size that cannot be held fails once, and every later append is refused alike. */
static void failure_is_sticky(void **state)
{
	struct ms_buf b;

	(void)state;
	ms_buf_init(&b);
	ms_buf_u32(&b, 1);
	ms_buf_zero(&b, SIZE_MAX - 8);
	assert_int_equal(ms_buf_error(&b), -ENOMEM);
	assert_int_equal(b.len, 4);             /* kept what it held */
	ms_buf_u32(&b, 2);
	assert_int_equal(b.len, 4);
	assert_int_equal(ms_buf_error(&b), -ENOMEM);
	ms_buf_release(&b);
	assert_int_equal(ms_buf_error(&b), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(appends_in_order),
		cmocka_unit_test(perf_string_pads_to_64),
		cmocka_unit_test(aligns_with_zeros),
		cmocka_unit_test(grows_and_keeps),
		cmocka_unit_test(failure_is_sticky),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
