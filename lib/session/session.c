/*
 * The session: reader -> stream -> model, and the model's charges and
 * changes fanned out to the analyses. Samples go to the model in runs
 * unless an analysis asked to see them one by one; where one analysis
 * alone takes charges, the model calls it directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mapscope/live.h>
#include <mapscope/pdreader.h>
#include <mapscope/session.h>
#include <mapscope/symbols.h>

#include "analysis/sites.h"
#include "aspace/samples.h"
#include "kernel/live.h"
#include "kernel/sysctl.h"
#include "perfdata/reader.h"
#include "session/ahead.h"
#include "session/source.h"
#include "stream/stream.h"
#include "symbols/jit.h"
#include "symbols/preopen.h"
#include "util/buf.h"
#include "util/log.h"

#define MAX_ANALYSES 16

struct slot {
	const struct ms_analysis *a;
	void *ctx;
};

struct ms_session {
	struct ms_pdreader *reader;
	struct ms_stream *stream;
	struct ms_aspace *as;
	struct ms_symbols *syms;
	struct ms_session_opts o;
	bool no_sites;               /* ms_session_no_sites(), until an analysis needs the sites */
	bool needs_sites;            /* an analysis added with MS_ANALYSIS_NEEDS_SYMBOLS */
	bool window_set;
	struct slot an[MAX_ANALYSES];
	size_t n;
	bool any_event, any_change, sees_samples;
	uint64_t first_time;
	size_t build_ids;           /* the reader's build-ids handed to the symbols so far */
	size_t build_ids_size;      /* the reader's bytes of build-ids when they were last walked */
	struct ms_buf ids;          /* with the stream ahead: the reader's build-ids, as they reached this thread */
	bool ids_ahead;             /* ids, not the reader's, are the ones read so far */
	struct ms_stream_facts facts;   /* with the stream ahead: its settings, as they reached this thread */
	uint64_t facts_told;        /* the settings' changes the model was told of (tell_facts()) */
	struct ms_stream_stats stop_stats;   /* in turn, with stops: the stream's at the first stop (past()) */
	struct ms_stream_lost *stop_lost;
	size_t nr_stop_lost;
	bool in_turn;               /* the stream runs on this thread (run_in_turn()) */
	bool facts_ahead;           /* while it runs, facts are the ones read so far */
	bool ahead;                 /* the stream may run ahead (session_read_ahead) */
	bool stops;                 /* session_stop_after() was called: the replay may stop early */
	bool until_rel;             /* until counts from the first time, not yet known */
	uint64_t until;             /* with stops: the replay stops at the first event or sample after this */
	bool halted;                /* the replay stopped (past()) */
	uint64_t samples_past;      /* samples the stream counted past it then (past()) */
	bool corrupt;
	bool begun;                 /* the model's listener is set and the analyses' begin called */
	struct ms_sites sites;      /* with symbols: each region's allocation site, named once here */
};

/* --- binding a source to the stream ---------------------------------------- */

static int reader_span(void *r, const void **start, size_t *len, uint64_t *off)
{
	return ms_pdreader_span(r, start, len, off);
}

static void reader_consume(void *r, size_t len, size_t last)
{
	ms_pdreader_consume(r, len, last);
}

static void reader_release(void *r, uint64_t upto)
{
	ms_pdreader_release(r, upto);
}

static uint64_t reader_offset_of(void *r, const void *rec)
{
	return ms_pdreader_offset_of(r, rec);
}

void session_reader_source(struct ms_pdreader *r, struct ms_stream_source *src)
{
	*src = (struct ms_stream_source){ r, reader_span, reader_consume, reader_release, reader_offset_of,
					  NULL, NULL };
	ms_pdreader_lasting(r, &src->lasting_lo, &src->lasting_hi);
	ms_pdreader_keep(r, true);
}

struct ms_stream *session_reader_stream(struct ms_pdreader *r)
{
	const void *td;
	size_t len;

	struct ms_stream *s;

