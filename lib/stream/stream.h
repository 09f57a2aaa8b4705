/*
 * Internal: the stream turns a perf.data reader's records into normalised events
 * (struct ms_event) in time order. Records of different CPUs are merged by
 * perf's FINISHED_ROUND rule; syscall tracepoint entries and exits are
 * paired per thread, and a change is emitted when its syscall succeeds,
 * with its exact range.
 */
#ifndef MAPSCOPE_STREAM_H
#define MAPSCOPE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/event.h>
#include <mapscope/pdreader.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_stream;

/* struct ms_session_stats (mapscope/session.h) is what ms_stream_stats() fills. */

/* Called for each event; ev is valid during the call only. Non-zero stops the run. */
typedef int (*ms_stream_fn)(const struct ms_event *ev, void *ctx);

/*
 * Called, where set, with runs of data samples in place of fn for each:
 * run's samples in time order, valid during the call only, all of one
 * event (so of one layout: each has a stack pointer, or none does; a run
 * over the recording's bytes, run->evs NULL, has none), each with a user
 * address. It must do what fn would do for each in turn and return what
 * fn would have returned at the first non-zero (the samples after it are
 * dropped, as the run stops).
 */
typedef int (*ms_stream_samples_fn)(const struct ms_samples *run, void *ctx);

/*
 * Prepares a stream over r (which stays the caller's and must outlive it).
 * NULL with errno set; EBADMSG where the tracing data does not parse.
 */
struct ms_stream *ms_stream_new(struct ms_pdreader *r);

/*
 * Reads every record and emits its events. 0 at the end of the data;
 * -EBADMSG if the data is corrupt (the events before the bad record have
 * been emitted; the cause is logged with its byte offset); or what fn
 * returned.
 */
int ms_stream_run(struct ms_stream *s, ms_stream_fn fn, void *ctx);

/*
 * Has data samples of a fixed layout (the usual kind) handed over in runs
 * to fn, with the ctx of ms_stream_run, rather than one by one: a call per
 * run instead of per sample. NULL goes back to one by one. 0 or -ENOMEM.
 */
int ms_stream_set_samples_fn(struct ms_stream *s, ms_stream_samples_fn fn);

struct ms_live;

/*
 * Prepares a stream over a live source: records are pushed in as they are
 * drained from its rings (ms_stream_push) and emitted by ms_stream_flush.
 * l stays the caller's and must outlive the stream. NULL with errno set.
 */
struct ms_stream *ms_stream_new_live(struct ms_live *l);

/* Queues one record (copied). 0 or -ENOMEM. */
int ms_stream_push(struct ms_stream *s, const struct perf_event_header *rec);

/* Emits the queued records with time <= limit, in time order. 0 or what fn returned. */
int ms_stream_flush(struct ms_stream *s, uint64_t limit, ms_stream_fn fn, void *ctx);

/* Whether the recording has the syscall records that make unmaps exact. */
bool ms_stream_has_syscalls(const struct ms_stream *s);

void ms_stream_stats(const struct ms_stream *s, struct ms_session_stats *st);

/* Accepts NULL. */
void ms_stream_free(struct ms_stream *s);

#ifdef __cplusplus
}
#endif
#endif
