/*
 * The calls attached threads are blocked in (lib/kernel/blocked.c):
 * /proc/TID/syscall parsed (a call, "running", a task outside any call),
 * the mapping calls told apart by number, and each entry sample laid out
 * as its event's attr says, read back by the stream's own parser with
 * its arguments where the tracepoint's format puts them. And a thread of
 * this process blocked in a call here is found by the walk.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/blocked.h"
#include "stream/sample.h"

static void parses_proc_syscall(void **state)
{
	uint64_t args[6], pc;
	long nr;

	(void)state;
	assert_int_equal(ms_blocked_parse("11 0x7f0000001000 0x2000 0x0 0x0 0x0 0x0 0x7ffc0000 0x7f12345678\n",
					  &nr, args, &pc), 0);
	assert_int_equal(nr, 11);
	assert_int_equal(args[0], 0x7f0000001000ULL);
	assert_int_equal(args[1], 0x2000);
	assert_int_equal(pc, 0x7f12345678ULL);
	assert_int_equal(ms_blocked_parse("running\n", &nr, args, &pc), -EINVAL);
	assert_int_equal(ms_blocked_parse("-1 0x7ffc0000 0x7f12345678\n", &nr, args, &pc), -EINVAL);
	assert_int_equal(ms_blocked_parse("", &nr, args, &pc), -EINVAL);
}

static void mapping_calls_only(void **state)
{
	int n = -1;

	(void)state;
	assert_string_equal(ms_blocked_call(SYS_munmap, &n), "munmap");
	assert_int_equal(n, 2);
	assert_string_equal(ms_blocked_call(SYS_mremap, &n), "mremap");
	assert_int_equal(n, 5);
	assert_null(ms_blocked_call(SYS_read, &n));
	assert_null(ms_blocked_call(-1, &n));
}

/* An entry of mremap in the layout of record's syscall entries, read back. */
static void entry_reads_back(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_TRACEPOINT, .config = 777,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN |
						    PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
				     .sample_regs_user = 1ULL << 7, .sample_stack_user = 64, .sample_id_all = 1 };
	struct ms_blocked b = { .pid = 10, .tid = 11, .time = 5000, .nr = SYS_mremap, .nargs = 5,
				.args = { 0x7f0000001000ULL, 4096, 8192, 0, 0 }, .pc = 0x401000 };
	unsigned char rec[512] __attribute__((aligned(8)));
	const struct perf_event_header *h = (const void *)rec;
	struct ms_sample s;
	uint64_t v;
	uint32_t nr;
	uint16_t tp;
	size_t size = ms_blocked_entry(&a, 42, &b, rec, sizeof(rec));

	(void)state;
	assert_true(size > 0);
	assert_int_equal(size % 8, 0);
	assert_int_equal(h->type, PERF_RECORD_SAMPLE);
	assert_int_equal(h->size, size);
	assert_int_equal(ms_sample_parse(&a, h, &s), 0);
	assert_int_equal(s.id, 42);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 10);
	assert_int_equal(s.tid, 11);
	assert_int_equal(s.time, 5000);
	assert_int_equal(s.chain_len, 0);
	assert_int_equal(s.raw_size, 16 + 5 * 8 + 4);
	memcpy(&tp, s.raw, 2);
	assert_int_equal(tp, 777);
	memcpy(&nr, s.raw + 8, 4);
	assert_int_equal(nr, SYS_mremap);
	memcpy(&v, s.raw + 16, 8);                   /* addr, then old_len, new_len, ... */
	assert_int_equal(v, 0x7f0000001000ULL);
	memcpy(&v, s.raw + 16 + 2 * 8, 8);
	assert_int_equal(v, 8192);
	assert_int_equal(s.stack_size, 0);
	/* Too small a buffer, or a field not written here: none. */
	assert_int_equal(ms_blocked_entry(&a, 42, &b, rec, 64), 0);
	a.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	assert_int_equal(ms_blocked_entry(&a, 42, &b, rec, sizeof(rec)), 0);
}

static int made;

static int count(const struct perf_event_header *rec, void *ctx)
{
	(void)rec;
	(void)ctx;
	made++;
	return 0;
}

static int blocker[2];
static pid_t blocked_tid;

static void *block_in_read(void *arg)
{
	char c;

	(void)arg;
	blocked_tid = (pid_t)syscall(SYS_gettid);
	return read(blocker[0], &c, 1) == 1 ? NULL : NULL;
}

/* A thread blocked in read(), not a mapping call, and one gone: no entry (and no live events are needed). */
static void other_calls_make_nothing(void **state)
{
	struct ms_blocked_to to = { .tgid = getpid(), .time = 1, .fn = count };
	pthread_t t;

	(void)state;
	assert_int_equal(pipe(blocker), 0);
	assert_int_equal(pthread_create(&t, NULL, block_in_read, NULL), 0);
	usleep(20000);
	made = 0;
	assert_int_equal(ms_blocked_task(blocked_tid, &to), 0);
	assert_int_equal(ms_blocked_task(getpid(), &to), 0);             /* running: this very thread */
	assert_int_equal(ms_blocked_task(999999999, &to), 0);
	assert_int_equal(made, 0);
	assert_int_equal(write(blocker[1], "x", 1), 1);
	pthread_join(t, NULL);
	close(blocker[0]);
	close(blocker[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_proc_syscall),
		cmocka_unit_test(mapping_calls_only),
		cmocka_unit_test(entry_reads_back),
		cmocka_unit_test(other_calls_make_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
