/*
 * Ordering, as perf does it: records are queued, and at each
 * FINISHED_ROUND what is older than the round before's newest goes out,
 * sorted. Shuffled rounds come out in time order, samples in runs or one
 * by one alike; a record older than what already went out is counted.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/pdreader.h>

#include "stream/internal.h"
#include "stream/stream.h"

#include "synth.h"

struct got {
	uint64_t t[4096];
	size_t n;
	const struct ms_stream *s;
	size_t in_segs;               /* samples handed on while the queue was segments */
	size_t runs, mixed;           /* runs handed on; those with samples of two events */
};

static int on_event(const struct ms_event *ev, void *ctx)
{
	struct got *g = ctx;

	if (ev->kind == MS_EV_SAMPLE && g->n < 4096)
		g->t[g->n++] = ev->time;
	return 0;
}

static int on_run(const struct ms_samples *run, void *ctx)
{
	struct got *g = ctx;
	struct ms_event tmp, first;
	size_t i;

	if (g->s && g->s->seg_mode)
		g->in_segs += run->n;
	g->runs++;
	for (i = 0; i < run->n; i++) {
		if (!i)
			first = *ms_samples_event(run, 0, &tmp);
		g->mixed += i && ms_samples_event(run, i, &tmp)->sample.evsel != first.sample.evsel;
		on_event(ms_samples_event(run, i, &tmp), ctx);
	}
	return 0;
}

/* Replays fd's recording; runs: samples through the runs callback. */
static void replay(int fd, bool runs, struct got *g, struct ms_session_stats *st)
{
	struct ms_pdreader *r = ms_pdreader_open(synth_path(fd));
	struct ms_stream *s;

	assert_non_null(r);
	s = ms_stream_new(r);
	assert_non_null(s);
	if (runs)
		assert_int_equal(ms_stream_set_samples_fn(s, on_run), 0);
	memset(g, 0, sizeof(*g));
	g->s = s;
	assert_int_equal(ms_stream_run(s, on_event, g), 0);
	ms_stream_stats(s, st);
	ms_stream_free(s);
	ms_pdreader_free(r);
}

/*
 * 20 rounds of 100 samples, each round two interleaved "CPUs" (even times
 * and odd times) written one CPU after the other, and each round reaching
 * back into the one before, as the rings do: all 2,000 come out sorted.
 */
