/*
 * Internal: what the session binds to a stream (lib/stream/stream.h), which
 * knows no source itself.
 */
#ifndef MS_SESSION_SOURCE_H
#define MS_SESSION_SOURCE_H

#include <mapscope/pdreader.h>

#include "stream/stream.h"

struct ms_session;
struct ms_region;

/*
 * A file's reader as a stream's source: its spans, its records held until
 * a round releases them (r is set to keep them). r stays the caller's.
 */
void session_reader_source(struct ms_pdreader *r, struct ms_stream_source *src);

/* A stream for r's events and tracing data. NULL with errno set. */
struct ms_stream *session_reader_stream(struct ms_pdreader *r);

/* The stream of session s, for the index's builder to read its statistics. */
struct ms_stream *session_stream(const struct ms_session *s);

/*
 * Gives s (opened, not run) what a replay to an instant would have left,
 * as its index holds it: the first time and the stream's statistics.
 */
void session_restore(struct ms_session *s, uint64_t first_time, const struct ms_stream_stats *st,
		     const struct ms_stream_lost *lost, size_t nr_lost);

/*
 * The thread that names s's sites where they are aside
 * (ms_session_sites_aside()), for an analysis to hand it the code it
 * names too, so that one thread reads the binaries (symbols/namer.h);
 * NULL where the sites are not aside, or there are no symbols or no
 * such thread.
 */
struct ms_namer *session_namer(struct ms_session *s);

/* r's allocation site and chain handed to the sites' namer now (ms_sites_ask()), where it names them. */
void session_sites_ask(struct ms_session *s, const struct ms_region *r);

/*
 * Whether ms_session_run() may run the stream on a thread of its own, the
 * model and the analyses taking its events on the caller's (session/ahead.h):
 * for a caller that reads nothing of the stream's or the reader's state
 * while the run goes on (ms_session_stats() and the like after it only).
 * Off until asked for.
 */
void session_read_ahead(struct ms_session *s, bool on);

/*
 * The replay of s stops at its first event or sample after t, on the
 * recording's clock, or t after the first event's time where rel is set
 * (UINT64_MAX: at none): the model then holds the address space as it was
 * at t. It may stop early too where an analysis returns nonzero. Either
 * way, the stream's statistics (ms_session_stats()) are then those at the
 * event it stopped at, the stream run ahead or not: the records read by
 * the time that event was made, the samples the model took (a run cut at
 * t counts up to t). A sample set aside (a kernel or zero address) after
 * t but before the first sample past it is counted.
 */
void session_stop_after(struct ms_session *s, uint64_t t, bool rel);

/*
 * Stops what s runs on threads of its own taking work, and leaves the
 * rest as it is: for a process that exits now, whose exit frees s whole
 * (freeing it piece by piece, and waking those threads to end, took a
 * tenth of a short report's time). Nothing may use s after.
 */
void session_leave(struct ms_session *s);

#endif