	ms_pdreader_tracing_data(r, &td, &len);
	s = ms_stream_new(ms_pdreader_evlist(r), td, len, false);
	if (s)
		ms_stream_set_in_order(s, ms_pdreader_in_order(r));
	return s;
}

MS_EXPORT struct ms_session *ms_session_open(const char *path, const struct ms_session_opts *opts)
{
	struct ms_session *s = calloc(1, sizeof(*s));
	int err = -ENOMEM;

	if (!s)
		return NULL;
	s->o.to_ns = UINT64_MAX;
	if (opts) {
		s->o = *opts;
		s->window_set = opts->from_ns || opts->to_ns != UINT64_MAX || opts->from_rel || opts->to_rel;
	}
	s->reader = ms_pdreader_open(path);
	if (!s->reader) {
		err = -errno;
		goto fail;
	}
	s->stream = session_reader_stream(s->reader);
	if (!s->stream || !(s->as = ms_aspace_new()) ||
	    (s->o.symbols && !(s->syms = ms_symbols_new()))) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	return s;
fail:
	ms_session_free(s);
	errno = -err;
	return NULL;
}

MS_EXPORT struct ms_session *ms_session_open_live(struct ms_live *l)
{
	struct ms_session *s = calloc(1, sizeof(*s));
	uint64_t zero;
	const void *td;
	size_t len;

	if (!s)
		return NULL;
	s->o.to_ns = UINT64_MAX;
	ms_live_tracing_data(l, &td, &len);
	s->stream = ms_stream_new(ms_live_evlist(l), td, len, true);   /* the rings' bytes are written over */
	if (!s->stream || !(s->as = ms_aspace_new())) {
		ms_session_free(s);
		errno = ENOMEM;
		return NULL;
	}
	/* This machine's, as record would write it: whether a read fault maps the zero page. */
	if (!ms_read_fault_zero_page(&zero))
		ms_stream_set_fact(s->stream, MS_FACT_READ_ZERO_PAGE, zero);
	return s;
}

MS_EXPORT int ms_session_push(struct ms_session *s, const struct perf_event_header *rec)
{
	return ms_stream_push(s->stream, rec);
}

static int on_event(const struct ms_event *ev, void *ctx);
static int past(struct ms_session *s, size_t n);
static void begin(struct ms_session *s);

MS_EXPORT int ms_session_flush(struct ms_session *s, uint64_t limit)
{
	begin(s);
	return ms_stream_flush(s->stream, limit, on_event, s);
}

MS_EXPORT int ms_session_no_sites(struct ms_session *s)
{
	if (s->begun)
		return -EBUSY;
	s->no_sites = !s->needs_sites;
	return 0;
}

MS_EXPORT int ms_session_sites_aside(struct ms_session *s, bool chains)
{
	if (s->begun)
		return -EBUSY;
	ms_sites_aside(&s->sites, chains);
	return 0;
}

MS_EXPORT int ms_session_add(struct ms_session *s, const struct ms_analysis *a, void *ctx)
{
	if (s->n == MAX_ANALYSES)
		return -ENOMEM;
	if ((a->flags & MS_ANALYSIS_NEEDS_SYMBOLS) && (!s->syms || s->no_sites)) {
		if (s->begun)
			return -EBUSY;        /* the binaries mapped so far were not followed, or no site taken */
		if (!s->syms && !(s->syms = ms_symbols_new()))
			return -ENOMEM;
		s->no_sites = false;
	}
	s->needs_sites |= (a->flags & MS_ANALYSIS_NEEDS_SYMBOLS) != 0;
	s->an[s->n++] = (struct slot){ a, ctx };
	s->any_event |= a->event != NULL;
	s->any_change |= a->change != NULL;
	s->sees_samples |= a->event && (a->flags & MS_ANALYSIS_SEES_SAMPLES);
	return 0;
}

/* --- charges: one analysis is called directly; several through these ------- */

static void fan_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_session *s = ctx;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->an[i].a->charge)
			s->an[i].a->charge(s->an[i].ctx, ev, r);
}

