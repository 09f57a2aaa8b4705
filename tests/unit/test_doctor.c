/*
 * The doctor's probe against what the test reads itself: root or not,
 * kernel.perf_event_paranoid, whether tracefs's syscall tracepoints can be
 * read; the mode follows from them by the kernel's rules; every check has
 * words, and every missing piece its fix.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/doctor.h"
#include "kernel/tracefs.h"

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

static void probe_matches_the_machine(void **state)
{
	struct ms_doctor d;
	const char *dir;
	uint64_t id;
	bool readable;
	size_t i;

	(void)state;
	ms_doctor_probe(&d);
	assert_int_equal(d.root, geteuid() == 0);
	assert_int_equal(d.paranoid, paranoid());
	dir = ms_tracefs_dir();
	readable = dir && !ms_tracefs_event_id(dir, "syscalls", "sys_exit_munmap", &id);
	assert_int_equal(d.tracefs_err == 0, readable);
	if (d.root && readable)
		assert_int_equal(d.mode, MS_MODE_FULL);
	if (!readable)
		assert_true(d.mode == MS_MODE_PERF || d.mode == MS_MODE_NONE);
	assert_int_equal(ms_doctor_privileged(), d.root || d.cap_perfmon || d.cap_sys_admin || d.paranoid <= -1);
	assert_true(d.n >= 5 && d.n <= MS_DOCTOR_MAX_CHECKS);
	for (i = 0; i < d.n; i++) {
		assert_non_null(d.checks[i].what);
		assert_true(strlen(d.checks[i].detail) > 0);
		if (d.checks[i].state == MS_CHECK_NO)
			assert_true(strlen(d.checks[i].fix) > 0);
	}
	assert_string_equal(d.checks[0].what, "privileges");
	assert_string_equal(d.checks[1].what, "tracefs");
}

static void modes_have_names(void **state)
{
	(void)state;
	assert_string_equal(ms_record_mode_name(MS_MODE_FULL), "full");
	assert_string_equal(ms_record_mode_name(MS_MODE_USER), "user");
	assert_string_equal(ms_record_mode_name(MS_MODE_PERF), "perf");
	assert_string_equal(ms_record_mode_name(MS_MODE_NONE), "none");
	assert_string_equal(ms_record_mode_loses(MS_MODE_FULL), "nothing");
	assert_non_null(strstr(ms_record_mode_loses(MS_MODE_USER), "kernel mode"));
	assert_non_null(strstr(ms_record_mode_loses(MS_MODE_PERF), "unmap"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_matches_the_machine),
		cmocka_unit_test(modes_have_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
