/*
 * The machine's header features, checked against what the test reads from
 * /proc and /sys itself: perf's tools parse these sections blindly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "perfdata/format.h"
#include "perfdata/hostinfo.h"

static struct ms_buf f[HEADER_FEAT_BITS];

static int setup(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		ms_buf_init(&f[i]);
	ms_hostinfo_features(f);
	return 0;
}

static int teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		ms_buf_release(&f[i]);
	return 0;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A perf header string at p: u32 padded length, then the NUL-terminated text. */
static const char *perf_string(const unsigned char *p, size_t avail, uint32_t *len)
{
	assert_true(avail >= 4);
	memcpy(len, p, 4);
	assert_true(*len % 64 == 0 && *len > 0 && 4 + (size_t)*len <= avail);
	assert_non_null(memchr(p + 4, 0, *len));
	return (const char *)p + 4;
}

/* The CPU description is /proc/cpuinfo's model name, as perf writes it. */
static void cpu_desc_is_the_model_name(void **state)
{
	char line[512], want[256] = "";
	FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
	uint32_t len;
	const char *got;

	(void)state;
	if (!cpuinfo)
		skip();
	while (fgets(line, sizeof(line), cpuinfo))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(want, sizeof(want), "%s", strchr(line, ':') + 2);
			want[strcspn(want, "\n")] = 0;
			break;
		}
	fclose(cpuinfo);
	if (!want[0])
		skip();                             /* not x86: no "model name" line */
	got = perf_string(f[HEADER_CPUDESC].data, f[HEADER_CPUDESC].len, &len);
	assert_string_equal(got, want);
	assert_int_equal(f[HEADER_CPUDESC].len, 4 + len);
}

/* CPU_TOPOLOGY: core and thread sibling lists, then a (core, socket) pair per CPU. */
static void topology_has_every_cpu(void **state)
{
	const struct ms_buf *b = &f[HEADER_CPU_TOPOLOGY];
	size_t off = 0;
	uint32_t n, i, len, core;
	int list, cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	char path[128];
	FILE *cf;
	long want_core = -1;

	(void)state;
	if (!b->len)
		skip();                             /* no topology in /sys here */
	for (list = 0; list < 2; list++) {
		assert_true(off + 4 <= b->len);
		memcpy(&n, b->data + off, 4);
		assert_true(n >= 1 && n <= (uint32_t)cpus);
		off += 4;
		for (i = 0; i < n; i++) {
			perf_string(b->data + off, b->len - off, &len);
			off += 4 + len;
		}
	}
	assert_true(off + 8 * (size_t)cpus <= b->len);
	memcpy(&core, b->data + off, 4);        /* cpu0's core id */
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/topology/core_id");
	cf = fopen(path, "r");
	if (cf) {
		if (fscanf(cf, "%ld", &want_core) != 1)
			want_core = -1;
		fclose(cf);
	}
	assert_int_equal((int32_t)core, (int32_t)want_core);
}