static void fan_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_session *s = ctx;
	const struct ms_analysis *a;
	struct ms_event tmp;
	size_t i, k;

	for (i = 0; i < s->n; i++) {
		a = s->an[i].a;
		if (a->charge_run) {
			a->charge_run(s->an[i].ctx, run, r);
		} else if (a->charge) {
			samples_begin(run, &tmp);
			for (k = 0; k < run->n; k++)
				a->charge(s->an[i].ctx, samples_at(run, k, &tmp), r);
		}
	}
}

static void fan_access(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start,
		       uint64_t end)
{
	struct ms_session *s = ctx;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->an[i].a->access)
			s->an[i].a->access(s->an[i].ctx, ev, r, start, end);
}

static void listen(struct ms_session *s)
{
	struct ms_aspace_listener l = { .charge = fan_charge, .charge_run = fan_charge_run, .access = fan_access };
	const struct slot *one = NULL;
	size_t i, takers = 0;

	for (i = 0; i < s->n; i++)
		if (s->an[i].a->charge || s->an[i].a->access) {
			one = &s->an[i];
			takers++;
		}
	if (takers == 1) {
		l = (struct ms_aspace_listener){ .charge = one->a->charge, .charge_run = one->a->charge_run,
						 .access = one->a->access };
		ms_aspace_set_listener(s->as, &l, one->ctx);
	} else if (takers > 1) {
		ms_aspace_set_listener(s->as, &l, s);
	}
}

/* --- events ---------------------------------------------------------------- */

/* The first time is known: the window's relative ends are resolved, and the analyses told. */
static void start(struct ms_session *s, uint64_t t)
{
	size_t i;

	s->first_time = t;
	if (s->o.from_rel)
		s->o.from_ns += t;
	if (s->o.to_rel && s->o.to_ns != UINT64_MAX)
		s->o.to_ns += t;
	s->o.from_rel = s->o.to_rel = false;
	if (s->until_rel && s->until != UINT64_MAX)
		s->until = t + s->until < t ? UINT64_MAX : t + s->until;
	s->until_rel = false;
	for (i = 0; i < s->n; i++)
		if (s->an[i].a->start)
			s->an[i].a->start(s->an[i].ctx, s);
}

/*
 * The build-ids the recording has shown so far, so that a rebuilt binary
 * is not misnamed. Called at each map: walked again only when the reader
 * has more of them (a file has them all in its header; a pipe's come as
 * records), since a walk starts from the first.
 */
static void expect_build_ids(struct ms_session *s)
{
	const unsigned char *data, *id;
	const char *path;
	size_t size, len;

	if (!s->reader)
		return;
	if (s->ids_ahead) {
		data = s->ids.data;
		size = s->ids.len;
	} else
		data = ms_pdreader_build_ids(s->reader, &size);
	if (size == s->build_ids_size)
		return;
	s->build_ids_size = size;
	for (; ms_build_id_in(data, size, s->build_ids, &path, &id, &len); s->build_ids++)
		ms_symbols_expect_build_id(s->syms, path, id, len);
}

/* With the stream ahead: build-ids it read, handed on where it read them. */
static void more_build_ids(void *ctx, const unsigned char *more, size_t len)
{
	struct ms_session *s = ctx;

	ms_buf_append(&s->ids, more, len);   /* out of memory: the ids after are not expected, as none */
}

/* With the stream ahead: its settings, where they changed among its events. */
static void more_facts(void *ctx, const struct ms_stream_facts *f)
{
	struct ms_session *s = ctx;

	s->facts = *f;
}

static int __attribute__((noinline)) apply_change(struct ms_session *s, const struct ms_event *ev)
{
	struct ms_change c;
	size_t i;
	int err = ms_aspace_apply_change(s->as, ev, &c);

	if (err <= 0)
		return err;                   /* nothing changed, or an error */
	/*
	 * A region just made: its site is named now, while its process's
	 * binaries are known. The heap is made by the first brk that grows it.
	 */
	if (s->syms && !s->no_sites && c.region && (c.op == MS_OP_MAP || (c.op == MS_OP_BRK && !ms_sites_noted(&s->sites, c.region))) &&
	    (err = ms_sites_note(&s->sites, s->syms, c.region, ev)))
		return err;
	for (i = 0; i < s->n; i++)
		if (s->an[i].a->change && (err = s->an[i].a->change(s->an[i].ctx, s, ev, &c)))
			return err > 0 ? past(s, 0) : err;
	return 0;
}

