/*
 * The stream run ahead (lib/session/ahead.c) against the same stream run
 * in turn, on a file of several MiB (maps, samples of a fixed layout in
 * runs, samples with call chains one by one, rounds, a build-id record
 * among the data, a damaged record at the end): the same calls in the same
 * order with the same contents, the caller's thread held back at the start
 * so that the stream fills every batch; each release carried out only
 * once the caller's thread has taken every event made before it; the
 * damage's message logged after the same events, and where no event comes
 * after it at all, as is a warning made after the last event of a run
 * that ends in damage, every message where it was in turn; the build-id
 * handed on after the maps before its record and before those after it; a
 * stop at the n-th event returned, with nothing taken after it;
 * MAPSCOPE_STREAM_AHEAD's say.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/log.h>
#include <mapscope/pdreader.h>
#include <mapscope/pdwriter.h>

#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "records.h"
#include "session/ahead.h"
#include "session/source.h"
#include "stream/stream.h"
#include "util/log.h"

#define ID_RUN 7                 /* page faults of a fixed layout: runs */
#define ID_CHAIN 8               /* page faults with a call chain: one event each */
#define NR 24000                 /* maps */
#define ROUND 1500               /* records between FINISHED_ROUNDs */
#define BID_AT 9000              /* the build-id record comes after this many maps */
#define MAX_RELEASES 256

struct fixed_smp {
	struct perf_event_header h;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id;
	uint32_t cpu, res;
};

struct chain_smp {
	struct fixed_smp s;
	uint64_t nr, ips[3];
};

struct bid_rec {
	struct perf_event_header h;
	int32_t pid;
	unsigned char id[24];
	char name[16];
};

/* What a run saw: a hash of each call, in order, and where the log and the releases fell. */
struct seen {
	uint64_t *calls;
	size_t n, cap;
	atomic_size_t taken;         /* calls so far */
	size_t taken_at_log, logs;
	char msg[512];
	char said[4096];             /* every message, each after the calls taken by then */
	size_t said_len;
	size_t releases;
	size_t taken_at_release[MAX_RELEASES];
	uint64_t release_upto[MAX_RELEASES];
	size_t taken_at_ids, ids, maps_before_ids;
	unsigned char ids_bytes[sizeof(struct bid_rec)];
	size_t maps;
	atomic_size_t map_calls;     /* how.map's calls, on the thread ahead; each before fn has that map */
	atomic_size_t map_wrong;     /* of them, those not given a map of "//anon" (asserted on this thread) */
	size_t stop_at;              /* 0, or the call that returns 1 */
	bool hold;                   /* the first call waits, for the stream to fill every batch */
	bool in_turn;
	bool fail_read;              /* the source logs an error and fails at its first read */
};

static struct seen *cur;
static struct ms_pdreader *reader;
static struct ms_stream_source inner;

static void on_log(enum ms_log_level level, const char *msg, void *ctx)
{
	int n;

	(void)ctx;
	if (!cur)
		return;
	n = snprintf(cur->said + cur->said_len, sizeof(cur->said) - cur->said_len, "%zu %d %s\n",
		     atomic_load(&cur->taken), (int)level, msg);
	assert_true(n > 0 && (size_t)n < sizeof(cur->said) - cur->said_len);
	cur->said_len += (size_t)n;
	if (level != MS_LOG_ERROR)
		return;
	cur->logs++;
	cur->taken_at_log = atomic_load(&cur->taken);
	snprintf(cur->msg, sizeof(cur->msg), "%s", msg);
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_event(uint64_t h, const struct ms_event *ev)
{
	uint64_t f[6] = { ev->kind, ev->time, ev->pid, ev->tid, ev->cpu, ev->chain_len };

	h = mix(h, f, sizeof(f));
	if (ev->chain)
		h = mix(h, ev->chain, ev->chain_len * 8);
	if (ev->kind == MS_EV_MAP) {
		h = mix(h, &ev->map.start, 5 * 8);
		h = mix(h, ev->map.name, strlen(ev->map.name));
	} else if (ev->kind == MS_EV_SAMPLE) {
		h = mix(h, &ev->sample.addr, 8);
		h = mix(h, &ev->sample.ip, 8);
		if (ev->sample.chain)
			h = mix(h, ev->sample.chain, ev->sample.chain_len * 8);
	}
	return h;
}

static int note(struct seen *s, uint64_t h)
{
	size_t n = atomic_load(&s->taken);

	if (s->hold && !n)
		usleep(200000);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->calls = realloc(s->calls, s->cap * sizeof(*s->calls));
		assert_non_null(s->calls);
	}
	s->calls[s->n++] = h;
	atomic_store(&s->taken, n + 1);
	return s->stop_at && n + 1 == s->stop_at;
}