/* HOSTNAME, OSRELEASE and ARCH are uname's; NRCPUS the CPUs there are and online; TOTAL_MEM in KiB. */
static void names_counts_and_memory(void **state)
{
	struct utsname u;
	const struct { int feat; const char *want; } names[] = {
		{ HEADER_HOSTNAME, u.nodename }, { HEADER_OSRELEASE, u.release }, { HEADER_ARCH, u.machine } };
	struct sysinfo si;
	uint32_t len, cpus[2];
	uint64_t kib;
	size_t i;

	(void)state;
	assert_int_equal(uname(&u), 0);
	for (i = 0; i < 3; i++) {
		assert_string_equal(perf_string(f[names[i].feat].data, f[names[i].feat].len, &len), names[i].want);
		assert_int_equal(f[names[i].feat].len, 4 + len);
	}
	assert_int_equal(f[HEADER_NRCPUS].len, 8);
	memcpy(cpus, f[HEADER_NRCPUS].data, 8);
	assert_int_equal(cpus[0], sysconf(_SC_NPROCESSORS_CONF));
	assert_int_equal(cpus[1], sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(f[HEADER_TOTAL_MEM].len, 8);
	memcpy(&kib, f[HEADER_TOTAL_MEM].data, 8);
	assert_int_equal(sysinfo(&si), 0);
	assert_int_equal(kib, (uint64_t)si.totalram * si.mem_unit / 1024);
}

/* CLOCKID is the clock's resolution; CLOCK_DATA version 1, the clock, and both clocks read in the call. */
static void clock_data_brackets_the_call(void **state)
{
	struct ms_buf c[HEADER_FEAT_BITS];
	struct { uint32_t version, clockid; uint64_t real, mono; } d;
	struct timespec res;
	uint64_t ns, before[2], after[2];
	int i, k;

	(void)state;
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		ms_buf_init(&c[i]);
	for (k = 0; k < 2; k++)
		before[k] = clock_ns(k ? CLOCK_MONOTONIC : CLOCK_REALTIME);
	ms_hostinfo_clock(c, CLOCK_MONOTONIC);
	for (k = 0; k < 2; k++)
		after[k] = clock_ns(k ? CLOCK_MONOTONIC : CLOCK_REALTIME);
	assert_int_equal(clock_getres(CLOCK_MONOTONIC, &res), 0);
	assert_int_equal(c[HEADER_CLOCKID].len, 8);
	memcpy(&ns, c[HEADER_CLOCKID].data, 8);
	assert_int_equal(ns, (uint64_t)res.tv_sec * 1000000000ULL + (uint64_t)res.tv_nsec);
	assert_int_equal(c[HEADER_CLOCK_DATA].len, sizeof(d));
	memcpy(&d, c[HEADER_CLOCK_DATA].data, sizeof(d));
	assert_int_equal(d.version, 1);
	assert_int_equal(d.clockid, CLOCK_MONOTONIC);
	assert_true(d.real >= before[0] && d.real <= after[0]);
	assert_true(d.mono >= before[1] && d.mono <= after[1]);
	for (i = 0; i < HEADER_FEAT_BITS; i++) {
		if (i != HEADER_CLOCKID && i != HEADER_CLOCK_DATA)
			assert_int_equal(c[i].len, 0);
		ms_buf_release(&c[i]);
	}
}

/* The three sections perf 6.1 always writes hold a count of 0. */
static void empty_sections_are_zero_counts(void **state)
{
	static const int feats[] = { HEADER_BPF_PROG_INFO, HEADER_BPF_BTF, HEADER_PMU_CAPS };
	uint32_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		assert_int_equal(f[feats[i]].len, 4);
		memcpy(&v, f[feats[i]].data, 4);
		assert_int_equal(v, 0);
	}
}

/* PMU_MAPPINGS names the software PMU with its type, 1, as in /sys. */
static void pmu_mappings_name_software(void **state)
{
	const struct ms_buf *b = &f[HEADER_PMU_MAPPINGS];
	size_t off = 4;
	uint32_t n, i, type, len;
	int found = 0;

	(void)state;
	if (!b->len)
		skip();
	memcpy(&n, b->data, 4);
	for (i = 0; i < n; i++) {
		const char *name;

		assert_true(off + 4 <= b->len);
		memcpy(&type, b->data + off, 4);
		off += 4;
		name = perf_string(b->data + off, b->len - off, &len);
		off += 4 + len;
		if (!strcmp(name, "software")) {
			assert_int_equal(type, 1);
			found = 1;
		}
	}
	assert_int_equal(off, b->len);
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_desc_is_the_model_name),
		cmocka_unit_test(topology_has_every_cpu),
		cmocka_unit_test(names_counts_and_memory),
		cmocka_unit_test(clock_data_brackets_the_call),
		cmocka_unit_test(empty_sections_are_zero_counts),
		cmocka_unit_test(pmu_mappings_name_software),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
