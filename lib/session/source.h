/*
 * Internal: what the session binds to a stream (lib/stream/stream.h), which
 * knows no source itself.
 */
#ifndef MS_SESSION_SOURCE_H
#define MS_SESSION_SOURCE_H

#include <mapscope/pdreader.h>

#include "stream/stream.h"

/*
 * A file's reader as a stream's source: its spans, its records held until
 * a round releases them (r is set to keep them). r stays the caller's.
 */
void session_reader_source(struct ms_pdreader *r, struct ms_stream_source *src);

/* A stream for r's events and tracing data. NULL with errno set. */
struct ms_stream *session_reader_stream(struct ms_pdreader *r);

#endif
