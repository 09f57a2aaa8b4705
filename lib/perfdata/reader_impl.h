/*
 * Internal to lib/perfdata: the reader's state, shared by its two parts:
 * reader.c reads the data (blocks, the map, decompression) and hands out
 * spans of records; header.c takes what describes the recording (the
 * header and its feature sections, pipe mode's header records).
 */
#ifndef MS_PERFDATA_READER_IMPL_H
#define MS_PERFDATA_READER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>

#include <mapscope/pdreader.h>

#include "perfdata/evlist.h"
#include "util/buf.h"
#include "util/log.h"


struct block {
	struct block *next;
	uint64_t base;               /* the offset of data[0], set when it stops being cur */
	uint64_t end;                /* the file offset just past its last whole record */
	unsigned char data[];        /* BUF_CAP bytes, 8-aligned */
};

/*
 * perf record -z: once a compressed record is met, the bytes read from the
 * input are taken here as records, and what fill() hands on is the same
 * stream with each compressed record replaced by what it holds, so that
 * everything above reads one stream of plain records. A record may begin
 * in one compressed record and end in the next (perf compresses its ring
 * buffers in pieces), which a byte stream takes as it comes. Memory stays
 * bounded: one input buffer and zstd's window. Offsets past the first
 * compressed record count the decompressed bytes.
 */
struct raw {
	unsigned char *buf;          /* RAW_CAP bytes; input [lo, hi) not yet taken */
	size_t lo, hi;
	uint64_t at;                 /* the file offset of buf[hi] */
	uint64_t rec_off;            /* the file offset of the record at lo */
	bool eof;
	size_t copy;                 /* bytes of a plain record at lo still to hand on */
	ZSTD_DCtx *dctx;
	ZSTD_inBuffer zin;           /* the compressed record at lo, while zin.pos < zin.size */
	size_t zrec;                 /* its size, 0 when none is being decompressed */
	bool zflush;                 /* the last call filled its output: more may be buffered */
	size_t zhint;                /* zstd's last hint: more than a block header, it is inside a block */
	uint64_t zin_total, zout_total;   /* compressed bytes taken, and what they expanded to, so far */
	struct rawahead *ahead;      /* the thread decompressing ahead, or NULL: fill() calls in turn */
	int pending;                 /* damage met after bytes still handed on: -errno for the next call */
	struct ms_logq held;         /* what was logged of it, held until then */
};

struct ms_pdreader {
	int fd;
	bool own_fd;
	/*
	 * A mapped regular file, or NULL for a pipe. Its data is read where it
	 * is mapped (mapped: buf is the map, bpos the file offset), with no
	 * copy, until something needs it moved (a record realigned after one
	 * of perf's padded to 4, compressed data): from there on (no_map) it is
	 * read into blocks.
	 */
	const unsigned char *map;
	uint64_t map_len;
	bool mapped, no_map;
	uint64_t dropped;            /* mapped: pages below this were let go (MADV_DONTNEED) */
	uint64_t populated;          /* mapped: pages below this were mapped ahead (MADV_POPULATE_READ) */
	bool no_populate;            /* the kernel has no MADV_POPULATE_READ: pages fault in one by one */
	uint64_t released;           /* with keep: no record below this is held */
	bool pipe_layout;
	uint64_t pos, end;           /* data being read: [pos, end), as file offsets */
	uint64_t last_off;
	bool peeked;                 /* a pipe's first data record, read at open */
	/* Input bytes [pos, pos + blen - bpos) are buf[bpos, blen); buf is cur's. */
	struct block *cur;
	unsigned char *buf;
	size_t bpos, blen;
	bool eof;                    /* nothing more to read from fd */
	bool keep;                   /* records live until released, not until the next call */
	struct block *held, *held_tail;  /* blocks read before cur, oldest first, while keep */
	struct block *spare;         /* blocks to use again: a new one costs a page fault a page */
	struct ms_evlist ev;
	struct ms_buf tracing;
	struct ms_buf build_ids;     /* the BUILD_ID section, and pipe mode's build-id records */
	struct raw *raw;             /* decompressing, from the first compressed record on */
	bool unfinished;             /* a file its recorder never closed */
	bool by_mapscope, has_sample_time;
	uint64_t sample_time_last;           /* SAMPLE_TIME's last sample time; 0 where it has none */
	bool in_order;                       /* VERSION ends with MS_VERSION_IN_ORDER */   /* from the features: mapscope closes with SAMPLE_TIME */
};

/* reader.c */
/* Logs the damage at byte offset off. -EBADMSG. */
int pdreader_bad(uint64_t off, const char *what);
/*
 * Takes the n bytes that follow a record outside its size (tracing data,
 * AUX data) into b, or past them where b is NULL. 0 or -errno.
 */
int pdreader_take_bytes(struct ms_pdreader *r, uint64_t n, struct ms_buf *b, const char *what);
/* At the first compressed record (just moved past): decompress from then on. 0 or -errno. */
int pdreader_start_raw(struct ms_pdreader *r, const struct perf_event_header *rec);
/*
 * Reads up to room bytes of the input, the next of which lies at file
 * offset at, into p, never past the end of the data: how many, 0 at the
 * end, or -errno.
 */
ssize_t pdreader_read_input(const struct ms_pdreader *r, void *p, size_t room, uint64_t at);

/* decompress.c */
/*
 * The raw input from the compressed record rec on: the have bytes at rec
 * (the record and what was read after it), the next to read lying at
 * file offset at; eof: none are left. 0 or -ENOMEM.
 */
int pdreader_raw_new(struct ms_pdreader *r, const void *rec, size_t have, uint64_t at, bool eof);
/* Starts decompressing ahead on a thread of its own, where it can; fill() calls in turn where not. 0. */
int pdreader_raw_ahead(struct ms_pdreader *r);
/* Up to room bytes of the decompressed stream at out: how many, 0 at its end, or -errno (logged). */
ssize_t pdreader_raw_take(struct ms_pdreader *r, unsigned char *out, size_t room);
/* Stops the thread, if any, and frees the raw input. */
void pdreader_raw_free(struct ms_pdreader *r);

/* header.c */
/* A file's header, attrs and feature sections, from the map. 0 or -errno (logged). */
int pdreader_open_file_layout(struct ms_pdreader *r);
/*
 * The records the reader takes itself (pipe mode's headers, build-ids...).
 * rec has been moved past already; its bytes are read before anything
 * else is. 0 or -errno.
 */
int pdreader_take_header_record(struct ms_pdreader *r, const struct perf_event_header *rec);

#endif
