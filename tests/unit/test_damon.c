/*
 * A kdamond of our own, on a fake DAMON sysfs tree: made only where none
 * exists, configured as asked, and torn down by its watchdog on a clean
 * stop and when the recorder is killed; someone else's left untouched.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/damon.h"
#include "fake_tracefs.h"

static char root[64];

/* root/rel's first line. */
static const char *get(const char *rel)
{
	static char text[64];
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* The tree as the kernel has it once kdamond 0, its context and two targets exist, nr_kdamonds as given. */
static int make_tree(void **state)
{
	static const char *const files[] = {
		"kdamonds/0/state", "kdamonds/0/contexts/nr_contexts", "kdamonds/0/contexts/0/operations",
		"kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us",
		"kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us",
		"kdamonds/0/contexts/0/monitoring_attrs/intervals/update_us",
		"kdamonds/0/contexts/0/monitoring_attrs/nr_regions/min",
		"kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max",
		"kdamonds/0/contexts/0/targets/nr_targets", "kdamonds/0/contexts/0/targets/0/pid_target",
		"kdamonds/0/contexts/0/targets/1/pid_target",
	};
	char pid[32];
	size_t i;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/ms-damon-XXXXXX");
	assert_non_null(mkdtemp(root));
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fake_put(root, files[i], "0\n");
	fake_put(root, "kdamonds/0/state", "off\n");
	fake_put(root, "kdamonds/nr_kdamonds", "0\n");
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fake_put(root, "kdamonds/0/pid", pid);
	return 0;
}

static int remove_tree(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void available_only_where_none_exists(void **state)
{
	(void)state;
	assert_int_equal(ms_damon_available(root), 0);
	fake_put(root, "kdamonds/nr_kdamonds", "1\n");
	assert_int_equal(ms_damon_available(root), -EBUSY);
	assert_int_equal(ms_damon_available("/nonexistent"), -ENOENT);
}

static void configured_started_and_removed(void **state)
{
	struct ms_damon_opts o = { .sample_us = 2000, .aggr_us = 50000, .max_regions = 500 };
	const pid_t pids[] = { 111, 222 };
	struct ms_damon *d;

	(void)state;
	d = ms_damon_start(root, &o, pids, 2);
	assert_non_null(d);
	assert_int_equal(ms_damon_kdamond(d), getpid());
	assert_string_equal(get("kdamonds/nr_kdamonds"), "1");
	assert_string_equal(get("kdamonds/0/state"), "on");
	assert_string_equal(get("kdamonds/0/contexts/nr_contexts"), "1");
	assert_string_equal(get("kdamonds/0/contexts/0/operations"), "vaddr");
	assert_string_equal(get("kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us"), "2000");
	assert_string_equal(get("kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us"), "50000");
	assert_string_equal(get("kdamonds/0/contexts/0/monitoring_attrs/intervals/update_us"), "1000000");
	assert_string_equal(get("kdamonds/0/contexts/0/monitoring_attrs/nr_regions/min"), "10");
	assert_string_equal(get("kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max"), "500");
	assert_string_equal(get("kdamonds/0/contexts/0/targets/nr_targets"), "2");
	assert_string_equal(get("kdamonds/0/contexts/0/targets/0/pid_target"), "111");
	assert_string_equal(get("kdamonds/0/contexts/0/targets/1/pid_target"), "222");
	assert_int_equal(ms_damon_stop(d), 0);
	assert_string_equal(get("kdamonds/0/state"), "off");
	assert_string_equal(get("kdamonds/nr_kdamonds"), "0");
}

static void someone_elses_is_left_alone(void **state)
{
	const pid_t pids[] = { 111 };
	struct ms_damon_opts o = { 0 };

	(void)state;
	fake_put(root, "kdamonds/nr_kdamonds", "1\n");
	fake_put(root, "kdamonds/0/state", "on\n");
	errno = 0;
	assert_null(ms_damon_start(root, &o, pids, 1));
	assert_int_equal(errno, EBUSY);
	assert_string_equal(get("kdamonds/nr_kdamonds"), "1");
	assert_string_equal(get("kdamonds/0/state"), "on");
	assert_string_equal(get("kdamonds/0/contexts/0/targets/0/pid_target"), "0");
}

/* The recorder killed by SIGKILL: its watchdog still turns our kdamond off and removes it. */
static void killed_recorder_leaves_nothing(void **state)
{
	const pid_t pids[] = { 111 };
	struct ms_damon_opts o = { 0 };
	struct timespec ms = { 0, 10000000 };
	pid_t rec = fork();
	int i, status;

	(void)state;
	assert_true(rec >= 0);
	if (rec == 0) {
		if (!ms_damon_start(root, &o, pids, 1))
			_exit(1);
		pause();
		_exit(0);
	}
	for (i = 0; i < 500 && strcmp(get("kdamonds/0/state"), "on"); i++)
		nanosleep(&ms, NULL);
	assert_string_equal(get("kdamonds/0/state"), "on");
	kill(rec, SIGKILL);
	assert_int_equal(waitpid(rec, &status, 0), rec);
	for (i = 0; i < 500 && strcmp(get("kdamonds/nr_kdamonds"), "0"); i++)
		nanosleep(&ms, NULL);
	assert_string_equal(get("kdamonds/nr_kdamonds"), "0");
	assert_string_equal(get("kdamonds/0/state"), "off");
}

/* An aggregate from the kdamond, written as its target's: pid and tid by target_id, the rest as it was. */
static void aggregate_as_its_target(void **state)
{
	const pid_t pids[] = { 1000, 2000 };
	union { struct ms_damon_sample s; unsigned char b[128]; } in = { 0 }, out;
	const struct perf_event_header *h;
	uint64_t target = 1;

	(void)state;
	in.s.header = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, 104 };
	in.s.pid = in.s.tid = 77;                       /* the kdamond */
	in.s.time = 12345;
	in.s.raw_size = 52;
	memcpy(in.b + MS_DAMON_SAMPLE_TARGET, &target, 8);
	h = ms_damon_sample_as_target(&in.s.header, pids, 2, &out, sizeof(out));
	assert_ptr_equal(h, &out);
	assert_int_equal(out.s.pid, 2000);
	assert_int_equal(out.s.tid, 2000);
	assert_int_equal(out.s.time, 12345);
	assert_memory_equal(out.b + MS_DAMON_SAMPLE_TARGET, &target, 8);
	assert_int_equal(in.s.pid, 77);                 /* the ring's record is not written */
	target = 2;                                     /* no such target: left as it is */
	memcpy(in.b + MS_DAMON_SAMPLE_TARGET, &target, 8);
	assert_ptr_equal(ms_damon_sample_as_target(&in.s.header, pids, 2, &out, sizeof(out)), &in.s.header);
	in.s.header.size = 40;                          /* too short to hold a target */
	assert_ptr_equal(ms_damon_sample_as_target(&in.s.header, pids, 2, &out, sizeof(out)), &in.s.header);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(available_only_where_none_exists, make_tree, remove_tree),
		cmocka_unit_test_setup_teardown(configured_started_and_removed, make_tree, remove_tree),
		cmocka_unit_test_setup_teardown(someone_elses_is_left_alone, make_tree, remove_tree),
		cmocka_unit_test_setup_teardown(killed_recorder_leaves_nothing, make_tree, remove_tree),
		cmocka_unit_test(aggregate_as_its_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
