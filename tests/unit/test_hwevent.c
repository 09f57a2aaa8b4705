/*
 * Hardware data-address events resolved by name on fake PMU trees: Intel
 * (PEBS aliases and formats), AMD (ibs_op), Arm (arm_spe_0), and a machine
 * with no hardware PMU, which this one is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/hwevent.h"
#include "fake_tracefs.h"

static char root[64];
static struct perf_event_attr a;
static char why[512];

static int make_trees(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/ms-pmu-XXXXXX");
	assert_non_null(mkdtemp(root));
	fake_put(root, "software/type", "1\n");
	fake_put(root, "tracepoint/type", "2\n");
	fake_put(root, "cpu/type", "4\n");
	fake_put(root, "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	fake_put(root, "cpu/events/mem-stores", "event=0xd0,umask=0x82\n");
	fake_put(root, "cpu/format/event", "config:0-7\n");
	fake_put(root, "cpu/format/umask", "config:8-15\n");
	fake_put(root, "cpu/format/ldlat", "config1:0-15\n");
	fake_put(root, "cpu/format/cmask", "config:24-31\n");
	fake_put(root, "ibs_op/type", "11\n");
	fake_put(root, "ibs_op/format/cnt_ctl", "config:19\n");
	fake_put(root, "arm_spe_0/type", "12\n");
	fake_put(root, "arm_spe_0/format/load_filter", "config:33\n");
	fake_put(root, "arm_spe_0/format/min_latency", "config2:0-11\n");
	fake_put(root, "arm_spe_0/format/split", "config:0-3,8-11\n");
	return 0;
}

static int remove_trees(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static int resolve(const char *spec)
{
	return ms_hwevent_resolve(root, spec, &a, why, sizeof(why));
}

/* PEBS: the aliases, perf's default load latency, and the same spelled out. */
static void intel_names(void **state)
{
	(void)state;
	assert_int_equal(resolve("mem-loads"), 0);
	assert_int_equal(a.type, 4);
	assert_int_equal(a.config, 0x1cd);
	assert_int_equal(a.config1, 30);
	assert_int_equal(a.precise_ip, 2);
	assert_int_equal(resolve("mem-stores"), 0);
	assert_int_equal(a.config, 0x82d0);
	assert_int_equal(a.config1, 0);
	assert_int_equal(resolve("cpu/mem-loads,ldlat=30/P"), 0);
	assert_int_equal(a.config, 0x1cd);
	assert_int_equal(a.config1, 30);
	assert_int_equal(a.precise_ip, 2);
	assert_int_equal(resolve("cpu/event=0xcd,umask=0x1,ldlat=50,period=997/ppu"), 0);
	assert_int_equal(a.config, 0x1cd);
	assert_int_equal(a.config1, 50);
	assert_int_equal(a.sample_period, 997);
	assert_int_equal(a.precise_ip, 2);
	assert_true(a.exclude_kernel);
	assert_int_equal(resolve("dTLB-load-misses"), 0);
	assert_int_equal(a.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(a.config, PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_READ << 8 |
			 PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	assert_int_equal(a.precise_ip, 2);
}

static void amd_ibs_and_arm_spe(void **state)
{
	(void)state;
	assert_int_equal(resolve("ibs_op//"), 0);
	assert_int_equal(a.type, 11);
	assert_int_equal(a.config, 0);
	assert_int_equal(resolve("ibs_op/cnt_ctl=1/"), 0);
	assert_int_equal(a.config, 1ULL << 19);
	assert_int_equal(resolve("arm_spe//"), 0);                /* the first arm_spe_N */
	assert_int_equal(a.type, 12);
	assert_int_equal(resolve("arm_spe_0/load_filter=1,min_latency=64/"), 0);
	assert_int_equal(a.config, 1ULL << 33);
	assert_int_equal(a.config2, 64);
	assert_int_equal(resolve("arm_spe_0/split=0xab/"), 0);    /* a field in two ranges, low bits first */
	assert_int_equal(a.config, 0xb | 0xa << 8);
}

static void bad_names(void **state)
{
	(void)state;
	assert_int_equal(resolve("cpu/no-such-event/"), -ENOENT);
	assert_non_null(strstr(why, "no-such-event"));
	assert_int_equal(resolve("cpu/mem-loads"), -EINVAL);
	assert_int_equal(resolve("cpu/mem-loads/x"), -EINVAL);
	assert_int_equal(resolve("cpu/ldlat=lots/"), -EINVAL);
	assert_int_equal(resolve("no-such-alias"), -ENOENT);
	assert_int_equal(resolve(""), -EINVAL);
}

/* No hardware PMU (a virtual machine): every name says so. */
static void no_pmu(void **state)
{
	static const char *const names[] = { "mem-loads", "mem-stores", "dTLB-load-misses",
					     "cpu/mem-loads,ldlat=30/P", "ibs_op//", "arm_spe//" };
	size_t i;

	make_trees(state);
	for (i = 0; i < 3; i++) {
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", root, i == 0 ? "cpu" : i == 1 ? "ibs_op" : "arm_spe_0");
		assert_int_equal(system(cmd), 0);
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(resolve(names[i]), -ENODEV);
		assert_non_null(strstr(why, "no"));
	}
	/* This machine, where it has no core PMU either. */
	if (access(MS_PMU_SYSFS "/cpu", F_OK) && access(MS_PMU_SYSFS "/cpu_core", F_OK))
		assert_int_equal(ms_hwevent_resolve(MS_PMU_SYSFS, "mem-loads", &a, why, sizeof(why)), -ENODEV);
	remove_trees(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(intel_names, make_trees, remove_trees),
		cmocka_unit_test_setup_teardown(amd_ibs_and_arm_spe, make_trees, remove_trees),
		cmocka_unit_test_setup_teardown(bad_names, make_trees, remove_trees),
		cmocka_unit_test(no_pmu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