static void shuffled_rounds_come_out_sorted(void **state)
{
	struct ms_session_stats st;
	struct ms_pdwriter *w;
	struct got g;
	uint64_t base;
	int fd, round, cpu, i, runs;

	(void)state;
	w = synth_writer(&fd);
	put_map(w, 1, 0x10000000, 64 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (round = 0; round < 20; round++) {
		base = 1000 + (uint64_t)round * 100 - (round ? 30 : 0);   /* 30 ns into the round before */
		for (cpu = 0; cpu < 2; cpu++)
			for (i = 0; i < 50; i++)
				put_sample(w, base + (uint64_t)(2 * i + cpu), 0x400000,
					   0x10000000 + (uint64_t)(round * 100 + 2 * i + cpu) * 4096, LOAD);
		assert_int_equal(ms_pdwriter_finish_round(w), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	for (runs = 0; runs < 2; runs++) {
		replay(fd, runs, &g, &st);
		assert_int_equal(g.n, 2000);
		for (i = 1; i < 2000; i++)
			assert_true(g.t[i - 1] <= g.t[i]);
		assert_int_equal(st.out_of_order, 0);
		assert_int_equal(g.t[0], 1000);
	}
	close(fd);
}

/*
 * A task that moves between CPUs: rounds of one CPU's samples, in order,
 * and every fifth round two CPUs' blocks that overlap in time. All come out
 * sorted, and after each mixed round the queue goes back to segments (no
 * sort, no queue entry a record) once a round came in order: most samples
 * go out from segments.
 */
static void queue_goes_back_to_segments(void **state)
{
	struct ms_session_stats st;
	struct ms_pdwriter *w;
	struct got g;
	uint64_t base;
	int fd, round, cpu, i;

	(void)state;
	w = synth_writer(&fd);
	put_map(w, 1, 0x10000000, 64 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (round = 0; round < 20; round++) {
		base = 1000 + (uint64_t)round * 100;
		if (round % 5 == 2)
			for (cpu = 0; cpu < 2; cpu++)
				for (i = 0; i < 50; i++)
					put_sample(w, base + (uint64_t)(2 * i + cpu), 0x400000,
						   0x10000000 + (uint64_t)(round * 100 + 2 * i + cpu) * 4096, LOAD);
		else
			for (i = 0; i < 100; i++)
				put_sample(w, base + (uint64_t)i, 0x400000,
					   0x10000000 + (uint64_t)(round * 100 + i) * 4096, LOAD);
		assert_int_equal(ms_pdwriter_finish_round(w), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	replay(fd, true, &g, &st);
	assert_int_equal(g.n, 2000);
	for (i = 1; i < 2000; i++)
		assert_true(g.t[i - 1] <= g.t[i]);
	assert_int_equal(st.out_of_order, 0);
	/*
	 * Queued: each mixed round, and the round after it (queued before the
	 * mixed one went out); the 12 others go out of segments.
	 */
	assert_true(g.in_segs >= 1200);
	close(fd);
}

/*
 * Two data events of one layout, their samples interleaved: every run the
 * stream hands on holds one event's samples (ms_stream_samples_fn), so a
 * run is of one layout, and all come out, in order.
 */
static void runs_hold_one_event(void **state)
{
	static struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_RAW, .config = 0x1cd,
					    .sample_type = ST, .sample_id_all = 1, .mmap2 = 1, .mmap_data = 1 };
	static uint64_t ids[2] = { ID, ID + 1 };
	static char *argv[] = { "synthetic" };
	struct ms_pdwriter_evsel e[2] = { { &a, "loads", &ids[0], 1 }, { &a, "stores", &ids[1], 1 } };
	struct ms_pdwriter_opts o = { e, 2, NULL, 0, 1, argv, CLOCK_MONOTONIC, false };
	struct ms_session_stats st;
	struct ms_pdwriter *w;
	struct sample smp;
	struct got g;
	int fd, i;

	(void)state;
	fd = memfd_create("two", 0);
	assert_true(fd >= 0);
	w = ms_pdwriter_new(fd, &o);
	assert_non_null(w);
	put_map(w, 1, 0x10000000, 64 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 300; i++) {
		smp = (struct sample){ { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(smp) }, ID, 0x400000, 7, 7,
				       100 + (uint64_t)i, 0x10000000 + (uint64_t)i * 4096, ID, 0, 0, 1, 30, LOAD };
		smp.identifier = smp.id = ids[i % 3 == 2];   /* loads, loads, a store */
		assert_int_equal(ms_pdwriter_write(w, &smp.h), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	replay(fd, true, &g, &st);
	assert_int_equal(g.n, 300);
	for (i = 1; i < 300; i++)
		assert_true(g.t[i - 1] < g.t[i]);
	assert_true(g.runs >= 200);      /* a run ends at each change of event */
	assert_int_equal(g.mixed, 0);
	close(fd);
}

/* Samples in order (segments, nothing sorted), then one older than a round already out: counted. */
static void late_record_counted(void **state)
{
	struct ms_session_stats st;
	struct ms_pdwriter *w;
	struct got g;
	int fd, i;

	(void)state;
	w = synth_writer(&fd);
	put_map(w, 1, 0x10000000, 64 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 300; i++)
		put_sample(w, 100 + (uint64_t)i, 0x400000, 0x10000000 + (uint64_t)i * 4096, LOAD);
	assert_int_equal(ms_pdwriter_finish_round(w), 0);
	for (i = 300; i < 600; i++)
		put_sample(w, 100 + (uint64_t)i, 0x400000, 0x10000000 + (uint64_t)i * 4096, LOAD);
	assert_int_equal(ms_pdwriter_finish_round(w), 0);
	put_sample(w, 150, 0x400000, 0x10000000, LOAD);         /* after two rounds: too late */
	for (i = 600; i < 700; i++)
		put_sample(w, 100 + (uint64_t)i, 0x400000, 0x10000000 + (uint64_t)i * 4096, LOAD);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	replay(fd, true, &g, &st);
	assert_int_equal(g.n, 701);
	assert_int_equal(st.out_of_order, 1);
	for (i = 1; i < 300; i++)
		assert_true(g.t[i - 1] <= g.t[i]);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shuffled_rounds_come_out_sorted),
		cmocka_unit_test(queue_goes_back_to_segments),
		cmocka_unit_test(runs_hold_one_event),
		cmocka_unit_test(late_record_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