/*
 * The replay stops (at the instant, or where an analysis stopped it): the
 * stream counted n samples the model did not take, handed on with the
 * last ones before the instant (a run of them cut there), or the sample
 * an analysis stopped at. Left out of the statistics: the first stop's
 * only, as a stream in turn may still let out what it had queued; in
 * turn, where the replay may stop early, the stream's statistics are
 * taken here too, to be put back once it has (run_in_turn()). 1.
 */
static int past(struct ms_session *s, size_t n)
{
	if (s->halted)
		return 1;
	s->halted = true;
	s->samples_past = n;
	if (s->in_turn && s->stops) {
		ms_stream_stats(s->stream, &s->stop_stats);
		s->stop_lost = ms_stream_lost_copy(s->stream, &s->nr_stop_lost);
	}
	return 1;
}

/*
 * The model's part of the recording machine's settings, where they
 * changed: whether a read fault takes a page of its own (which makes an
 * anon_vma) or maps the zero page. Before any event or sample it applies:
 * a live session's come before its first record.
 */
static inline void tell_facts(struct ms_session *s)
{
	const struct ms_stream_facts *f = s->facts_ahead ? &s->facts : ms_stream_facts(s->stream);

	if (f->changes == s->facts_told)
		return;
	s->facts_told = f->changes;
	ms_aspace_set_read_fault_page(s->as, ms_stream_facts_read_fault_page(f));
}

static int on_event(const struct ms_event *ev, void *ctx)
{
	struct ms_session *s = ctx;
	size_t i;
	int err;

	tell_facts(s);
	if (!s->first_time && ev->time)
		start(s, ev->time);           /* perf's synthesised records carry time 0 */
	if (s->syms && ev->kind != MS_EV_SAMPLE) {
		if (ev->kind == MS_EV_MAP)    /* a pipe's build-ids come as records, ahead of their maps */
			expect_build_ids(s);
		ms_symbols_track(s->syms, ev);
	} else if (s->syms)
		ms_symbols_set_time(s->syms, ev->time);
	if (s->stops && !s->until_rel && ev->time > s->until)
		return past(s, ev->kind == MS_EV_SAMPLE);   /* the instant asked for has passed */
	for (i = 0; s->any_event && i < s->n; i++)
		if (s->an[i].a->event && (ev->kind != MS_EV_SAMPLE || (s->an[i].a->flags & MS_ANALYSIS_SEES_SAMPLES)) &&
		    (err = s->an[i].a->event(s->an[i].ctx, s, ev))) {
			if (err > 0)
				past(s, ev->kind == MS_EV_SAMPLE);   /* a sample stopped at is not taken */
			return err;
		}
	if (ev->kind == MS_EV_SAMPLE || (!s->any_change && !s->syms))
		return ms_aspace_apply(s->as, ev, NULL);
	return apply_change(s, ev);
}

/*
 * A run of samples in parts, at the instants a JIT's code changes (its
 * jitdump's loads and moves): the analyses name the code of each part as
 * it was then, and may take names to stay the same within a run.
 */
static int __attribute__((noinline)) samples_by_jit_time(struct ms_session *s, const struct ms_samples *run)
{
	struct ms_samples part = *run;
	size_t i = 0, from = 0;
	uint64_t t;
	int err;

	for (; i < run->n; i++) {
		t = ms_samples_time(run, i);
		if (t < ms_symbols_next_change(s->syms))
			continue;
		if (i > from) {
			part.base = run->base + from * run->stride;
			part.evs = run->evs ? run->evs + from : NULL;
			part.n = i - from;
			if ((err = ms_aspace_apply_samples(s->as, &part)))
				return err;
		}
		ms_symbols_set_time(s->syms, t);
		from = i;
	}
	part.base = run->base + from * run->stride;
	part.evs = run->evs ? run->evs + from : NULL;
	part.n = run->n - from;
	return part.n ? ms_aspace_apply_samples(s->as, &part) : 0;
}

