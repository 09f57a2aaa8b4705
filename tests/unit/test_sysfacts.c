/*
 * mapscope:sysctl from a recording to the analyses: samples as record
 * writes them (kernel/sysctl.h), their format in the tracing data, kept by
 * the stream and asked for through ms_session_sysctl(): the value, a later
 * sample of the same name over an earlier one, a name the file lacks, a
 * file without the event, and a sample whose name lies past its data
 * (damage: dropped and counted); asked at each event as the replay goes,
 * with the stream run ahead on a thread of its own (session/ahead.h), the
 * value as the stream had it at that event in turn.
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/pdwriter.h>
#include <mapscope/session.h>

#include "kernel/refsample.h"
#include "kernel/sysctl.h"
#include "kernel/tracefs.h"
#include "fake_tracefs.h"
#include "records.h"
#include "session/source.h"
#include "stream/stream.h"

#define PID 7
#define FAULT_ID 100
#define TP 0xfffd
#define FAULT_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

static char root[] = "/tmp/ms-sysfacts-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return fake_tracefs_new(root);
}

static int teardown(void **state)
{
	(void)state;
	return fake_remove(root);
}

struct rec {
	struct ms_pdwriter *w;
	int fd;
	struct perf_event_attr fa, sa;
	struct ms_buf td;
};

/* A file with the page-fault event and, with_sysctl, mapscope:sysctl, its format in the tracing data. */
static void rec_open(struct rec *r, bool with_sysctl)
{
	static const uint64_t fid = FAULT_ID, sid = MS_SYSCTL_ID;
	static char *argv[] = { "test" };
	struct ms_pdwriter_evsel ev[2];
	struct ms_pdwriter_opts o = { ev, with_sysctl ? 2 : 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct ms_buf base, fmt;

	memset(r, 0, sizeof(*r));
	r->fa = (struct perf_event_attr){ .size = sizeof(r->fa), .type = PERF_TYPE_SOFTWARE,
					  .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = FAULT_TYPE,
					  .sample_id_all = 1, .mmap = 1, .mmap2 = 1, .mmap_data = 1, .task = 1 };
	ms_referenced_attr(TP, &r->sa);
	ev[0] = (struct ms_pdwriter_evsel){ &r->fa, "page-faults", &fid, 1 };
	ev[1] = (struct ms_pdwriter_evsel){ &r->sa, MS_SYSCTL_NAME, &sid, 1 };
	ms_buf_init(&base);
	ms_buf_init(&fmt);
	ms_buf_init(&r->td);
	assert_int_equal(ms_tracefs_tracing_data(root, NULL, 0, &base), 0);
	ms_sysctl_format(TP, &fmt);
	assert_int_equal(ms_tracefs_add_system(base.data, base.len, "mapscope", fmt.data, fmt.len, &r->td), 0);
	o.tracing_data = r->td.data;
	o.tracing_data_len = r->td.len;
	r->fd = memfd_create("sysfacts", 0);
	assert_true(r->fd >= 0);
	r->w = ms_pdwriter_new(r->fd, &o);
	assert_non_null(r->w);
	ms_buf_release(&base);
	ms_buf_release(&fmt);
}

/* A sample; name_past: its __data_loc points past the data's end, as damage would. */
static void put(struct rec *r, uint64_t t, const char *name, uint64_t value, bool name_past)
{
	unsigned char b[MS_SYSCTL_RECORD_MAX] __attribute__((aligned(8)));
	size_t n = ms_sysctl_encode(TP, 99, t, name, value, b, sizeof(b));
	uint32_t loc;

	assert_true(n > 0);
	if (name_past) {
		memcpy(&loc, b + 52 + 16, 4);
		loc += 200u << 16;
		memcpy(b + 52 + 16, &loc, 4);
	}
	assert_int_equal(ms_pdwriter_write(r->w, (const void *)b), 0);
}

static void put_map(struct rec *r, uint64_t t)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, PID, PID, 0x10000000,
			       0x1000, 0, 0, 0, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon", PID, PID, t,
			       FAULT_ID, 0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &m.h), 0);
}

/* Replays the file; the session stays open for the caller to ask (and free). */
static struct ms_session *replay(struct rec *r)
{
	struct ms_session *s;
	char path[64];

	assert_int_equal(ms_pdwriter_close(r->w), 0);
	ms_pdwriter_free(r->w);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	s = ms_session_open(path, NULL);
	assert_non_null(s);
	assert_int_equal(ms_session_run(s), 0);
	close(r->fd);
	ms_buf_release(&r->td);
	return s;
}

/* What ms_session_sysctl() said at each map, as the replay went: the value, or 0 where there was none. */
struct asked {
	uint64_t v[8];
	size_t n;
};

static int ask_at_map(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct asked *a = ctx;
	uint64_t v;

	if (ev->kind == MS_EV_MAP && a->n < 8)
		a->v[a->n++] = ms_session_sysctl(s, "vm.mmap_min_addr", &v) ? 0 : v;
	return 0;
}

/* The same file replayed with the stream ahead (MAPSCOPE_STREAM_AHEAD's value) and asked at each map. */
static void replay_asking(int fd, const char *ahead, struct asked *a)
{
	static const struct ms_analysis asker = { .name = "asker", .event = ask_at_map };
	struct ms_session *s;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	s = ms_session_open(path, NULL);
	assert_non_null(s);
	session_read_ahead(s, true);
	assert_int_equal(ms_session_add(s, &asker, a), 0);
	setenv("MAPSCOPE_STREAM_AHEAD", ahead, 1);
	assert_int_equal(ms_session_run(s), 0);
	unsetenv("MAPSCOPE_STREAM_AHEAD");
	ms_session_free(s);
}