static int on_event(const struct ms_event *ev, void *ctx)
{
	struct seen *s = ctx;
	const unsigned char *ids;
	size_t size;

	/* In turn, the reader's build-ids as a map sees them (the session's expect_build_ids). */
	if (s->in_turn && ev->kind == MS_EV_MAP && !s->ids && (ids = ms_pdreader_build_ids(reader, &size)) && size) {
		s->ids++;
		s->maps_before_ids = s->maps;
		assert_int_equal(size, sizeof(s->ids_bytes));
		memcpy(s->ids_bytes, ids, size);
	}
	if (ev->kind == MS_EV_MAP && !s->in_turn && atomic_load(&s->map_calls) <= s->maps)
		fail_msg("map %zu reached fn before how.map had it (%zu calls)", s->maps, atomic_load(&s->map_calls));
	s->maps += ev->kind == MS_EV_MAP;
	return note(s, hash_event(0, ev));
}

/* On the thread ahead: each map, as it goes by (the session opens binaries' files there). */
static void on_map(void *ctx, const struct ms_event *ev)
{
	struct seen *s = ctx;

	if (ev->kind != MS_EV_MAP || strcmp(ev->map.name, "//anon"))
		atomic_fetch_add(&s->map_wrong, 1);
	atomic_fetch_add(&s->map_calls, 1);
}

static int on_run(const struct ms_samples *run, void *ctx)
{
	struct ms_event tmp;
	uint64_t h = 1;
	size_t i;

	for (i = 0; i < run->n; i++)
		h = hash_event(h, ms_samples_event(run, i, &tmp));
	return note(ctx, h);
}

static void on_ids(void *ctx, const unsigned char *more, size_t len)
{
	struct seen *s = ctx;

	s->ids++;
	s->taken_at_ids = atomic_load(&s->taken);
	s->maps_before_ids = s->maps;
	assert_int_equal(len, sizeof(s->ids_bytes));
	memcpy(s->ids_bytes, more, len);
}

/* The reader's own, each release noted with how many calls the caller had taken by then. */
static int span(void *ctx, const void **start, size_t *len, uint64_t *off)
{
	if (cur->fail_read) {            /* as a reader that finds damage at its first read */
		ms_log(MS_LOG_ERROR, "damage at the first read");
		return -EBADMSG;
	}
	return inner.span(ctx, start, len, off);
}

static void consume(void *ctx, size_t len, size_t last)
{
	inner.consume(ctx, len, last);
}

static void release(void *ctx, uint64_t upto)
{
	if (cur->releases < MAX_RELEASES) {
		cur->taken_at_release[cur->releases] = atomic_load(&cur->taken);
		cur->release_upto[cur->releases] = upto;
	}
	cur->releases++;
	inner.release(ctx, upto);
}

static uint64_t offset_of(void *ctx, const void *rec)
{
	return inner.offset_of(ctx, rec);
}

static void put_sample(struct ms_pdwriter *w, uint64_t i, bool chain)
{
	struct chain_smp c = { .s = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(struct fixed_smp) },
				       chain ? ID_CHAIN : ID_RUN, 0x400000 + i, 10, 10, 2000 + 2 * i + chain,
				       0x10000 + i * 0x3000, chain ? ID_CHAIN : ID_RUN, 0, 0 },
			       .nr = 3, .ips = { PERF_CONTEXT_USER, 0x500000 + i, 0x600000 + i * 7 } };

	if (chain)
		c.s.h.size = sizeof(c);
	assert_int_equal(ms_pdwriter_write(w, &c.s.h), 0);
}