/* How many of run's samples come at or before the instant the replay stops after (session_stop_after()). */
static size_t samples_until(const struct ms_session *s, const struct ms_samples *run)
{
	size_t i;

	if (!s->stops || s->until_rel || !run->n || ms_samples_time(run, run->n - 1) <= s->until)
		return run->n;
	for (i = 0; i < run->n && ms_samples_time(run, i) <= s->until; i++)
		;
	return i;
}

/* Runs of samples, which no analysis sees one by one. */
static int on_samples(const struct ms_samples *run, void *ctx)
{
	struct ms_session *s = ctx;
	struct ms_samples part;
	size_t i;
	int err;

	tell_facts(s);
	for (i = 0; !s->first_time && i < run->n; i++)
		if (ms_samples_time(run, i))
			start(s, ms_samples_time(run, i));
	if ((i = samples_until(s, run)) < run->n) {
		part = *run;
		part.n = i;
		if (i && (err = on_samples(&part, s)))
			return err;
		return past(s, run->n - i);   /* the instant asked for has passed */
	}
	if (s->syms && ms_symbols_next_change(s->syms) != UINT64_MAX)
		return samples_by_jit_time(s, run);
	return ms_aspace_apply_samples(s->as, run);   /* one layout's samples */
}

/* Once, before the first record: the model's listener, and each analysis's begin. */
/*
 * Whether the events' stack copies are unwound: only for the sites (and
 * analyses that need symbols, which want sites). Where not, the stream
 * keeps none and the thread run ahead copies none.
 */
static bool unwinds(const struct ms_session *s)
{
	return s->syms && !s->no_sites;
}

static void begin(struct ms_session *s)
{
	const struct perf_event_attr *attr;
	size_t i;

	if (s->begun)
		return;
	s->begun = true;
	listen(s);
	if (s->stream)
		ms_stream_set_no_stacks(s->stream, !unwinds(s));
	/* A jitdump's times are CLOCK_MONOTONIC: those of a recording on another clock (perf's default) are not. */
	if (s->syms && s->reader && ms_pdreader_nr_evsels(s->reader) &&
	    (attr = ms_pdreader_attr(s->reader, 0)))
		ms_symbols_clock_monotonic(s->syms, attr->use_clockid && attr->clockid == CLOCK_MONOTONIC);
	for (i = 0; i < s->n; i++)
		if (s->an[i].a->begin)
			s->an[i].a->begin(s->an[i].ctx, s);
}

/*
 * Data cut where one record ends reads as a whole, shorter recording:
 * only the time of the last sample, which the file's SAMPLE_TIME feature
 * holds from when it was closed, tells. Read to the end, the records must
 * reach it (they may pass it: the last time is any record's).
 */
static bool cut_between_records(const struct ms_session *s)
{
	uint64_t want = s->reader ? ms_pdreader_sample_time_last(s->reader) : 0;
	struct ms_stream_stats t;

	if (!want)
		return false;
	ms_stream_stats(s->stream, &t);
	if (t.last_time >= want)
		return false;
	ms_err("the data ends at %.6f s, before the last sample its header records (%.6f s): it was "
	       "cut short where a record ends, and the records after that are missing",
	       (double)(t.last_time > t.first_time ? t.last_time - t.first_time : 0) / 1e9,
	       (double)(want > t.first_time ? want - t.first_time : 0) / 1e9);
	return true;
}

/*
 * The stream ahead on a thread of its own (session/ahead.h), where it was
 * asked for and may: not from a pipe, whose events and tracing data come
 * as records for this thread to read. -EAGAIN where it does not run.
 */