static void asked_as_the_events_come(void **state)
{
	struct asked turn = { { 0 }, 0 }, ahead = { { 0 }, 0 };
	struct rec r;

	(void)state;
	rec_open(&r, true);
	put_map(&r, 40);
	put(&r, 50, "vm.mmap_min_addr", 4096, false);
	put_map(&r, 60);
	put(&r, 70, "vm.mmap_min_addr", 65536, false);
	put_map(&r, 80);
	assert_int_equal(ms_pdwriter_close(r.w), 0);
	ms_pdwriter_free(r.w);
	replay_asking(r.fd, "0", &turn);
	replay_asking(r.fd, "1", &ahead);
	close(r.fd);
	ms_buf_release(&r.td);
	assert_int_equal(turn.n, 3);
	assert_int_equal(turn.v[0], 0);
	assert_int_equal(turn.v[1], 4096);
	assert_int_equal(turn.v[2], 65536);
	assert_int_equal(ahead.n, 3);
	assert_memory_equal(ahead.v, turn.v, sizeof(turn.v));
}

static void decodes_the_setting(void **state)
{
	struct ms_session_stats st;
	struct ms_session *s;
	uint64_t v = 0;
	struct rec r;

	(void)state;
	rec_open(&r, true);
	put(&r, 50, "vm.mmap_min_addr", 4096, false);
	put(&r, 60, "vm.other", 3, false);
	put_map(&r, 100);
	s = replay(&r);
	assert_int_equal(ms_session_sysctl(s, "vm.mmap_min_addr", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ms_session_sysctl(s, "vm.other", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(ms_session_sysctl(s, "vm.mmap_min", &v), -ENOENT);
	ms_session_stats(s, &st);
	assert_int_equal(st.bad_samples, 0);
	assert_int_equal(st.samples, 0);           /* not a data address */
	ms_session_free(s);
}

static void a_later_sample_wins(void **state)
{
	struct ms_session *s;
	uint64_t v = 0;
	struct rec r;

	(void)state;
	rec_open(&r, true);
	put(&r, 50, "vm.mmap_min_addr", 4096, false);
	put(&r, 70, "vm.mmap_min_addr", 65536, false);
	s = replay(&r);
	assert_int_equal(ms_session_sysctl(s, "vm.mmap_min_addr", &v), 0);
	assert_int_equal(v, 65536);
	ms_session_free(s);
}

static void none_without_the_event(void **state)
{
	struct ms_session *s;
	uint64_t v = 0;
	struct rec r;

	(void)state;
	rec_open(&r, false);
	put_map(&r, 100);
	s = replay(&r);
	assert_int_equal(ms_session_sysctl(s, "vm.mmap_min_addr", &v), -ENOENT);
	ms_session_free(s);
}

/*
 * A setting told as a sample would tell it (a live session's, read on its
 * own machine): added beside those the file had, a later one over an
 * earlier, a name too long for the table refused; each a change.
 */
static void a_setting_told_as_a_sample_would(void **state)
{
	const struct ms_stream_facts *f;
	char longname[MS_STREAM_FACT_NAME_MAX + 1];
	struct ms_stream *st;
	struct ms_session *s;
	uint64_t v = 7, changes;
	struct rec r;

	(void)state;
	rec_open(&r, true);
	put(&r, 50, "vm.mmap_min_addr", 4096, false);
	s = replay(&r);
	st = session_stream(s);
	f = ms_stream_facts(st);
	changes = f->changes;
	ms_stream_set_fact(st, MS_FACT_READ_ZERO_PAGE, 0);
	assert_int_equal(ms_stream_facts_find(f, MS_FACT_READ_ZERO_PAGE, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(f->changes, changes + 1);
	ms_stream_set_fact(st, MS_FACT_READ_ZERO_PAGE, 1);
	assert_int_equal(ms_stream_facts_find(f, MS_FACT_READ_ZERO_PAGE, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(f->n, 2);
	assert_int_equal(ms_stream_facts_find(f, "vm.mmap_min_addr", &v), 0);
	assert_int_equal(v, 4096);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ms_stream_set_fact(st, longname, 5);
	assert_int_equal(ms_stream_facts_find(f, longname, &v), -ENOENT);
	assert_int_equal(f->n, 2);
	ms_session_free(s);
}

static void damage_is_dropped(void **state)
{
	struct ms_session_stats st;
	struct ms_session *s;
	uint64_t v = 0;
	struct rec r;

	(void)state;
	rec_open(&r, true);
	put(&r, 50, "vm.mmap_min_addr", 4096, true);
	s = replay(&r);
	assert_int_equal(ms_session_sysctl(s, "vm.mmap_min_addr", &v), -ENOENT);
	ms_session_stats(s, &st);
	assert_int_equal(st.bad_samples, 1);
	ms_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_the_setting),
		cmocka_unit_test(a_later_sample_wins),
		cmocka_unit_test(none_without_the_event),
		cmocka_unit_test(damage_is_dropped),
		cmocka_unit_test(a_setting_told_as_a_sample_would),
		cmocka_unit_test(asked_as_the_events_come),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
