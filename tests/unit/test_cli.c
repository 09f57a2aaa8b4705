/* Strict number parsing for options. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli.h"
#include "session/execwin.h"

static void parses_in_range(void **state)
{
	uint64_t v = 0;

	assert_int_equal(cli_parse_u64("1024", 1, 4096, &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
}

static void rejects_junk_sign_and_range(void **state)
{
	uint64_t v = 7;

	assert_int_equal(cli_parse_u64("", 0, 10, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("12x", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("+1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("0", 1, 100, &v), -ERANGE);
	assert_int_equal(cli_parse_u64("101", 1, 100, &v), -ERANGE);
	assert_int_equal(cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 7);                 /* untouched on failure */
}

/* A sample as mapscope record writes them: header, IDENTIFIER, IP, then PID and TID. */
static void track_sample(uint32_t pid, uint64_t ip)
{
	unsigned char rec[40] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(rec) };

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 16, &ip, 8);
	memcpy(rec + 24, &pid, 4);
	memcpy(rec + 28, &pid, 4);
	exec_window_track((const void *)rec);
}

static void track_exec(uint32_t pid)
{
	unsigned char rec[32] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC,
				       .size = sizeof(rec) };

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, &pid, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, "exe", 4);
	exec_window_track((const void *)rec);
}

/*
 * The exec window ends at the process's first sample of user code, not at
 * a sample the kernel made while running the exec: a clock tick in the
 * loader (the flaky maps-oracle failure: the image's holes were left
 * mapped), a fault clearing .bss, a VMA tree write.
 */
static void exec_window_ends_at_user_code(void **state)
{
	exec_window_reset();
	track_exec(100);
	track_exec(200);
	assert_true(exec_window_open(100));
	track_sample(100, 0xffffffff82232913ULL);   /* task-clock, in the kernel */
	track_sample(100, 0xffffffff8177879aULL);   /* a fault in padzero */
	assert_true(exec_window_open(100));
	track_sample(300, 0x401000);                /* another process's code */
	assert_true(exec_window_open(100));
	track_sample(100, 0x7ffb19b82c47ULL);       /* the loader's first syscall: user code */
	assert_false(exec_window_open(100));
	assert_true(exec_window_open(200));
	assert_true(exec_window_any());
	track_sample(200, 0x55ebc0e20000ULL);
	assert_false(exec_window_any());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_in_range),
		cmocka_unit_test(rejects_junk_sign_and_range),
		cmocka_unit_test(exec_window_ends_at_user_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
