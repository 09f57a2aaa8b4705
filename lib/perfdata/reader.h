/*
 * Internal: what the stream needs of the reader beyond open / next / free,
 * to read records in spans, take runs of them in one pass, and hold them
 * while it puts them in time order.
 */
#ifndef MS_PERFDATA_READER_H
#define MS_PERFDATA_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/pdreader.h>

struct ms_evlist;

/* The recording's events. */
const struct ms_evlist *ms_pdreader_evlist(const struct ms_pdreader *r);

/* The TRACING_DATA blob (NULL, 0 where the file has none). */
void ms_pdreader_tracing_data(const struct ms_pdreader *r, const void **data, size_t *len);

/*
 * The next data records at once: 1 with [*start, *start + *len) holding one
 * or more whole records one after another (walk them by their sizes; the
 * first lies at byte offset *off in the input), 0 at the end, or an error
 * as ms_pdreader_next() gives. They stay valid as records from
 * ms_pdreader_next() do. Header records of pipe mode are consumed here too.
 */
int ms_pdreader_next_span(struct ms_pdreader *r, const void **start, size_t *len, uint64_t *off);

/*
 * The bytes read ahead and not yet handed out, unchecked, so that a caller
 * that knows the records it wants can check and take them in one pass:
 * their number (0 where none are buffered; ms_pdreader_next() reads more),
 * with *start set. They may end inside a record. A caller takes only
 * records whose size it checked against the bytes that remain and whose
 * type is below 64 (pipe mode's header records are the reader's), then
 * moves past them with ms_pdreader_skip(): len bytes of whole records, the
 * last of them last bytes long. They stay valid as records from
 * ms_pdreader_next() do.
 */
size_t ms_pdreader_peek(const struct ms_pdreader *r, const void **start);
void ms_pdreader_skip(struct ms_pdreader *r, size_t len, size_t last);

/*
 * keep: records stay valid until ms_pdreader_release() covers them, so a
 * caller that holds records for a while (to put them in time order) need
 * not copy them. Memory then grows with the records held.
 */
void ms_pdreader_keep(struct ms_pdreader *r, bool keep);
/* With keep: the records that start before byte offset upto are no longer needed. */
void ms_pdreader_release(struct ms_pdreader *r, uint64_t upto);

/*
 * Byte offset of a record handed out and still valid (kept, or the last
 * one). Past the first compressed record, offsets count decompressed bytes.
 */
uint64_t ms_pdreader_offset_of(const struct ms_pdreader *r, const void *rec);

#endif