/*
 * The file, in a memfd: nr maps, each with its samples; the offset of its
 * last map's record in *last. With tail, that map goes twice, and between
 * them a sample whose call chain is longer than its record, the last in
 * time.
 */
static int make_records(uint64_t *last, size_t nr, bool tail)
{
	const uint64_t common = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU;
	struct perf_event_attr a[2] = {
		{ .size = sizeof(a[0]), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS,
		  .sample_type = common, .sample_id_all = 1, .mmap2 = 1, .sample_period = 1 },
		{ .size = sizeof(a[0]), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS,
		  .sample_type = common | PERF_SAMPLE_CALLCHAIN, .sample_id_all = 1, .sample_period = 1 },
	};
	uint64_t ids[2] = { ID_RUN, ID_CHAIN }, i;
	struct ms_pdwriter_evsel e[2] = { { &a[0], "page-faults", &ids[0], 1 }, { &a[1], "page-faults", &ids[1], 1 } };
	char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { e, 2, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct bid_rec b = { { PERF_RECORD_HEADER_BUILD_ID, 0, sizeof(b) }, -1, { 0xab, 0xcd, 1, 2, 3 }, "/bin/x" };
	int fd = memfd_create("ahead", 0);
	struct ms_pdwriter *w = ms_pdwriter_new(fd, &o);
	struct mmap2_rec m;
	struct ms_pdwriter_stats st;
	struct chain_smp bad = { .s = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(struct chain_smp) },
					ID_CHAIN, 0x400000, 10, 10, UINT64_MAX / 2, 0x10000, ID_CHAIN, 0, 0 },
				 .nr = 1000 };

	assert_non_null(w);
	for (i = 0; i < nr; i++) {
		m = (struct mmap2_rec){ { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, 10, 10,
					0x10000 + i * 0x3000, 0x2000, 0, 0, 0, i, 0, PROT_READ, MAP_PRIVATE,
					"//anon", 10, 10, 2000 + 2 * i, ID_RUN, 0, 0, ID_RUN };
		if (tail && i + 1 == nr) {           /* a map after the last samples, then the sample */
			assert_int_equal(ms_pdwriter_write(w, &m.h), 0);
			assert_int_equal(ms_pdwriter_write(w, &bad.s.h), 0);
		}
		ms_pdwriter_stats(w, &st);
		*last = st.data_bytes;
		assert_int_equal(ms_pdwriter_write(w, &m.h), 0);
		put_sample(w, i, i % 3 == 0);
		if (i % 5 == 1)
			put_sample(w, i, false);
		if (i + 1 == BID_AT)
			assert_int_equal(ms_pdwriter_write(w, &b.h), 0);
		if (i % ROUND == ROUND - 1)
			assert_int_equal(ms_pdwriter_finish_round(w), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	return fd;
}

static int make_file(uint64_t *last)
{
	return make_records(last, NR, false);
}

/* Damage: the last map's size no longer a multiple of 8, or size. */
static void damage_to(int fd, uint64_t last_in_data, uint16_t size)
{
	uint64_t data;

	/* perf_file_header: magic, size, attr_size, attrs (offset, size), then data's offset */
	assert_int_equal(pread(fd, &data, 8, 40), 8);
	assert_int_equal(pwrite(fd, &size, 2, (off_t)(data + last_in_data + 6)), 2);
}

static void damage(int fd, uint64_t last_in_data)
{
	damage_to(fd, last_in_data, sizeof(struct mmap2_rec) - 4);
}

static int run(int fd, bool ahead, struct seen *s)
{
	struct ms_stream_source src;
	struct ms_stream *st;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	reader = ms_pdreader_open(path);
	assert_non_null(reader);
	st = session_reader_stream(reader);
	assert_non_null(st);
	session_reader_source(reader, &inner);
	src = (struct ms_stream_source){ inner.ctx, span, consume, release, offset_of, NULL, NULL };
	cur = s;
	if (ahead) {
		struct ms_ahead how = { .fn = on_event, .sfn = on_run, .r = reader, .ids = on_ids, .ctx = s,
					.map = on_map, .map_ctx = s };
		size_t from;

		ms_pdreader_build_ids(reader, &from);
		how.ids_from = from;
		ret = ms_ahead_run(st, &src, &how);
	} else {
		s->in_turn = true;
		assert_int_equal(ms_stream_set_samples_fn(st, on_run), 0);
		ret = ms_stream_run(st, &src, on_event, s);
	}
	cur = NULL;
	ms_stream_free(st);
	ms_pdreader_free(reader);
	return ret;
}

static void seen_free(struct seen *s)
{
	free(s->calls);
}

static int with_damage(void **state)
{
	uint64_t last;
	int fd = make_file(&last);

	damage(fd, last);
	*(int *)*state = fd;
	return 0;
}

/*
 * A run's last sample skipped with a warning as the stream lets out what
 * it had queued, after its read stopped at the damage that follows: the
 * last map's size smaller than a header.
 */
static int with_a_warning_last(void **state)
{
	uint64_t last;
	int fd = make_records(&last, 300, true);

	damage_to(fd, last, 4);
	*(int *)*state = fd;
	return 0;
}

static int whole(void **state)
{
	uint64_t last;

	*(int *)*state = make_file(&last);
	return 0;
}

static void same_calls_in_the_same_order(void **state)
{
	int fd = *(int *)*state;
	struct seen a = { 0 }, b = { .hold = true };
	size_t i, j;

	assert_int_equal(run(fd, false, &a), 0);
	assert_int_equal(run(fd, true, &b), 0);
	assert_true(a.n > NR);
	assert_int_equal(a.n, b.n);
	for (i = 0; i < a.n; i++)
		if (a.calls[i] != b.calls[i])
			fail_msg("call %zu of %zu differs", i, a.n);
	assert_int_equal(a.maps, NR);
	assert_int_equal(b.maps, NR);
	assert_int_equal(atomic_load(&b.map_calls), NR);    /* every map, once, ahead of fn (on_event) */
	assert_int_equal(atomic_load(&b.map_wrong), 0);
	/*
	 * Each release waited for the calls made before it: one carried out
	 * ahead is one the stream asked for in turn (several passed between
	 * two reads come as the last of them).
	 */
	assert_true(a.releases >= NR / ROUND && a.releases < MAX_RELEASES);
	assert_true(b.releases >= 1 && b.releases <= a.releases);
	for (i = 0; i < b.releases; i++) {
		for (j = 0; j < a.releases && a.release_upto[j] != b.release_upto[i]; j++)
			;
		assert_true(j < a.releases);
		if (b.taken_at_release[i] < a.taken_at_release[j])
			fail_msg("release %zu came after %zu calls, before the %zu made ahead of it", i,
				 b.taken_at_release[i], a.taken_at_release[j]);
	}
	/*
	 * The build-id, where a map in turn first sees the reader hold it: the
	 * maps read before its record, less those the sort queue held then.
	 */
	assert_int_equal(a.ids, 1);
	assert_int_equal(b.ids, 1);
	assert_true(a.maps_before_ids <= BID_AT && a.maps_before_ids >= BID_AT - 2 * ROUND);
	assert_int_equal(b.maps_before_ids, a.maps_before_ids);
	assert_memory_equal(a.ids_bytes, b.ids_bytes, sizeof(a.ids_bytes));
	assert_int_equal(b.ids_bytes[sizeof(struct perf_event_header) + 4], 0xab);
	assert_string_equal((const char *)b.ids_bytes + sizeof(struct perf_event_header) + 28, "/bin/x");
	seen_free(&a);
	seen_free(&b);
}

static void damage_logged_after_the_same_calls(void **state)
{
	int fd = *(int *)*state;
	struct seen a = { 0 }, b = { .hold = true };

	assert_int_equal(run(fd, false, &a), -EBADMSG);
	assert_int_equal(run(fd, true, &b), -EBADMSG);
	assert_int_equal(a.logs, 1);
	assert_int_equal(b.logs, 1);
	assert_string_equal(a.msg, b.msg);
	assert_int_equal(a.taken_at_log, b.taken_at_log);
	assert_int_equal(a.n, b.n);
	assert_true(a.maps < NR);
	seen_free(&a);
	seen_free(&b);
}

/* Nothing comes after the damage: its message is logged all the same. */
static void damage_logged_with_no_call(void **state)
{
	int fd = *(int *)*state;
	struct seen a = { .fail_read = true }, b = { .fail_read = true };

	assert_int_equal(run(fd, false, &a), -EBADMSG);
	assert_int_equal(run(fd, true, &b), -EBADMSG);
	assert_int_equal(a.n, 0);
	assert_int_equal(b.n, 0);
	assert_int_equal(a.logs, 1);
	assert_int_equal(b.logs, 1);
	assert_string_equal(a.msg, b.msg);
	seen_free(&a);
	seen_free(&b);
}

/* A sample skipped as the stream lets out what it queued before the damage: its warning comes last. */
static void warning_after_the_last_call_logged(void **state)
{
	int fd = *(int *)*state;
	struct seen a = { 0 }, b = { 0 };

	assert_int_equal(run(fd, false, &a), -EBADMSG);
	assert_int_equal(run(fd, true, &b), -EBADMSG);
	assert_non_null(strstr(a.said, "does not fit its record"));
	assert_string_equal(a.said, b.said);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.calls, b.calls, a.n * sizeof(*a.calls));
	seen_free(&a);
	seen_free(&b);
}

static void stopped_at_the_nth_call(void **state)
{
	int fd = *(int *)*state;
	struct seen a = { .stop_at = 5000 }, b = { .stop_at = 5000, .hold = true };

	assert_int_equal(run(fd, false, &a), 1);
	assert_int_equal(run(fd, true, &b), 1);
	/* In turn, a stop lets out what the stream had queued (stream.c, run_fast): not ahead. */
	assert_true(a.n >= 5000);
	assert_int_equal(b.n, 5000);
	assert_memory_equal(a.calls, b.calls, 5000 * sizeof(*a.calls));
	seen_free(&a);
	seen_free(&b);
}

static void wanted_as_the_environment_says(void **state)
{
	(void)state;
	setenv("MAPSCOPE_STREAM_AHEAD", "0", 1);
	assert_false(ms_ahead_wanted());
	setenv("MAPSCOPE_STREAM_AHEAD", "1", 1);
	assert_true(ms_ahead_wanted());
	unsetenv("MAPSCOPE_STREAM_AHEAD");
	assert_int_equal(ms_ahead_wanted(), sysconf(_SC_NPROCESSORS_ONLN) >= 2);
}

static int close_fd(void **state)
{
	close(*(int *)*state);
	return 0;
}

int main(void)
{
	static int fd_whole, fd_damaged, fd_first, fd_warned, fd_stop;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate_setup_teardown(same_calls_in_the_same_order, whole, close_fd, &fd_whole),
		cmocka_unit_test_prestate_setup_teardown(damage_logged_after_the_same_calls, with_damage, close_fd,
							 &fd_damaged),
		cmocka_unit_test_prestate_setup_teardown(damage_logged_with_no_call, whole, close_fd, &fd_first),
		cmocka_unit_test_prestate_setup_teardown(warning_after_the_last_call_logged, with_a_warning_last,
							 close_fd, &fd_warned),
		cmocka_unit_test_prestate_setup_teardown(stopped_at_the_nth_call, whole, close_fd, &fd_stop),
		cmocka_unit_test(wanted_as_the_environment_says),
	};

	ms_log_set(on_log, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
