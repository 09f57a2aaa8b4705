/*
 * The writer's zstd stage (perfdata/compress.h): a piece of records is
 * gathered, then compressed and flushed into one PERF_RECORD_COMPRESSED
 * record, all pieces in one zstd stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata/compress.h"
#include "perfdata/format.h"

/* A record's payload at most: header.size is 16 bits. */
#define REC_MAX (UINT16_MAX - sizeof(struct perf_event_header))

_Static_assert(MS_PDZ_PIECE + (MS_PDZ_PIECE >> 8) + ((128u << 10) - MS_PDZ_PIECE) / 2048 + 64 <= REC_MAX,
	       "the worst case of a compressed piece must fit in one record");
_Static_assert(MS_PDZ_PIECE <= MS_PDZ_MMAP_LEN, "perf decompresses each record into mmap_len bytes");

struct ms_pdz {
	ZSTD_CCtx *cctx;
	ms_pdz_emit_fn emit;
	void *arg;
	size_t held;                 /* bytes of the piece gathered in in[] */
	uint64_t total_in, total_out;
	unsigned char in[MS_PDZ_PIECE];
	/* The record being made: its header, then the compressed piece. */
	unsigned char rec[sizeof(struct perf_event_header) + REC_MAX] __attribute__((aligned(8)));
};

struct ms_pdz *ms_pdz_new(int level, ms_pdz_emit_fn emit, void *arg)
{
	struct ms_pdz *z = malloc(sizeof(*z));

	if (!z)
		return NULL;
	z->cctx = ZSTD_createCCtx();
	if (!z->cctx || level < 1 || level > ZSTD_maxCLevel() ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level))) {
		errno = z->cctx ? EINVAL : ENOMEM;
		ZSTD_freeCCtx(z->cctx);
		free(z);
		return NULL;
	}
	z->emit = emit;
	z->arg = arg;
	z->held = 0;
	z->total_in = z->total_out = 0;
	return z;
}

/* The piece held, compressed and flushed into one record, handed on. */
static int compress_piece(struct ms_pdz *z)
{
	struct perf_event_header h = { .type = PERF_RECORD_COMPRESSED };
	ZSTD_inBuffer in = { z->in, z->held, 0 };
	ZSTD_outBuffer out = { z->rec + sizeof(h), REC_MAX, 0 };
	size_t left;

	if (!z->held)
		return 0;
	left = ZSTD_compressStream2(z->cctx, &out, &in, ZSTD_e_flush);
	/* The bound above makes this the whole piece; anything else would cut a block in two records. */
	if (ZSTD_isError(left) || left || in.pos != in.size)
		return -EIO;
	h.size = (uint16_t)(sizeof(h) + out.pos);
	memcpy(z->rec, &h, sizeof(h));
	z->total_in += z->held;
	z->total_out += h.size;
	z->held = 0;
	return z->emit(z->arg, z->rec, h.size);
}

int ms_pdz_put(struct ms_pdz *z, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t k;
	int err;

	while (n) {
		k = MS_PDZ_PIECE - z->held < n ? MS_PDZ_PIECE - z->held : n;
		memcpy(z->in + z->held, c, k);
		z->held += k;
		c += k;
		n -= k;
		if (z->held == MS_PDZ_PIECE && (err = compress_piece(z)))
			return err;
	}
	return 0;
}

int ms_pdz_flush(struct ms_pdz *z)
{
	return compress_piece(z);
}

void ms_pdz_totals(const struct ms_pdz *z, uint64_t *in, uint64_t *out)
{
	*in = z->total_in + z->held;
	*out = z->total_out;
}

void ms_pdz_feature(struct ms_buf *f, int level, const struct ms_pdz *z)
{
	uint64_t in = 0, out = 0;

	if (z)
		ms_pdz_totals(z, &in, &out);
	f->len = 0;
	ms_buf_u32(f, 0);
	ms_buf_u32(f, 1);
	ms_buf_u32(f, (uint32_t)level);
	ms_buf_u32(f, out ? (uint32_t)((in + out / 2) / out) : 0);
	ms_buf_u32(f, MS_PDZ_MMAP_LEN);
}

void ms_pdz_free(struct ms_pdz *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z);
}