static int run_ahead(struct ms_session *s, const struct ms_stream_source *src)
{
	struct ms_ahead how = { .fn = on_event, .sfn = s->sees_samples ? NULL : on_samples, .unwinds = unwinds(s),
				.facts = more_facts, .stats = s->stops, .ctx = s };
	const unsigned char *d;
	size_t size;
	int err;

	if (!s->ahead || ms_pdreader_pipe(s->reader) || !ms_ahead_wanted())
		return -EAGAIN;
	if (s->syms) {
		d = ms_pdreader_build_ids(s->reader, &size);
		ms_buf_append(&s->ids, d, size);
		if (ms_buf_error(&s->ids))
			return -EAGAIN;
		s->ids_ahead = true;
		how.r = s->reader;
		how.ids_from = size;
		how.ids = more_build_ids;
		if ((how.map_ctx = ms_symbols_preopen(s->syms)))
			how.map = ms_preopen_map;     /* binaries' files opened there, ahead of their maps here */
	}
	/* The analyses ask for the settings as the events come (unmapped's null pages): as in turn. */
	s->facts = *ms_stream_facts(s->stream);
	s->facts_ahead = true;
	if ((err = ms_ahead_run(s->stream, src, &how)) == -EAGAIN)
		s->ids_ahead = false;
	if (how.map)
		ms_preopen_drain(how.map_ctx);   /* what a run stopped early read ahead of its stop */
	s->facts_ahead = false;          /* the thread is gone: the stream's own are the last */
	return err;
}

void session_read_ahead(struct ms_session *s, bool on)
{
	s->ahead = on;
}

void session_stop_after(struct ms_session *s, uint64_t t, bool rel)
{
	s->stops = true;
	s->until = t;
	s->until_rel = rel;
}

/*
 * The stream in turn, on this thread. Where the replay may stop early, the
 * statistics it leaves are those at the event it stopped at (past()), as
 * with the stream ahead: not what the stream counted on its way out.
 */
static int run_in_turn(struct ms_session *s, const struct ms_stream_source *src)
{
	int err;

	s->in_turn = true;
	err = ms_stream_run(s->stream, src, on_event, s);
	s->in_turn = false;
	if (err > 0 && s->stops && s->halted)
		ms_stream_restore_stats(s->stream, &s->stop_stats, s->stop_lost, s->nr_stop_lost);
	free(s->stop_lost);
	s->stop_lost = NULL;
	s->nr_stop_lost = 0;
	return err;
}

MS_EXPORT int ms_session_run(struct ms_session *s)
{
	struct ms_stream_source src;
	size_t i;
	int err;

	begin(s);
	if (s->syms)
		expect_build_ids(s);
	if (!s->sees_samples && (err = ms_stream_set_samples_fn(s->stream, on_samples)))
		return err;
	s->halted = false;
	s->samples_past = 0;
	ms_stream_set_stats_in_order(s->stream, s->stops);
	session_reader_source(s->reader, &src);
	if ((err = run_ahead(s, &src)) == -EAGAIN)
		err = run_in_turn(s, &src);
	if (err == 1)                    /* an analysis had what it needed */
		return 1;
	ms_aspace_finish(s->as);
	if (err == -EBADMSG || (!err && cut_between_records(s)))
		s->corrupt = true;
	if (err && err != -EBADMSG)
		return err;
	for (i = 0; i < s->n; i++)
		if (s->an[i].a->finish)
			s->an[i].a->finish(s->an[i].ctx, s);
	return err;
}

MS_EXPORT struct ms_aspace *ms_session_aspace(const struct ms_session *s)
{
	return s->as;
}

/*
 * A site is named when first asked for (sites.h): the session is const to
 * its callers, and naming changes only what it remembers.
 */
MS_EXPORT const char *ms_session_alloc_site(const struct ms_session *s, const struct ms_region *r)
{
	return r ? ms_sites_site((struct ms_sites *)&s->sites, r) : NULL;
}

MS_EXPORT const char *ms_session_alloc_chain(const struct ms_session *s, const struct ms_region *r)
{
	return r ? ms_sites_chain((struct ms_sites *)&s->sites, r) : NULL;
}

