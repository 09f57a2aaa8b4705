/*
 * Internal: the index of a recording (FILE.msidx, made by `mapscope index`),
 * which answers `maps --at T` and `timeline` without a replay.
 *
 * It is not a checkpoint to resume from: it holds what those answers are
 * made of, captured from one full replay. For each process, its VMA list
 * each time an event changed it (a delta against the one before, or the
 * whole list now and then), keyed by the newest time the stream had
 * reached at that event; its exits and execs; the first time it appeared.
 * A replay that stops at the first event later than T has applied exactly
 * the events whose key is at most T, so the list with the last key <= T is
 * the one it would print. The changes, as the timeline prints them, in
 * stream order. And the stream's statistics, which the warnings print:
 * the index answers only from the point on where they stop changing
 * (stable_key), and a replay runs for an earlier instant.
 *
 * It carries what makes it stale: the recording's size and mtime and a
 * hash of its first and last 64 KiB and of 4 KiB at each MiB, and a hash
 * of its own payload. Native byte order: the index is the machine's own.
 */
#ifndef MS_SESSION_INDEX_H
#define MS_SESSION_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

#include "stream/stream.h"
#include "util/buf.h"

#define MS_INDEX_SUFFIX ".msidx"

/* What a recording looked like when it was indexed. */
struct ms_index_stamp {
	uint64_t size, mtime_ns, hash;
};

/* The recording at path as it is now. 0 or -errno. */
int ms_index_stamp_file(const char *path, struct ms_index_stamp *st);

/* --- building ----------------------------------------------------------- */

struct ms_indexer;

/* NULL on ENOMEM. */
struct ms_indexer *ms_indexer_new(void);
void ms_indexer_free(struct ms_indexer *x);

/* The analysis that fills x from a session's replay (ctx: x). */
extern const struct ms_analysis ms_indexer_analysis;

/* The parts the analysis records, for a caller (or a test) that has them otherwise. 0 or -ENOMEM. */
int ms_indexer_listing(struct ms_indexer *x, uint32_t pid, uint64_t key, const struct ms_vma *v, size_t n);
int ms_indexer_change(struct ms_indexer *x, const struct ms_change *c);
int ms_indexer_exit(struct ms_indexer *x, uint32_t pid, uint64_t key, uint64_t time, uint64_t event);
int ms_indexer_exec(struct ms_indexer *x, uint32_t pid, uint64_t key);
int ms_indexer_seen(struct ms_indexer *x, uint32_t pid, uint64_t key);
int ms_indexer_thread(struct ms_indexer *x, uint32_t tid);
void ms_indexer_facts(struct ms_indexer *x, uint64_t first_time, uint64_t stable_key, uint64_t stable_event,
		      const struct ms_stream_stats *st, const struct ms_stream_lost *lost, size_t nr_lost);

/* The index's bytes for a recording stamped st, appended to out. 0 or -ENOMEM. */
int ms_indexer_serialize(const struct ms_indexer *x, const struct ms_index_stamp *st, struct ms_buf *out);

/*
 * Writes the index of the recording at rec_path (stamped now) to idx_path,
 * by way of a temporary file renamed over it. 0 or -errno.
 */
int ms_indexer_write(const struct ms_indexer *x, const char *rec_path, const char *idx_path);

/* --- reading ------------------------------------------------------------ */

struct ms_index;

/*
 * Takes p[0, len) (borrowed: it must outlive *out) as the index of a
 * recording stamped want. 0; -EPROTO where it is no index of this format;
 * -ESTALE where it was made of another recording, or of this one before
 * it changed; -EBADMSG where it is damaged; -ENOMEM.
 */
int ms_index_parse(const void *p, size_t len, const struct ms_index_stamp *want, struct ms_index **out);

/* The index at idx_path of the recording at rec_path (mapped, owned by *out); errors as above, or -errno. */
int ms_index_open(const char *rec_path, const char *idx_path, struct ms_index **out);
void ms_index_free(struct ms_index *ix);

/* The recording's first time (0: none). */
uint64_t ms_index_first_time(const struct ms_index *ix);

/*
 * Gives session s (opened, not run) the statistics and first time that a
 * replay to an instant the index answers for would have left.
 */
void ms_index_restore(const struct ms_index *ix, struct ms_session *s);

/* A process's maps at an instant, as `maps` finds them. */
struct ms_index_maps {
	bool seen;                /* the process had appeared by then */
	uint64_t exited;          /* when it had exited by then, or 0 */
};

/*
 * Process pid at instant at (last: just before its exit): fn gets each VMA
 * in address order, and *out what else `maps` says. 0; 1 where the index
 * cannot answer exactly (a replay must); -EBADMSG where it is damaged.
 */
int ms_index_maps(const struct ms_index *ix, uint32_t pid, uint64_t at, bool last, struct ms_index_maps *out,
		  void (*fn)(const struct ms_vma *v, void *ctx), void *ctx);

/*
 * The changes with from <= time <= to, of process pid (-1: all), in the
 * order the timeline prints them. 0; 1 where the index cannot answer
 * (a replay must).
 */
int ms_index_changes(const struct ms_index *ix, uint64_t from, uint64_t to, long pid,
		     void (*fn)(const struct ms_change *c, void *ctx), void *ctx);

#endif
