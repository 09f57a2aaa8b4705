/*
 * record --prefetches during a recording, on this very binary (which has
 * a prefetch instruction of its own, in spot()): its event exists before
 * any binary is scanned (the anchor); an executable file is scanned and
 * probed when its MMAP2 comes, once, and an anonymous or data mapping is
 * not; with hot=1 the site waits until IP samples in its function were
 * counted for the phase; windows say when the next tick is due. Needs
 * uprobe_events writable (root): skipped, with the reason, without it.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/live.h>

#include "kernel/tracefs.h"
#include "perfdata/format.h"
#include "session/prefetches.h"

#define MS 1000000ULL

static char exe[PATH_MAX];

/* The prefetch of this binary's that the scan finds. */
__attribute__((noipa)) static void spot(const void *p)
{
	__asm__ volatile("prefetcht0 (%0)" : : "r"(p));
}

static union {
	struct perf_record_mmap2 m;
	unsigned char bytes[sizeof(struct perf_record_mmap2) + PATH_MAX + 8];
} rec;

/* An MMAP2 of path at start, file offset 0, with prot. */
static const struct perf_event_header *mmap2(const char *path, uint64_t start, uint32_t prot)
{
	size_t n = strlen(path) + 1;

	memset(&rec, 0, sizeof(rec));
	rec.m.header.type = PERF_RECORD_MMAP2;
	rec.m.header.size = (uint16_t)((sizeof(rec.m) + n + 7) & ~7UL);
	rec.m.pid = rec.m.tid = 42;
	rec.m.start = start;
	rec.m.len = 1 << 20;
	rec.m.prot = prot;
	memcpy(rec.m.filename, path, n);
	return &rec.m.header;
}

/* Whether uprobe_events has a probe of our event in exe, the anchor (immediates only) aside. */
static bool probed(void)
{
	char path[512], line[8192], want[PATH_MAX + 64];
	const char *dir = ms_tracefs_dir();
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	snprintf(want, sizeof(want), "p:mapscope_%d/pf %s:0x", (int)getpid(), exe);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		yes |= !strncmp(line, want, strlen(want)) && strstr(line, " base=%");   /* not the anchor */
	fclose(f);
	return yes;
}

/* The file offset of address a of this process (its mapping's, from /proc/self/maps). */
static uint64_t own_offset(uintptr_t a)
{
	unsigned long start, end, pgoff;
	char line[8192];
	uint64_t off = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) == 3 && a >= start && a < end)
			off = a - start + pgoff;
	fclose(f);
	return off;
}

static struct ms_live *live(void)
{
	struct ms_live_opts lo = { .fault_period = 1, .mmap_pages = 8 };
	struct ms_live *l = ms_live_new(&lo);

	assert_non_null(l);
	return l;
}

/* The two objects each test starts with: live's events and p of opts o. */
static struct ms_prefetches *start(const struct ms_record_opts *o, struct ms_live **l)
{
	struct ms_prefetches *p;

	*l = live();
	p = ms_prefetches_new(o, *l);
	assert_non_null(p);
	return p;
}

static int skip_without_uprobes(void)
{
	const char *dir = ms_tracefs_dir();
	char path[512];

	snprintf(path, sizeof(path), "%s/uprobe_events", dir ? dir : "/sys/kernel/tracing");
	if (!dir || access(path, W_OK)) {
		printf("SKIP: '%s' is not writable here (root and CONFIG_UPROBE_EVENTS): no uprobes to place\n", path);
		return 1;
	}
	return 0;
}

