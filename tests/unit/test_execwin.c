/* The exec windows: which processes' maps are still their exec's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "perfdata/format.h"
#include "session/execwin.h"

/* A sample as mapscope record writes them: header, IDENTIFIER, IP, then PID and TID. */
static void track_sample(struct ms_execwin *w, uint32_t pid, uint64_t ip)
{
	struct perf_record_sample_head s = {
		.header = { .type = PERF_RECORD_SAMPLE, .size = sizeof(s) }, .ip = ip, .pid = pid, .tid = pid,
	};

	assert_int_equal(ms_execwin_track(w, &s.header), 0);
}

static void track_exec(struct ms_execwin *w, uint32_t pid)
{
	struct { struct perf_record_comm c; char comm[16]; } rec = {
		.c = { .header = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC,
				   .size = sizeof(rec) }, .pid = pid, .tid = pid },
		.comm = "exe",
	};

	assert_int_equal(ms_execwin_track(w, &rec.c.header), 0);
}

/*
 * The exec window ends at the process's first sample of user code, not at
 * a sample the kernel made while running the exec: a clock tick in the
 * loader (the flaky maps-oracle failure: the image's holes were left
 * mapped), a fault clearing .bss, a VMA tree write.
 */
static void ends_at_user_code(void **state)
{
	struct ms_execwin w;

	ms_execwin_init(&w);
	track_exec(&w, 100);
	track_exec(&w, 200);
	assert_true(ms_execwin_open(&w, 100));
	track_sample(&w, 100, 0xffffffff82232913ULL);   /* task-clock, in the kernel */
	track_sample(&w, 100, 0xffffffff8177879aULL);   /* a fault in padzero */
	assert_true(ms_execwin_open(&w, 100));
	track_sample(&w, 300, 0x401000);                /* another process's code */
	assert_true(ms_execwin_open(&w, 100));
	track_sample(&w, 100, 0x7ffb19b82c47ULL);       /* the loader's first syscall: user code */
	assert_false(ms_execwin_open(&w, 100));
	assert_true(ms_execwin_open(&w, 200));
	assert_true(ms_execwin_any(&w));
	track_sample(&w, 200, 0x55ebc0e20000ULL);
	assert_false(ms_execwin_any(&w));
	ms_execwin_release(&w);
}

/* A build runs hundreds of execs at once: every one keeps its window (the old table kept 64). */
static void holds_windows_without_a_cap(void **state)
{
	struct ms_execwin w;
	uint32_t pid;

	ms_execwin_init(&w);
	for (pid = 1000; pid < 1500; pid++)
		track_exec(&w, pid);
	track_exec(&w, 1000);                           /* a second exec: still one window */
	for (pid = 1000; pid < 1500; pid++)
		assert_true(ms_execwin_open(&w, pid));
	for (pid = 1000; pid < 1499; pid++)
		track_sample(&w, pid, 0x401000);
	assert_false(ms_execwin_open(&w, 1000));
	assert_true(ms_execwin_open(&w, 1499));
	track_sample(&w, 1499, 0x401000);
	assert_false(ms_execwin_any(&w));
	ms_execwin_release(&w);
}

/* Records too short to hold what is read are passed over. */
static void ignores_short_records(void **state)
{
	struct perf_record_comm c = { .header = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC,
						  .size = 12 }, .pid = 5 };
	struct ms_execwin w;

	ms_execwin_init(&w);
	assert_int_equal(ms_execwin_track(&w, &c.header), 0);
	assert_false(ms_execwin_any(&w));
	ms_execwin_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ends_at_user_code),
		cmocka_unit_test(holds_windows_without_a_cap),
		cmocka_unit_test(ignores_short_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