MS_EXPORT size_t ms_session_alloc_ips(const struct ms_session *s, const struct ms_region *r,
				      const uint64_t **ips)
{
	size_t n = r ? ms_sites_ips(&s->sites, r, ips) : 0;

	if (!n && r && r->alloc_chain_len) {
		*ips = r->alloc_chain;       /* no symbols: the frame-pointer chain as the model repaired it */
		return r->alloc_chain_len;
	}
	if (!n)
		*ips = NULL;
	return n;
}

MS_EXPORT void ms_session_stats(const struct ms_session *s, struct ms_session_stats *st)
{
	struct ms_stream_stats t;

	ms_stream_stats(s->stream, &t);
	*st = (struct ms_session_stats){
		.records = t.records, .samples = t.samples - (t.samples >= s->samples_past ? s->samples_past : 0),
		.other_samples = t.other_samples,
		.zero_addr = t.zero_addr, .kernel_addr = t.kernel_addr, .unknown_id = t.unknown_id,
		.bad_samples = t.bad_samples, .bad_records = t.bad_records, .lost = t.lost,
		.unknown_records = t.unknown_records, .bad_names = t.bad_names,
		.lost_first = t.lost_first, .lost_last = t.lost_last, .nr_lost_pids = t.nr_lost_pids,
		.out_of_order = t.out_of_order, .first_time = t.first_time, .last_time = t.last_time,
	};
}

MS_EXPORT bool ms_session_lost_pid(const struct ms_session *s, size_t i, struct ms_session_lost *out)
{
	struct ms_stream_lost l;

	if (!ms_stream_lost_pid(s->stream, i, &l))
		return false;
	*out = (struct ms_session_lost){ l.pid, l.count, l.first, l.last };
	return true;
}

MS_EXPORT bool ms_session_has_syscalls(const struct ms_session *s)
{
	return ms_stream_has_syscalls(s->stream);
}

MS_EXPORT int ms_session_sysctl(const struct ms_session *s, const char *name, uint64_t *value)
{
	if (s->facts_ahead)
		return ms_stream_facts_find(&s->facts, name, value);
	return ms_stream_sysctl(s->stream, name, value);
}

MS_EXPORT struct ms_pdreader *ms_session_reader(const struct ms_session *s)
{
	return s->reader;
}

struct ms_namer *session_namer(struct ms_session *s)
{
	return s->syms ? ms_sites_namer(&s->sites, s->syms) : NULL;
}

void session_sites_ask(struct ms_session *s, const struct ms_region *r)
{
	if (s->syms)
		ms_sites_ask(&s->sites, r);
}

MS_EXPORT struct ms_symbols *ms_session_symbols(const struct ms_session *s)
{
	return s->syms;
}

MS_EXPORT uint64_t ms_session_first_time(const struct ms_session *s)
{
	return s->first_time;
}

MS_EXPORT bool ms_session_window(const struct ms_session *s, uint64_t *from_ns, uint64_t *to_ns)
{
	*from_ns = s->o.from_ns;
	*to_ns = s->o.to_ns;
	return s->window_set;
}

MS_EXPORT bool ms_session_corrupt(const struct ms_session *s)
{
	return s->corrupt;
}

struct ms_stream *session_stream(const struct ms_session *s)
{
	return s->stream;
}

void session_restore(struct ms_session *s, uint64_t first_time, const struct ms_stream_stats *st,
		     const struct ms_stream_lost *lost, size_t nr_lost)
{
	s->first_time = first_time;
	ms_stream_restore_stats(s->stream, st, lost, nr_lost);
}

void session_leave(struct ms_session *s)
{
	if (s)
		ms_sites_stop(&s->sites);
}

MS_EXPORT void ms_session_free(struct ms_session *s)
{
	if (!s)
		return;
	ms_sites_release(&s->sites);
	ms_symbols_free(s->syms);
	ms_aspace_free(s->as);
	ms_stream_free(s->stream);
	ms_pdreader_free(s->reader);
	ms_buf_release(&s->ids);
	free(s);
}
