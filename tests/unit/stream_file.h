/*
 * A stream over a recording, bound to its reader as the session binds it:
 * for tests that drive the stream without a session. One stream at a
 * time: the reader of the last one made is the one a run reads.
 */
#ifndef MS_TEST_STREAM_FILE_H
#define MS_TEST_STREAM_FILE_H

#include "session/source.h"
#include "stream/stream.h"

static struct ms_pdreader *stream_file_reader;

static inline struct ms_stream *stream_file_new(struct ms_pdreader *r)
{
	stream_file_reader = r;
	return session_reader_stream(r);
}

static inline int stream_file_run(struct ms_stream *s, ms_stream_fn fn, void *ctx)
{
	struct ms_stream_source src;

	session_reader_source(stream_file_reader, &src);
	return ms_stream_run(s, &src, fn, ctx);
}

#endif
