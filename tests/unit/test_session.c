/*
 * The session on a synthetic recording: several analyses in one pass hear
 * what each would alone, the window's relative ends are resolved from the
 * first event, a change names the region it made, and an analysis can
 * stop the run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/hugepages.h>
#include <mapscope/report.h>
#include <mapscope/session.h>
#include <mapscope/unmapped.h>

#include "record_workload.h"
#include "session/source.h"
#include "symbols/internal.h"
#include "symbols/preopen.h"
#include "synth.h"

static int fd;

/*
 * Code at 0x400000 (from 1 ms); 4 MiB of data at 0x10000000 (from 2 ms),
 * its first 512 pages loaded at 20 ms + i us; then two loads of unmapped
 * memory at 30 and 31 ms.
 */
static int make_recording(void **state)
{
	struct ms_pdwriter *w = synth_writer(&fd);
	int i;

	(void)state;
	assert_non_null(w);
	put_map(w, 1 * MS, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_map(w, 2 * MS, 0x10000000, 4 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 512; i++)
		put_sample(w, 20 * MS + (uint64_t)i * 1000, 0x400010, 0x10000000 + (uint64_t)i * 4096, LOAD);
	put_sample(w, 30 * MS, 0x400100, 0x20000000, LOAD);
	put_sample(w, 31 * MS, 0x400200, 0x20001000, LOAD);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	return 0;
}

static int drop_recording(void **state)
{
	(void)state;
	close(fd);
	return 0;
}

/* Samples charged, in all, and to the data region. */
static void report_counts(struct ms_report *rep, struct ms_session *s, uint64_t *total, uint64_t *data)
{
	static const enum ms_report_key keys[] = { MS_SORT_REGION };
	const struct ms_report_row *rows, *un;
	size_t n, i;

	assert_int_equal(ms_report_rows(rep, ms_session_aspace(s), keys, 1, &rows, &n, &un), 0);
	*total = ms_report_total(rep);
	*data = 0;
	for (i = 0; i < n; i++)
		if (rows[i].region->start == 0x10000000)
			*data = rows[i].samples;
}

/* Report, hugepages and unmapped in one pass: each hears every charge, as it would alone. */
static void three_analyses_in_one_pass(void **state)
{
	struct ms_session *s = ms_session_open(synth_path(fd), NULL), *alone;
	struct ms_report *rep = ms_report_new(NULL), *rep_alone = ms_report_new(NULL);
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_unmapped *u = ms_unmapped_new();
	const struct ms_unmapped_access *acc;
	const struct ms_huge_advice *v;
	uint64_t total, data, total_alone, data_alone;
	size_t n;

	(void)state;
	assert_non_null(s);
	assert_int_equal(ms_session_add(s, &ms_report_analysis, rep), 0);
	assert_int_equal(ms_session_add(s, &ms_hugepages_analysis, hp), 0);
	assert_int_equal(ms_session_add(s, &ms_unmapped_analysis, u), 0);
	assert_int_equal(ms_session_run(s), 0);
	report_counts(rep, s, &total, &data);
	assert_int_equal(total, 514);
	assert_int_equal(data, 512);
	assert_int_equal(ms_unmapped_results(u, &acc, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(acc[0].cls, MS_UNMAPPED_NEVER);
	assert_int_equal(ms_hugepages_advice(hp, ms_session_aspace(s), 40 * MS, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].pages, 512);
	assert_true(v[0].advised);
	/* The report alone: the model calls it directly, and it counts the same. */
	alone = ms_session_open(synth_path(fd), NULL);
	assert_int_equal(ms_session_add(alone, &ms_report_analysis, rep_alone), 0);
	assert_int_equal(ms_session_run(alone), 0);
	report_counts(rep_alone, alone, &total_alone, &data_alone);
	assert_int_equal(total_alone, total);
	assert_int_equal(data_alone, data);
	ms_session_free(alone);
	ms_report_free(rep_alone);
	ms_report_free(rep);
	ms_hugepages_free(hp);
	ms_unmapped_free(u);
	ms_session_free(s);
}

/* An analysis that needs symbols gets them from a session opened without; not once the run began. */
static int stop_at_first(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	(void)ctx;
	(void)s;
	(void)ev;
	return 1;
}

static void symbols_on_request(void **state)
{
	static const struct ms_analysis needs = { .name = "needs", .flags = MS_ANALYSIS_NEEDS_SYMBOLS };
	static const struct ms_analysis stop = { .name = "stop", .event = stop_at_first };
	struct ms_session *s = ms_session_open(synth_path(fd), NULL);

	(void)state;
	assert_non_null(s);
	assert_null(ms_session_symbols(s));
	assert_int_equal(ms_session_add(s, &needs, NULL), 0);
	assert_non_null(ms_session_symbols(s));
	ms_session_free(s);

	s = ms_session_open(synth_path(fd), NULL);
	assert_int_equal(ms_session_add(s, &stop, NULL), 0);
	assert_int_equal(ms_session_run(s), 1);
	assert_int_equal(ms_session_add(s, &needs, NULL), -EBUSY);
	assert_null(ms_session_symbols(s));
	ms_session_free(s);
}

/*
 * ms_session_no_sites() names code only: an analysis that needs symbols,
 * added before the run, has the sites taken all the same; after it, it
 * cannot have the sites of the maps already passed, and is refused; and
 * once the run has begun, the request itself is refused.
 */
static void no_sites_until_an_analysis_needs_them(void **state)
{
	static const struct ms_analysis needs = { .name = "needs", .flags = MS_ANALYSIS_NEEDS_SYMBOLS };
	static const struct ms_analysis stop = { .name = "stop", .event = stop_at_first };
	const struct ms_session_opts o = { .symbols = true, .to_ns = UINT64_MAX };
	struct ms_session *s = ms_session_open(synth_path(fd), &o);

	(void)state;
	assert_non_null(s);
	assert_non_null(ms_session_symbols(s));
	assert_int_equal(ms_session_no_sites(s), 0);
	assert_int_equal(ms_session_add(s, &needs, NULL), 0);
	assert_int_equal(ms_session_run(s), 0);
	ms_session_free(s);

	assert_non_null(s = ms_session_open(synth_path(fd), &o));   /* needed first, then asked: taken */
	assert_int_equal(ms_session_add(s, &needs, NULL), 0);
	assert_int_equal(ms_session_no_sites(s), 0);
	assert_int_equal(ms_session_add(s, &stop, NULL), 0);
	assert_int_equal(ms_session_run(s), 1);
	assert_int_equal(ms_session_add(s, &needs, NULL), 0);
	ms_session_free(s);

	assert_non_null(s = ms_session_open(synth_path(fd), &o));
	assert_int_equal(ms_session_no_sites(s), 0);
	assert_int_equal(ms_session_add(s, &stop, NULL), 0);
	assert_int_equal(ms_session_run(s), 1);
	assert_int_equal(ms_session_add(s, &needs, NULL), -EBUSY);
	assert_int_equal(ms_session_no_sites(s), -EBUSY);
	ms_session_free(s);

	assert_non_null(s = ms_session_open(synth_path(fd), &(struct ms_session_opts){ .symbols = true,
										   .to_ns = UINT64_MAX }));
	assert_int_equal(ms_session_add(s, &stop, NULL), 0);
	assert_int_equal(ms_session_run(s), 1);
	assert_int_equal(ms_session_add(s, &needs, NULL), 0);   /* the sites were taken from the start */
	ms_session_free(s);
}

struct stacks {
	size_t with, without;        /* changes made by a mapping call: with a stack copy, without */
	bool opened_ahead;           /* the workload's binary was opened on the stream's thread */
};

static char binary[4096];        /* the workload's path, as its maps name it */

/*
 * Whether s's symbols had binary's file opened ahead (symbols/preopen.h):
 * a path seen there is not opened again, so a map of it now leaves
 * nothing to take.
 */
static bool opened_ahead(struct ms_session *s)
{
	struct ms_preopen *po = ms_symbols_preopen(ms_session_symbols(s));
	struct ms_event ev = { .kind = MS_EV_MAP, .map = { .name = binary, .maj = 1, .ino = 1 } };
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened got;

	assert_non_null(po);
	ms_preopen_map(po, &ev);
	if (!ms_preopen_take(po, binary, head, &got))
		return true;
	assert_true(got.fd >= 0);
	elf_end(got.elf);
	close(got.fd);
	return false;
}

static int count_stacks(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct stacks *k = ctx;

	(void)s;
	if (ev && ev->kind == MS_EV_MAP && c->op == MS_OP_MAP)
		ev->ustack && ev->ustack_len ? k->with++ : k->without++;
	return 0;
}

/* path's maps, through a session with symbols, its sites taken or not, the stream run ahead or not. */
static struct stacks stacks_of(const char *path, bool sites, bool ahead)
{
	static const struct ms_analysis count = { .name = "count", .change = count_stacks };
	const struct ms_session_opts o = { .symbols = true, .to_ns = UINT64_MAX };
	struct ms_session *s = ms_session_open(path, &o);
	struct stacks k = { 0, 0, false };

	assert_non_null(s);
	session_read_ahead(s, ahead);        /* as the commands ask; on one CPU too */
	setenv("MAPSCOPE_STREAM_AHEAD", ahead ? "1" : "0", 1);
	if (!sites)
		assert_int_equal(ms_session_no_sites(s), 0);
	assert_int_equal(ms_session_add(s, &count, &k), 0);
	assert_int_equal(ms_session_run(s), 0);
	unsetenv("MAPSCOPE_STREAM_AHEAD");
	k.opened_ahead = opened_ahead(s);
	ms_session_free(s);
	return k;
}

/*
 * A mapping call's registers and stack copy reach the events only where
 * a site is unwound from them: with ms_session_no_sites() the stream keeps
 * none (mapscope unmapped: 12% of its time on chromium's page load went
 * to copying them), with the stream run ahead and without. Run ahead,
 * the binaries' files are opened on the stream's thread, either way.
 */
static void stacks_only_where_sites_are_taken(void **state)
{
	const char *w = getenv("WORKLOADS");
	char dir[] = "/tmp/ms-session-XXXXXX", path[64], prog[4096];
	char *argv[] = { prog, NULL };
	struct stacks k;
	int i;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/alloc-sites", w ? w : ".");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rec.data", dir);
	if (!w || record_workload(path, argv)) {
		rmdir(dir);
		skip();                      /* recording needs root, perf and mapscope (ctest sets MAPSCOPE) */
	}
	assert_non_null(realpath(prog, binary));
	for (i = 0; i < 2; i++) {
		k = stacks_of(path, true, i);
		assert_true(k.with > 0);
		assert_int_equal(k.opened_ahead, i);     /* run ahead: the binaries' files opened there */
		k = stacks_of(path, false, i);
		assert_int_equal(k.with, 0);
		assert_true(k.without > 0);
		assert_int_equal(k.opened_ahead, i);
	}
	unlink(path);
	rmdir(dir);
}

/* ms_session_sites_aside(): taken before the run (the replay then runs to its end), refused once it has begun. */
static void sites_aside_before_the_run(void **state)
{
	static const struct ms_analysis stop = { .name = "stop", .event = stop_at_first };
	const struct ms_session_opts o = { .symbols = true, .to_ns = UINT64_MAX };
	struct ms_session *s = ms_session_open(synth_path(fd), &o);

	(void)state;
	assert_non_null(s);
	assert_int_equal(ms_session_sites_aside(s, true), 0);
	assert_int_equal(ms_session_run(s), 0);
	ms_session_free(s);

	assert_non_null(s = ms_session_open(synth_path(fd), &o));
	assert_int_equal(ms_session_add(s, &stop, NULL), 0);
	assert_int_equal(ms_session_run(s), 1);
	assert_int_equal(ms_session_sites_aside(s, false), -EBUSY);
	ms_session_free(s);
}

/* "+20.1 s to +20.2 s" in ms: the window's ends from the first event (1 ms). */
static void relative_window(void **state)
{
	struct ms_session_opts o = { .from_ns = 19 * MS + 100000, .to_ns = 19 * MS + 199999,
				     .from_rel = true, .to_rel = true };
	struct ms_session *s = ms_session_open(synth_path(fd), &o);
	struct ms_report *rep = ms_report_new(NULL);
	uint64_t total, data, from, to;

	(void)state;
	assert_non_null(s);
	assert_true(ms_session_window(s, &from, &to));
	assert_int_equal(ms_session_add(s, &ms_report_analysis, rep), 0);
	assert_int_equal(ms_session_run(s), 0);
	assert_int_equal(ms_session_first_time(s), 1 * MS);
	assert_true(ms_session_window(s, &from, &to));
	assert_int_equal(from, 20 * MS + 100000);
	assert_int_equal(to, 20 * MS + 199999);
	report_counts(rep, s, &total, &data);
	assert_int_equal(total, 100);                /* samples 100 to 199, one a microsecond */
	assert_int_equal(data, 100);
	ms_report_free(rep);
	ms_session_free(s);
}

struct seen {
	size_t events, samples, maps_with_region, changes;
	uint64_t stop_at;
};

static int on_event(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct seen *w = ctx;

	(void)s;
	w->events++;
	w->samples += ev->kind == MS_EV_SAMPLE;
	return w->stop_at && ev->time >= w->stop_at;
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct seen *w = ctx;

	w->changes++;
	if (c->op == MS_OP_MAP && c->region == ms_aspace_lookup(ms_session_aspace(s), ev->pid, ev->map.start))
		w->maps_with_region++;
	return 0;
}

/* Samples reach event() only where asked for; a change names its region; event() may stop the run. */
static void events_changes_and_stop(void **state)
{
	const struct ms_analysis quiet = { .name = "quiet", .event = on_event, .change = on_change };
	const struct ms_analysis all = { .name = "all", .event = on_event, .flags = MS_ANALYSIS_SEES_SAMPLES };
	struct seen q = { 0 }, a = { 0 }, stop = { .stop_at = 20 * MS };
	struct ms_session *s = ms_session_open(synth_path(fd), NULL);

	(void)state;
	assert_int_equal(ms_session_add(s, &quiet, &q), 0);
	assert_int_equal(ms_session_add(s, &all, &a), 0);
	assert_int_equal(ms_session_run(s), 0);
	assert_int_equal(q.samples, 0);
	assert_int_equal(a.samples, 514);
	assert_int_equal(q.maps_with_region, 2);
	assert_int_equal(q.changes, 2);
	ms_session_free(s);

	s = ms_session_open(synth_path(fd), NULL);
	assert_int_equal(ms_session_add(s, &all, &stop), 0);
	assert_int_equal(ms_session_run(s), 1);
	assert_int_equal(stop.samples, 1);           /* the first at 20 ms stopped it */
	ms_session_free(s);
}

/*
 * Two events whose samples have one size: the data event's (ADDR) and one
 * with STREAM_ID instead, so that its ID lies where the other's ADDR does.
 * Only the data event's samples are charged: the fast path tells them apart by
 * their ids, and takes the data event's samples in runs all the same.
 */
static void fast_path_among_other_events(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_RAW, .config = 0x1cd,
				     .sample_type = ST, .sample_id_all = 1, .mmap2 = 1, .mmap_data = 1 };
	struct perf_event_attr b = { .size = sizeof(b), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
				     .sample_type = (ST & ~(uint64_t)PERF_SAMPLE_ADDR) | PERF_SAMPLE_STREAM_ID,
				     .sample_id_all = 1 };
	uint64_t ida = ID, idb = ID + 1, total, data;
	struct ms_pdwriter_evsel e[2] = { { &a, "mem-loads", &ida, 1 }, { &b, "cs", &idb, 1 } };
	char *argv[] = { "synthetic" };
	struct ms_pdwriter_opts o = { e, 2, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct ms_report *rep = ms_report_new(NULL);
	struct ms_pdwriter *w;
	struct ms_session *s;
	struct sample smp;
	int two = memfd_create("two", 0), i;

	(void)state;
	w = ms_pdwriter_new(two, &o);
	assert_non_null(w);
	put_map(w, 1 * MS, 0x10000000, 4 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 300; i++) {
		put_sample(w, 2 * MS + (uint64_t)i * 2, 0x400010, 0x10000000 + (uint64_t)i * 4096, LOAD);
		/* The other event: same size; a fixed-offset decode would take its ID for an address. */
		smp = (struct sample){ { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(smp) }, ID + 1, 0x400020,
				       7, 7, 2 * MS + (uint64_t)i * 2 + 1, ID + 1, 0x10200000 + (uint64_t)i * 4096,
				       0, 0, 1, 30, 0 };
		assert_int_equal(sizeof(smp), 88);
		assert_int_equal(ms_pdwriter_write(w, &smp.h), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	s = ms_session_open(synth_path(two), NULL);
	assert_non_null(s);
	assert_int_equal(ms_session_add(s, &ms_report_analysis, rep), 0);
	assert_int_equal(ms_session_run(s), 0);
	report_counts(rep, s, &total, &data);
	assert_int_equal(total, 300);
	assert_int_equal(data, 300);
	ms_report_free(rep);
	ms_session_free(s);
	close(two);
}

/*
 * Data at 0x10000000 (map at 1 ms); 2,000 samples there at 2 ms + i us,
 * a round every 100; two at a kernel address, at 2 ms + 950.5 us and
 * 2 ms + 1000.5 us, either side of the instant the tests stop at; and a
 * LOST record every 10 samples, naming process 100 or one of its own.
 */
static int around_an_instant(int level, bool swap)
{
	struct ms_pdwriter *w;
	int f, i, k;

	struct lost_rec {
		struct perf_event_header h;
		uint64_t id, lost;
		uint32_t pid, tid;
		uint64_t time, sid;
		uint32_t cpu, res;
		uint64_t identifier;
	} lost = { { PERF_RECORD_LOST, 0, sizeof(lost) }, ID, 1, 0, 0, 0, ID, 0, 0, ID };

	w = synth_writer_at(&f, false, level);
	assert_non_null(w);
	put_map(w, 1 * MS, 0x10000000, 8 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 2000; i++) {
		/* With swap, each pair of samples out of order (two CPUs' rings): the sort queue puts them back. */
		if (!swap)
			put_sample(w, 2 * MS + (uint64_t)i * 1000, 0x400010, 0x10000000 + (uint64_t)i * 4096, LOAD);
		else if (i % 2)
			for (k = i; k >= i - 1; k--)
				put_sample(w, 2 * MS + (uint64_t)k * 1000, 0x400010, 0x10000000 + (uint64_t)k * 4096, LOAD);
		if (i == 950 || i == 1000)
			put_sample(w, 2 * MS + (uint64_t)i * 1000 + 500, 0x400010, 0xffff888000001000ULL, LOAD);
		if (i % 10 == 5) {           /* a process of its own each time, and process 100 again */
			lost.pid = lost.tid = i % 20 == 5 ? 100 : 1000 + (uint32_t)i;
			lost.time = 2 * MS + (uint64_t)i * 1000 + 300;
			assert_int_equal(ms_pdwriter_write(w, &lost.h), 0);
		}
		if (i % 100 == 99)
			assert_int_equal(ms_pdwriter_finish_round(w), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	return f;
}

/* The processes whose records were lost, as the session has them. */
struct lost_list {
	struct ms_session_lost l[256];
	size_t n;
};

/* A replay to the instant t (rel: from the first event), the stream ahead or not: report's counts, the stats. */
static void replay_to(int f, uint64_t t, bool rel, bool ahead, uint64_t *data, struct ms_session_stats *st,
		      struct lost_list *lost)
{
	struct ms_session *s = ms_session_open(synth_path(f), NULL);
	struct ms_report *rep = ms_report_new(NULL);
	uint64_t total;

	assert_non_null(s);
	session_read_ahead(s, ahead);
	session_stop_after(s, t, rel);
	assert_int_equal(ms_session_add(s, &ms_report_analysis, rep), 0);
	assert_int_equal(ms_session_run(s), 1);
	report_counts(rep, s, &total, data);
	assert_int_equal(total, *data);
	ms_session_stats(s, st);
	for (lost->n = 0; lost->n < 256 && ms_session_lost_pid(s, lost->n, &lost->l[lost->n]); lost->n++)
		;
	ms_report_free(rep);
	ms_session_free(s);
}

/*
 * session_stop_after(): the model holds the samples at or before the
 * instant, none after (a run is cut there), and the statistics are those
 * at the sample it stopped at, the stream run ahead or in turn: the
 * kernel address before the instant counted, the one after it not, and
 * the records read the same (ahead, the thread has read the file whole).
 */
static void same_lost(const struct lost_list *a, const struct lost_list *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->l[i].pid, b->l[i].pid);
		assert_int_equal(a->l[i].count, b->l[i].count);
		assert_int_equal(a->l[i].first, b->l[i].first);
		assert_int_equal(a->l[i].last, b->l[i].last);
	}
}

static void stops_after_an_instant(void **state)
{
	struct ms_session_stats in_turn, ahead, rel;
	struct lost_list l_turn, l_ahead, l_rel;
	uint64_t data;
	int f = around_an_instant(0, false), i;

	(void)state;
	setenv("MAPSCOPE_STREAM_AHEAD", "1", 1);     /* ahead on one CPU too */
	replay_to(f, 2 * MS + 999000, false, false, &data, &in_turn, &l_turn);
	assert_int_equal(data, 1000);
	replay_to(f, 2 * MS + 999000, false, true, &data, &ahead, &l_ahead);
	assert_int_equal(data, 1000);
	replay_to(f, 1 * MS + 999000, true, true, &data, &rel, &l_rel);
	assert_int_equal(data, 1000);
	unsetenv("MAPSCOPE_STREAM_AHEAD");
	assert_int_equal(in_turn.kernel_addr, 1);
	assert_int_equal(ahead.kernel_addr, 1);
	assert_int_equal(rel.kernel_addr, 1);
	assert_true(in_turn.records < 2203);         /* the rounds after the instant's not read */
	assert_int_equal(ahead.records, in_turn.records);
	assert_int_equal(in_turn.samples, 1000);
	assert_int_equal(ahead.samples, in_turn.samples);
	assert_int_equal(ahead.last_time, in_turn.last_time);
	assert_int_equal(rel.records, in_turn.records);
	/* The LOST records of the rounds read: 100, 50 of them process 100's, the rest one each. */
	assert_int_equal(in_turn.lost, 100);
	assert_int_equal(in_turn.nr_lost_pids, 51);
	assert_int_equal(l_turn.n, 51);
	assert_int_equal(l_turn.l[0].pid, 100);
	assert_int_equal(l_turn.l[0].count, 50);
	assert_int_equal(ahead.lost, in_turn.lost);
	assert_int_equal(ahead.nr_lost_pids, in_turn.nr_lost_pids);
	same_lost(&l_ahead, &l_turn);
	same_lost(&l_rel, &l_turn);
	/* Inside a round, and a run: the samples counted are the ones the model holds. */
	setenv("MAPSCOPE_STREAM_AHEAD", "1", 1);
	replay_to(f, 2 * MS + 949500, false, false, &data, &in_turn, &l_turn);
	assert_int_equal(data, 950);
	assert_int_equal(in_turn.samples, 950);
	assert_int_equal(in_turn.kernel_addr, 0);
	replay_to(f, 2 * MS + 949500, false, true, &data, &ahead, &l_ahead);
	unsetenv("MAPSCOPE_STREAM_AHEAD");
	assert_int_equal(data, 950);
	assert_int_equal(ahead.samples, 950);
	assert_int_equal(ahead.kernel_addr, 0);
	assert_int_equal(ahead.records, in_turn.records);
	same_lost(&l_ahead, &l_turn);
	/*
	 * A LOST record just past the instant, read before the run the replay
	 * stops in went out: not counted. Compressed too (the queue copies its
	 * records), and with samples out of order, which the sort queue
	 * gathers into runs a record at a time: the path a LOST record was
	 * counted on before the run it came after went out.
	 */
	for (i = 0; i < 3; i++) {
		if (i) {
			close(f);
			f = around_an_instant(i == 1, i == 2);
		}
		setenv("MAPSCOPE_STREAM_AHEAD", "1", 1);
		replay_to(f, 2 * MS + 1003000, false, false, &data, &in_turn, &l_turn);
		replay_to(f, 2 * MS + 1003000, false, true, &data, &ahead, &l_ahead);
		unsetenv("MAPSCOPE_STREAM_AHEAD");
		assert_int_equal(data, 1004);
		assert_int_equal(in_turn.samples, 1004);
		assert_int_equal(in_turn.lost, 100);
		assert_int_equal(l_turn.l[0].count, 50);
		assert_int_equal(ahead.lost, 100);
		assert_int_equal(ahead.samples, 1004);
		same_lost(&l_ahead, &l_turn);
	}
	close(f);
}

static void bad_input(void **state)
{
	(void)state;
	assert_null(ms_session_open("/nonexistent/mapscope.data", NULL));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(three_analyses_in_one_pass),
		cmocka_unit_test(relative_window),
		cmocka_unit_test(stops_after_an_instant),
		cmocka_unit_test(events_changes_and_stop),
		cmocka_unit_test(fast_path_among_other_events),
		cmocka_unit_test(bad_input),
		cmocka_unit_test(symbols_on_request),
		cmocka_unit_test(no_sites_until_an_analysis_needs_them),
		cmocka_unit_test(sites_aside_before_the_run),
		cmocka_unit_test(stacks_only_where_sites_are_taken),
	};
	return cmocka_run_group_tests(tests, make_recording, drop_recording);
}
