/*
 * The writer's zstd stage: how it cuts the records into COMPRESSED
 * records, checked against what perf's reader needs of each one (a
 * 16-bit size, at most mmap_len bytes out, never nothing out) and what a
 * file cut at a flush needs (each record ends on a block boundary).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include <zstd.h>

#include "perfdata/compress.h"
#include "perfdata/format.h"

struct sink {
	unsigned char *recs;         /* every record handed on, one after the other */
	size_t len, nr;
	int fail;                    /* the error to give, 0: none */
};

static int collect(void *arg, const void *rec, size_t len)
{
	struct sink *s = arg;

	if (s->fail)
		return s->fail;
	s->recs = realloc(s->recs, s->len + len);
	assert_non_null(s->recs);
	memcpy(s->recs + s->len, rec, len);
	s->len += len;
	s->nr++;
	return 0;
}

/* Records of a mapping-heavy program: mostly alike, a time and an address that move. */
static unsigned char *records(size_t len, unsigned seed, bool random_bytes)
{
	unsigned char *p = malloc(len);
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1, t = 1000;
	size_t i;

	assert_non_null(p);
	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t += x % 512;
		if (random_bytes)
			memcpy(p + i, &x, 8);
		else
			memcpy(p + i, (i / 8) % 7 == 3 ? &t : (const void *)"\x09\0\0\0\0\0\x38\0", 8);
	}
	memset(p + i, 0xab, len - i);
	return p;
}

/*
 * Decompresses every record alone, in order, as perf does: each into a
 * buffer of mmap_len bytes, all its input taken, something out, ending on
 * a block boundary. Returns the bytes out, all records together.
 */
static unsigned char *open_each(const struct sink *s, size_t *out_len, size_t *full_pieces)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	unsigned char *out = malloc(s->nr * MS_PDZ_MMAP_LEN + 1);
	struct perf_event_header h;
	size_t off = 0, n = 0, hint = 0;

	assert_non_null(out);
	*full_pieces = 0;
	while (off < s->len) {
		memcpy(&h, s->recs + off, sizeof(h));
		assert_int_equal(h.type, PERF_RECORD_COMPRESSED);
		assert_true(h.size > sizeof(h));
		assert_true(off + h.size <= s->len);
		ZSTD_inBuffer in = { s->recs + off + sizeof(h), h.size - sizeof(h), 0 };
		ZSTD_outBuffer o = { out + n, MS_PDZ_MMAP_LEN, 0 };
		hint = ZSTD_decompressStream(d, &o, &in);
		assert_false(ZSTD_isError(hint));
		assert_int_equal(in.pos, in.size);          /* perf gives each record mmap_len bytes, no more */
		assert_true(o.pos > 0 && o.pos < o.size);   /* never nothing: perf takes that for an error */
		assert_true(o.pos <= MS_PDZ_PIECE);
		assert_true(hint <= 3);                     /* a block header next: no block cut in two */
		*full_pieces += o.pos == MS_PDZ_PIECE;
		n += o.pos;
		off += h.size;
	}
	ZSTD_freeDCtx(d);
	*out_len = n;
	return out;
}

/* The COMPRESSED feature of z: version 0, zstd (1), level, ratio, and mmap_len, as perf 6.1 reads them. */
static void feature_says(const struct ms_pdz *z, int level, uint32_t ratio)
{
	struct ms_buf f;
	uint32_t v[5];

	ms_buf_init(&f);
	ms_pdz_feature(&f, level, z);
	assert_int_equal(f.len, sizeof(v));
	memcpy(v, f.data, sizeof(v));
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 1);
	assert_int_equal(v[2], (uint32_t)level);
	assert_int_equal(v[3], ratio);
	assert_int_equal(v[4], MS_PDZ_MMAP_LEN);
	ms_buf_release(&f);
}

/* Put in pieces of every size, flushed now and then: what comes out is what went in, cut as perf needs. */
static void pieces_round_trip(void **state)
{
	static const size_t steps[] = { 1, 7, 8, 56, 4400, 8192, 70000, 200000 };
	size_t len = 3u << 20, at = 0, k = 0, out_len, full;
	unsigned char *in, *out;
	int pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {      /* alike records, then bytes zstd cannot shrink */
		struct sink s = { 0 };
		struct ms_pdz *z = ms_pdz_new(pass ? 1 : 3, collect, &s);

		assert_non_null(z);
		in = records(len, 7, pass);
		for (at = 0, k = 0; at < len; k++) {
			size_t n = steps[k % 8] < len - at ? steps[k % 8] : len - at;

			assert_int_equal(ms_pdz_put(z, in + at, n), 0);
			at += n;
			if (k % 37 == 36)
				assert_int_equal(ms_pdz_flush(z), 0);
		}
		assert_int_equal(ms_pdz_flush(z), 0);
		out = open_each(&s, &out_len, &full);
		assert_int_equal(out_len, len);
		assert_memory_equal(out, in, len);
		assert_true(full >= len / MS_PDZ_PIECE / 2);   /* flushes cut some pieces short, not most */
		if (!pass)
			assert_true(s.len * 4 < len);           /* and alike records shrink */
		uint64_t tin, tout;
		ms_pdz_totals(z, &tin, &tout);
		assert_int_equal(tin, len);
		assert_int_equal(tout, s.len);
		feature_says(z, pass ? 1 : 3, (uint32_t)((len + s.len / 2) / s.len));
		ms_pdz_free(z);
		free(in);
		free(out);
		free(s.recs);
	}
}

/* A flush with nothing held makes no record (it would decompress to nothing); one with a byte, one record. */
static void flush_makes_no_empty_record(void **state)
{
	struct sink s = { 0 };
	struct ms_pdz *z = ms_pdz_new(1, collect, &s);
	size_t out_len, full;
	unsigned char *out;

	(void)state;
	assert_int_equal(ms_pdz_flush(z), 0);
	assert_int_equal(s.nr, 0);
	assert_int_equal(ms_pdz_put(z, "\x44\0\0\0\0\0\x08\0", 8), 0);   /* a FINISHED_ROUND */
	assert_int_equal(s.nr, 0);                      /* held until a flush */
	assert_int_equal(ms_pdz_flush(z), 0);
	assert_int_equal(ms_pdz_flush(z), 0);
	assert_int_equal(s.nr, 1);
	out = open_each(&s, &out_len, &full);
	assert_int_equal(out_len, 8);
	assert_memory_equal(out, "\x44\0\0\0\0\0\x08\0", 8);
	free(out);
	free(s.recs);
	ms_pdz_free(z);
}

static void errors(void **state)
{
	struct sink s = { .fail = -ENOSPC };
	struct ms_pdz *z;
	unsigned char *in = records(MS_PDZ_PIECE, 1, false);

	(void)state;
	feature_says(NULL, 5, 0);                      /* before the end: no ratio yet */
	assert_null(ms_pdz_new(0, collect, &s));
	assert_int_equal(errno, EINVAL);
	assert_null(ms_pdz_new(ZSTD_maxCLevel() + 1, collect, &s));
	z = ms_pdz_new(ZSTD_maxCLevel(), collect, &s);
	assert_non_null(z);
	assert_int_equal(ms_pdz_put(z, in, MS_PDZ_PIECE), -ENOSPC);   /* a full piece goes at once */
	ms_pdz_free(z);
	ms_pdz_free(NULL);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pieces_round_trip),
		cmocka_unit_test(flush_makes_no_empty_record),
		cmocka_unit_test(errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