/* Followed: this binary is scanned when it is mapped executable, once; other mappings are not. */
static void scanned_as_mapped(void **state)
{
	struct ms_record_opts o = { .prefetch_follow = true };
	struct ms_live *l;
	struct ms_prefetches *p = start(&o, &l);
	size_t found, probes, unsupported;
	const char *path;

	(void)state;
	assert_false(probed());
	ms_prefetches_record(p, mmap2("//anon", 0x10000, PROT_READ | PROT_EXEC));
	ms_prefetches_record(p, mmap2(exe, 0x400000, PROT_READ));
	assert_int_equal(ms_prefetches_binary(p, 0, &path, &found, &probes, &unsupported), -ERANGE);
	ms_prefetches_record(p, mmap2(exe, 0x400000, PROT_READ | PROT_EXEC));
	ms_prefetches_record(p, mmap2(exe, 0x400000, PROT_READ | PROT_EXEC));
	assert_int_equal(ms_prefetches_binary(p, 0, &path, &found, &probes, &unsupported), 0);
	assert_string_equal(path, exe);
	assert_true(found >= 1);
	assert_int_equal(probes, found);
	assert_int_equal(ms_prefetches_binary(p, 1, &path, &found, &probes, &unsupported), -ERANGE);
	assert_true(probed());
	ms_prefetches_free(p);
	ms_live_free(l);
	assert_false(probed());
}

/* hot=1: nothing placed until the phase has passed with samples in spot(); then spot's site. */
static void hot_after_counting(void **state)
{
	struct ms_record_opts o = { .prefetch_paths = (const char *const[]){ exe }, .nr_prefetch_paths = 1,
				    .prefetch_func = "spot", .prefetch_hot = 1 };
	struct perf_record_sample_head s = { .header = { PERF_RECORD_SAMPLE, 0, sizeof(s) } };
	struct ms_live *l;
	struct ms_prefetches *p = start(&o, &l);
	size_t found, probes, unsupported;
	const char *path;

	(void)state;
	assert_int_equal(ms_prefetches_binary(p, 0, &path, &found, &probes, &unsupported), 0);
	assert_int_equal(found, 1);
	assert_int_equal(probes, 0);
	assert_int_equal(ms_prefetches_tick(p, 1000 * MS), 0);
	ms_prefetches_record(p, mmap2(exe, 0x400000, PROT_READ | PROT_EXEC));
	assert_int_equal(ms_prefetches_tick(p, 1000 * MS + MS_PREFETCHES_HOT_MS * MS), 0);
	s.ip = 0x400000 + own_offset((uintptr_t)own_offset);   /* a sample elsewhere */
	ms_prefetches_record(p, &s.header);
	assert_int_equal(ms_prefetches_tick(p, 1000 * MS + MS_PREFETCHES_HOT_MS * MS), 0);
	assert_false(probed());                  /* no sample in spot() yet */
	s.ip = 0x400000 + own_offset((uintptr_t)spot) + 1;
	ms_prefetches_record(p, &s.header);
	assert_false(probed());                  /* placed at a tick */
	assert_int_equal(ms_prefetches_tick(p, 1001 * MS + MS_PREFETCHES_HOT_MS * MS), 0);
	assert_true(probed());
	assert_int_equal(ms_prefetches_binary(p, 0, &path, &found, &probes, &unsupported), 0);
	assert_int_equal(probes, 1);
	ms_prefetches_free(p);
	ms_live_free(l);
}

/* window=10/100: the next tick is due when the window closes, then when the next one opens. */
static void windows_due(void **state)
{
	struct ms_record_opts o = { .prefetch_follow = true, .prefetch_window_ms = 10, .prefetch_every_ms = 100 };
	struct ms_live *l;
	struct ms_prefetches *p = start(&o, &l);

	(void)state;
	assert_int_equal(ms_prefetches_tick(p, 5000 * MS), 0);
	assert_int_equal(ms_prefetches_wait_ms(p, 5003 * MS, 250), 8);
	assert_int_equal(ms_prefetches_tick(p, 5012 * MS), 0);
	assert_int_equal(ms_prefetches_wait_ms(p, 5012 * MS, 250), 89);
	assert_int_equal(ms_prefetches_wait_ms(p, 5012 * MS, 20), 20);
	ms_prefetches_stop(p);
	assert_int_equal(ms_prefetches_wait_ms(p, 5100 * MS, 250), 250);   /* stopped: no window is due */
	ms_prefetches_free(p);
	ms_live_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scanned_as_mapped),
		cmocka_unit_test(hot_after_counting),
		cmocka_unit_test(windows_due),
	};
	ssize_t n;

	spot(exe);
	if (skip_without_uprobes())
		return 77;
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return 1;
	exe[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
