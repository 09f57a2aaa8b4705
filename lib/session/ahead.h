/*
 * Internal: a stream run ahead on a thread of its own, what it emits taken
 * on the caller's thread in the same order (lib/session/ahead.c).
 */
#ifndef MS_SESSION_AHEAD_H
#define MS_SESSION_AHEAD_H

#include <stdbool.h>

#include "stream/stream.h"

/*
 * Whether a replay here may run its stream ahead: a second CPU online,
 * and MAPSCOPE_STREAM_AHEAD not 0 (1: whatever the CPUs).
 */
bool ms_ahead_wanted(void);

/* What a stream run ahead hands on, on the caller's thread. */
struct ms_ahead {
	ms_stream_fn fn;
	ms_stream_samples_fn sfn;        /* or NULL: ms_stream_set_samples_fn()'s is left as it is */
	bool unwinds;                    /* fn reads the events' uregs and ustack: copied too */
	/*
	 * Where r is not NULL: r's build-ids (ms_pdreader_build_ids()) grow as
	 * its data is read, and ids gets each new part, at the place among the
	 * events where the stream read it. ids_from: the bytes it has already.
	 */
	const struct ms_pdreader *r;
	size_t ids_from;
	void (*ids)(void *ctx, const unsigned char *more, size_t len);
	/*
	 * Or NULL: the stream's settings (ms_stream_facts()), where they
	 * changed, at that place among the events: what ms_stream_sysctl()
	 * says on the stream's thread when it makes the event after.
	 */
	void (*facts)(void *ctx, const struct ms_stream_facts *f);
	/* Or NULL: called on the stream's thread with each map event, before fn has it (symbols/preopen.h). */
	void (*map)(void *map_ctx, const struct ms_event *ev);
	void *map_ctx;
	/*
	 * The statistics (ms_stream_stats(), ms_stream_lost_pid()) travel with
	 * the events where they change: where fn or sfn stops the run, the
	 * stream's are then put back to what they were when the stream made
	 * that event, as a run in turn leaves them where the caller captures
	 * them at its stop (session.c).
	 */
	bool stats;
	void *ctx;
};

/*
 * ms_stream_run(st, src, how->fn, how->ctx), the stream on a thread of its
 * own: fn and sfn (which this sets) are called on the caller's thread, in
 * the order the stream made their events, with what each event points to
 * copied. src's release waits until the caller's thread has taken every
 * event before it. What the stream logs is logged at the same place among
 * the events. The first nonzero return of fn or sfn stops the stream and
 * is returned; otherwise the stream's. -EAGAIN, with nothing read, where
 * no thread could be made: the caller runs the stream in turn.
 */
int ms_ahead_run(struct ms_stream *st, const struct ms_stream_source *src, const struct ms_ahead *how);

#endif
