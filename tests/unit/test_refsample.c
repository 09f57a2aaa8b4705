/*
 * The sampler of record --referenced, over a fake /proc: a process added
 * has its bits cleared at once; nothing is read before the interval ends;
 * then one record per VMA, with smaps' figures and the interval, and the
 * bits cleared again; a process gone is dropped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/refsample.h"
#include "fake_tracefs.h"

static char root[] = "/tmp/ms-refsample-XXXXXX";

static const char smaps[] =
	"10000000-10008000 rw-p 00000000 00:00 0\n"
	"Rss:                  32 kB\n"
	"Referenced:           12 kB\n"
	"Anonymous:            32 kB\n"
	"AnonHugePages:         0 kB\n"
	"20000000-20400000 rw-p 00000000 00:00 0\n"
	"Rss:                4096 kB\n"
	"Referenced:         2048 kB\n"
	"Anonymous:          4096 kB\n"
	"AnonHugePages:      4096 kB\n";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	fake_put(root, "42/smaps", smaps);
	fake_put(root, "42/clear_refs", "");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fake_remove(root);
}

static bool cleared(void)
{
	char path[256], c = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/42/clear_refs", root);
	f = fopen(path, "r");
	assert_non_null(f);
	c = (char)fgetc(f);
	fclose(f);
	fake_put(root, "42/clear_refs", "");
	return c == '1';
}

struct got {
	struct ms_referenced_record r[4];
	int n;
};

static int take(const struct perf_event_header *h, void *ctx)
{
	struct got *g = ctx;

	assert_int_equal(h->size, sizeof(g->r[0]));
	memcpy(&g->r[g->n++], h, h->size);
	return 0;
}

static void samples_each_interval(void **state)
{
	struct ms_refsampler *rs = ms_refsampler_new(root, 50000000, 0xfffe);
	struct got g = { .n = 0 };
	uint64_t t0 = now_ns(), due;

	(void)state;
	assert_non_null(rs);
	assert_int_equal(ms_refsampler_add(rs, 42, t0), 0);
	assert_true(cleared());
	due = ms_refsampler_due(rs);
	assert_true(due >= t0 + 50000000 && due < t0 + 60000000);
	assert_int_equal(ms_refsampler_tick(rs, due - 1, take, &g), 0);
	assert_int_equal(g.n, 0);
	assert_false(cleared());
	assert_int_equal(ms_refsampler_tick(rs, due, take, &g), 0);
	assert_int_equal(g.n, 2);
	assert_true(cleared());
	assert_int_equal(g.r[0].header.type, PERF_RECORD_SAMPLE);
	assert_int_equal(g.r[0].identifier, MS_REFERENCED_ID);
	assert_int_equal(g.r[0].common_type, 0xfffe);
	assert_int_equal(g.r[0].pid, 42);
	assert_int_equal(g.r[0].vma_pid, 42);
	assert_int_equal(g.r[0].start, 0x10000000);
	assert_int_equal(g.r[0].end, 0x10008000);
	assert_int_equal(g.r[0].referenced, 12 << 10);
	assert_int_equal(g.r[0].rss, 32 << 10);
	assert_int_equal(g.r[1].anon_huge, 4096 << 10);
	assert_int_equal(g.r[1].referenced, 2048 << 10);
	assert_true(g.r[0].time >= t0 && g.r[0].interval_ns == g.r[0].time - t0);
	assert_int_equal(g.r[0].raw_size + offsetof(struct ms_referenced_record, common_type), sizeof(g.r[0]));
	/* The next interval starts when the clears end: never sooner than asked. */
	assert_true(ms_refsampler_due(rs) >= g.r[0].time + 50000000);
	ms_refsampler_free(rs);
}

/* A process that is not there is not followed; one that goes is dropped at its next read. */
static void drops_processes_gone(void **state)
{
	struct ms_refsampler *rs = ms_refsampler_new(root, 1000000, 0xfffe);
	struct got g = { .n = 0 };

	(void)state;
	assert_int_equal(ms_refsampler_add(rs, 43, now_ns()), -ENOENT);
	assert_int_equal(ms_refsampler_add(rs, 42, now_ns()), 0);
	ms_refsampler_remove(rs, 42);
	assert_int_equal(ms_refsampler_tick(rs, UINT64_MAX - 1, take, &g), 0);
	assert_int_equal(g.n, 0);
	fake_put(root, "44/clear_refs", "");
	assert_int_equal(ms_refsampler_add(rs, 44, now_ns()), 0);     /* no smaps: as if it exited since */
	assert_int_equal(ms_refsampler_tick(rs, UINT64_MAX - 1, take, &g), 0);
	assert_int_equal(g.n, 0);
	fake_put(root, "44/smaps", smaps);
	assert_int_equal(ms_refsampler_tick(rs, UINT64_MAX - 1, take, &g), 0);
	assert_int_equal(g.n, 0);                 /* dropped at the read that failed */
	ms_refsampler_free(rs);
}

/* The format perf reads: the name, the id, every field the stream looks for. */
static void format_names_its_fields(void **state)
{
	static const char *const fields[] = { "pid", "start", "end", "interval_ns", "referenced", "rss", "anon",
					      "anon_huge" };
	struct ms_buf b;
	size_t i;
	char *text;

	(void)state;
	ms_buf_init(&b);
	ms_referenced_format(0xfffe, &b);
	ms_buf_append(&b, "", 1);
	text = (char *)b.data;
	assert_non_null(strstr(text, "name: vma_referenced\nID: 65534\nformat:\n"));
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char want[64];

		snprintf(want, sizeof(want), " %s;\toffset:%zu;", fields[i], i ? 8 + 8 * i : 8);
		assert_non_null(strstr(text, want));
	}
	assert_non_null(strstr(text, "print fmt: "));
	ms_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_each_interval),
		cmocka_unit_test(drops_processes_gone),
		cmocka_unit_test(format_names_its_fields),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
