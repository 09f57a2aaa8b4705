/*
 * Internal: what the stream needs of the reader beyond open / next / free:
 * one way to read records in spans (whose fast paths take runs of them in
 * one pass), and a way to hold them while it puts them in time order.
 */
#ifndef MS_PERFDATA_READER_H
#define MS_PERFDATA_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/pdreader.h>
#include <linux/perf_event.h>

struct ms_evlist;

/* The recording's events. */
const struct ms_evlist *ms_pdreader_evlist(const struct ms_pdreader *r);

/*
 * The last sample's time as the file's SAMPLE_TIME feature gives it,
 * written when the recording was closed (perf: where it processed the
 * build-ids); 0 where the file has none, or where perf wrote ~0 there,
 * as it does for samples without PERF_SAMPLE_TIME (--no-timestamp).
 */
uint64_t ms_pdreader_sample_time_last(const struct ms_pdreader *r);

/* The TRACING_DATA blob (NULL, 0 where the file has none). */
void ms_pdreader_tracing_data(const struct ms_pdreader *r, const void **data, size_t *len);

/*
 * The one way to read the data: 1 with [*start, *start + *len) the bytes
 * read ahead, from the next record on (at byte offset *off), 0 at the end,
 * or an error as ms_pdreader_next() gives. The first record is whole and
 * checked; the bytes after it are as read, unchecked, and may end inside a
 * record: a caller walks on only over records that ms_pdreader_whole()
 * passes and whose type is below 64 (pipe mode's header records are the
 * reader's, so a span ends at them), then moves past what it took with
 * ms_pdreader_consume(): len bytes of whole records, the last of them last
 * bytes long. Header records of pipe mode are consumed here. The bytes stay
 * valid as records from ms_pdreader_next() do.
 */
int ms_pdreader_span(struct ms_pdreader *r, const void **start, size_t *len, uint64_t *off);
void ms_pdreader_consume(struct ms_pdreader *r, size_t len, size_t last);

/* Whether the record at h is whole in the avail bytes there, with a size the kernel's have. */
static inline bool ms_pdreader_whole(const struct perf_event_header *h, size_t avail)
{
	/* sizes are multiples of 8: 0 is the only one below 8 */
	return avail >= sizeof(*h) && h->size && !(h->size % 8) && h->size <= avail;
}

/*
 * keep: records stay valid until ms_pdreader_release() covers them, so a
 * caller that holds records for a while (to put them in time order) need
 * not copy them. Memory then grows with the records held.
 */
void ms_pdreader_keep(struct ms_pdreader *r, bool keep);
/*
 * Pipe mode: its events, features and tracing data come as records, read
 * with the data (a file's are all known at open).
 */
bool ms_pdreader_pipe(const struct ms_pdreader *r);

/*
 * The build-id records the reader has (its header's, then those of the
 * data read so far), as the bytes of its list: appended to, never changed.
 */
const unsigned char *ms_pdreader_build_ids(const struct ms_pdreader *r, size_t *size);

/* Build-id i of such a list of size bytes, as ms_pdreader_build_id(). */
bool ms_build_id_in(const unsigned char *data, size_t size, size_t i, const char **path,
		    const unsigned char **id, size_t *len);

/* With keep: the records that start before byte offset upto are no longer needed. */
void ms_pdreader_release(struct ms_pdreader *r, uint64_t upto);

/*
 * Whether the file says its records all lie in time order (mapscope's
 * closed recordings, perfdata/format.h MS_VERSION_IN_ORDER), so that they
 * can go out as they come. The environment's MAPSCOPE_SORT_QUEUE=1 has
 * every file read as one that does not say it, through the sort queue:
 * what the test of that fast path compares it with.
 */
bool ms_pdreader_in_order(const struct ms_pdreader *r);

/*
 * The bytes [*lo, *hi) of the file where it is mapped: a record handed
 * out from there stays as it is, wherever it was released, until the
 * reader is freed (pages let go are read again from the page cache).
 * Both NULL where the file is not mapped (a pipe).
 */
void ms_pdreader_lasting(const struct ms_pdreader *r, const void **lo, const void **hi);

/*
 * Byte offset of a record handed out and still valid (kept, or the last
 * one). Past the first compressed record, offsets count decompressed bytes.
 */
uint64_t ms_pdreader_offset_of(const struct ms_pdreader *r, const void *rec);

#endif
