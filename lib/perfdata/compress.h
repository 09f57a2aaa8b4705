/*
 * Internal to lib/perfdata: the writer's zstd stage, laid out as perf
 * record -z lays its data out, so that perf 6.1 (which knows
 * PERF_RECORD_COMPRESSED, not the later COMPRESSED2) and mapscope read it.
 *
 * Records go in as bytes and come out as PERF_RECORD_COMPRESSED records of
 * one zstd stream. Each holds one piece of at most MS_PDZ_PIECE bytes of
 * the records, flushed (ZSTD_e_flush) so that it decompresses to exactly
 * that piece, on its own after those before it:
 *  - perf decompresses each record into a buffer of the HEADER_COMPRESSED
 *    feature's mmap_len (MS_PDZ_MMAP_LEN) bytes and fails on a record that
 *    yields nothing, so no piece is larger and none is empty;
 *  - header.size is 16 bits: a piece's worst case (ZSTD_compressBound)
 *    fits in one record;
 *  - a file cut at a flush ends on a zstd block boundary, with every
 *    record before the cut whole.
 * A piece may end inside a record: both readers take the data as one
 * stream. The frame is never ended (perf's is not either): an end with
 * nothing left to add would be a record that decompresses to nothing.
 */
#ifndef MS_PERFDATA_COMPRESS_H
#define MS_PERFDATA_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The most bytes of records one compressed record holds, and the mmap_len that says so to perf. */
#define MS_PDZ_PIECE (62u << 10)
#define MS_PDZ_MMAP_LEN (64u << 10)

/* Where each compressed record goes: the record's bytes, len of them. 0 or a negative errno. */
typedef int (*ms_pdz_emit_fn)(void *arg, const void *rec, size_t len);

struct ms_pdz;

/* A compressor at zstd level (1 to 22) handing its records to emit. NULL with errno. */
struct ms_pdz *ms_pdz_new(int level, ms_pdz_emit_fn emit, void *arg);

/*
 * Takes n bytes of records; a piece that fills is compressed and handed
 * on at once. 0 or a negative errno (emit's, or -EIO where zstd fails).
 */
int ms_pdz_put(struct ms_pdz *z, const void *p, size_t n);

/* Compresses and hands on what is held, if anything. 0 or a negative errno. */
int ms_pdz_flush(struct ms_pdz *z);

/* The bytes taken so far, and the bytes of the compressed records handed on. */
void ms_pdz_totals(const struct ms_pdz *z, uint64_t *in, uint64_t *out);

/*
 * The HEADER_COMPRESSED feature into f, as perf writes it: u32 version (0,
 * as perf 6.1 writes), type (1: zstd), level, ratio (the bytes z took over
 * those it handed on, rounded; 0 where z is NULL: before the end), and
 * mmap_len (MS_PDZ_MMAP_LEN: the most one record decompresses to).
 */
void ms_pdz_feature(struct ms_buf *f, int level, const struct ms_pdz *z);

/* Accepts NULL. */
void ms_pdz_free(struct ms_pdz *z);

#endif
