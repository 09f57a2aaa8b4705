/*
 * The stream over a source: ordering as perf does it (records are queued,
 * and at each FINISHED_ROUND what is older than the round before's newest
 * goes out, sorted). Shuffled rounds come out in time order, samples in
 * runs or one by one alike; a record older than what already went out is
 * counted. A source of the stream's own, whose spans end anywhere, gives
 * the same events as a file does, by the fast path and the plain one.
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

#include "perfdata/evlist.h"
#include "perfdata/reader.h"
#include "stream/internal.h"
#include "stream/stream.h"
#include "record_workload.h"
#include "stream_file.h"

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

	if (g->s && g->s->ord.seg_mode)
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
static void replay(int fd, bool runs, struct got *g, struct ms_stream_stats *st)
{
	struct ms_pdreader *r = ms_pdreader_open(synth_path(fd));
	struct ms_stream *s;

	assert_non_null(r);
	s = stream_file_new(r);
	assert_non_null(s);
	if (runs)
		assert_int_equal(ms_stream_set_samples_fn(s, on_run), 0);
	memset(g, 0, sizeof(*g));
	g->s = s;
	assert_int_equal(stream_file_run(s, on_event, g), 0);
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
	struct ms_stream_stats st;
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
	struct ms_stream_stats st;
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
	struct ms_pdwriter_opts o = { e, 2, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct ms_stream_stats st;
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
	struct ms_stream_stats st;
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

/* --- a source of the test's own: spans that end at any byte ------------- */

#define MEM_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

struct mem_smp {
	struct perf_event_header h;
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
};

struct mem {
	unsigned char buf[64 << 10];
	size_t len, pos;
	uint64_t released;
	unsigned int seed;
	size_t spans;
};

static int mem_span(void *ctx, const void **start, size_t *len, uint64_t *off)
{
	struct mem *m = ctx;
	const struct perf_event_header *h = (const void *)(m->buf + m->pos);
	size_t cut = (size_t)(rand_r(&m->seed) % 300);

	if (m->pos == m->len)
		return 0;
	if (cut < h->size)
		cut = h->size;                   /* the first record whole, the rest cut anywhere */
	*start = h;
	*len = cut < m->len - m->pos ? cut : m->len - m->pos;
	*off = m->pos;
	m->spans++;
	return 1;
}

static void mem_consume(void *ctx, size_t len, size_t last)
{
	struct mem *m = ctx;

	assert_true(last <= len && m->pos + len <= m->len);
	m->pos += len;
}

static void mem_release(void *ctx, uint64_t upto)
{
	struct mem *m = ctx;

	assert_true(upto >= m->released && upto <= m->pos);   /* only what was taken, in order */
	m->released = upto;
}

static uint64_t mem_offset_of(void *ctx, const void *rec)
{
	struct mem *m = ctx;

	return (uint64_t)((const unsigned char *)rec - m->buf);
}

static void mem_put(struct mem *m, const void *rec)
{
	const struct perf_event_header *h = rec;

	assert_true(m->len + h->size <= sizeof(m->buf));
	memcpy(m->buf + m->len, rec, h->size);
	m->len += h->size;
}

/* 8 rounds of two interleaved CPUs' samples, each reaching into the round before. */
static void mem_fill(struct mem *m)
{
	struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND_, 0, sizeof(round) };
	struct mem_smp x = { { PERF_RECORD_SAMPLE, 0, sizeof(x) }, 1, 0x401000, 5, 5, 0, 0 };
	int r, cpu, i;

	memset(m, 0, sizeof(*m));
	for (r = 0; r < 8; r++) {
		for (cpu = 0; cpu < 2; cpu++)
			for (i = 0; i < 40; i++) {
				x.time = 1000 + (uint64_t)r * 80 - (r ? 20 : 0) + (uint64_t)(2 * i + cpu);
				x.addr = 0x10000 + x.time * 4096;
				mem_put(m, &x);
			}
		mem_put(m, &round);
	}
}

static int mem_event(const struct ms_event *ev, void *ctx)
{
	assert_int_equal(ev->kind, MS_EV_SAMPLE);
	assert_int_equal(ev->sample.addr, 0x10000 + ev->time * 4096);   /* each sample whole */
	return on_event(ev, ctx);
}

static int mem_run(const struct ms_samples *run, void *ctx)
{
	struct ms_event tmp;
	size_t i;

	for (i = 0; i < run->n; i++)
		mem_event(ms_samples_event(run, i, &tmp), ctx);
	return 0;
}

/*
 * The stream knows no source: over the test's own, with one data event (the
 * fast path: samples taken from the span in one pass) and with two (each
 * record as it comes), in runs and one by one, every sample comes out
 * once, in time order, and the source is told to release only what it
 * handed out.
 */
static void any_source_any_spans(void **state)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_type = MEM_TYPE, .sample_id_all = 1,
	};
	static struct mem m;
	struct ms_stream_source src = { &m, mem_span, mem_consume, mem_release, mem_offset_of, NULL, NULL };
	struct ms_stream_stats st;
	struct ms_evlist l;
	struct ms_stream *s;
	struct got g;
	int events, runs, i;

	(void)state;
	for (events = 1; events <= 2; events++)
		for (runs = 0; runs < 2; runs++) {
			memset(&l, 0, sizeof(l));
			assert_int_equal(ms_evsel_add_id(&l, ms_evlist_add(&l, &a, sizeof(a)), 1), 0);
			if (events == 2)
				assert_int_equal(ms_evsel_add_id(&l, ms_evlist_add(&l, &a, sizeof(a)), 2), 0);
			s = ms_stream_new(&l, NULL, 0, false);
			assert_non_null(s);
			assert_int_equal(s->fast_size != 0, events == 1);
			if (runs)
				assert_int_equal(ms_stream_set_samples_fn(s, mem_run), 0);
			mem_fill(&m);
			m.seed = (unsigned int)(events * 2 + runs);
			memset(&g, 0, sizeof(g));
			assert_int_equal(ms_stream_run(s, &src, mem_event, &g), 0);
			assert_int_equal(m.pos, m.len);
			assert_true(m.spans > 8);
			assert_true(m.released > 0);
			assert_int_equal(g.n, 8 * 80);
			for (i = 1; i < 8 * 80; i++)
				assert_true(g.t[i - 1] <= g.t[i]);
			ms_stream_stats(s, &st);
			assert_int_equal(st.records, 8 * 81);
			assert_int_equal(st.out_of_order, 0);
			ms_stream_free(s);
			ms_evlist_release(&l);
		}
}

struct stacks_seen {
	const void *lo, *hi;        /* the reader's lasting bytes */
	size_t in, out;             /* stack copies there, and elsewhere */
	uint64_t sum;               /* over every copy's bytes, in order */
};

static int stack_event(const struct ms_event *ev, void *ctx)
{
	struct stacks_seen *k = ctx;
	const unsigned char *p = ev->ustack;
	uint32_t i;

	if (!p || !ev->ustack_len)
		return 0;
	if ((const void *)p >= k->lo && (const void *)(p + ev->ustack_len) <= k->hi)
		k->in++;
	else
		k->out++;
	for (i = 0; i < ev->ustack_len; i++)
		k->sum = k->sum * 1099511628211ULL + p[i];
	return 0;
}

/* path's events through a stream whose source lasts as the reader says, or not at all. */
static void stacks_of(const char *path, bool lasting, struct stacks_seen *k)
{
	struct ms_pdreader *r = ms_pdreader_open(path);
	struct ms_stream_source src;
	struct ms_stream *s;

	assert_non_null(r);
	assert_non_null(s = session_reader_stream(r));
	session_reader_source(r, &src);
	memset(k, 0, sizeof(*k));
	ms_pdreader_lasting(r, &k->lo, &k->hi);
	if (!lasting)
		src.lasting_lo = src.lasting_hi = NULL;
	assert_int_equal(ms_stream_run(s, &src, stack_event, k), 0);
	ms_stream_free(s);
	ms_pdreader_free(r);
}

/*
 * ms_stream_lasting() bounds both ends: bytes inside the range last, and
 * none that start below it, run past its end, or lie anywhere above it
 * (a decompressed block the allocator put above the file's mapping,
 * which a difference of pointers read as huge once took for lasting).
 */
static void lasting_is_inside_only(void **state)
{
	static unsigned char buf[256];
	struct ms_stream_source src = { NULL, NULL, NULL, NULL, NULL, buf + 64, buf + 128 };
	const unsigned char *above = (const unsigned char *)((uintptr_t)(buf + 128) + 4096);

	(void)state;
	assert_true(ms_stream_lasting(&src, buf + 64, 64));
	assert_true(ms_stream_lasting(&src, buf + 100, 28));
	assert_false(ms_stream_lasting(&src, buf + 100, 29));
	assert_false(ms_stream_lasting(&src, buf + 60, 8));
	assert_false(ms_stream_lasting(&src, buf + 192, 8));
	assert_false(ms_stream_lasting(&src, above, 8));
	assert_false(ms_stream_lasting(&src, above, 0));
	assert_false(ms_stream_lasting(NULL, buf + 64, 8));
	src.lasting_lo = src.lasting_hi = NULL;
	assert_false(ms_stream_lasting(&src, buf + 64, 8));
}

/*
 * A syscall's stack copy, most of a recording's bytes, is read where the
 * file is mapped, not copied (keep_chain()): every event's copy lies in
 * the mapping, with the very bytes a copy has. Where the source's bytes
 * do not last (a pipe, decompressed blocks), each is a copy.
 */
static void stack_copies_read_where_they_lie(void **state)
{
	const char *w = getenv("WORKLOADS");
	char dir[] = "/tmp/ms-stream-XXXXXX", plain[64], packed[64], prog[4096];
	char *argv[] = { prog, NULL };
	struct stacks_seen a, b;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/alloc-sites", w ? w : ".");
	assert_non_null(mkdtemp(dir));
	snprintf(plain, sizeof(plain), "%s/plain.data", dir);
	snprintf(packed, sizeof(packed), "%s/packed.data", dir);
	if (!w || record_workload_with(plain, "--no-compress", argv) || record_workload(packed, argv)) {
		unlink(plain);
		rmdir(dir);
		skip();                      /* recording needs root, perf and mapscope (ctest sets MAPSCOPE) */
	}
	stacks_of(plain, true, &a);
	stacks_of(plain, false, &b);
	assert_true(a.in > 0);
	assert_int_equal(a.out, 0);
	assert_int_equal(b.in, 0);
	assert_int_equal(b.out, a.in);
	assert_true(a.sum == b.sum);
	stacks_of(packed, true, &a);
	stacks_of(packed, false, &b);
	assert_true(a.out > 0);
	assert_int_equal(a.in, 0);
	assert_true(a.sum == b.sum);
	unlink(plain);
	unlink(packed);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shuffled_rounds_come_out_sorted),
		cmocka_unit_test(queue_goes_back_to_segments),
		cmocka_unit_test(runs_hold_one_event),
		cmocka_unit_test(late_record_counted),
		cmocka_unit_test(any_source_any_spans),
		cmocka_unit_test(lasting_is_inside_only),
		cmocka_unit_test(stack_copies_read_where_they_lie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
