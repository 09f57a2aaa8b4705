/*
 * pprof's profile gzipped as it is packed (pbgz.h). A sample is packed
 * here by hand: it is two lists of numbers and three labels of three, and
 * packing it through protobuf-c's descriptors (its size, then its bytes)
 * took a tenth of writing a profile of many rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/pbgz.h"
#include "util/grow.h"

/*
 * Packed bytes gathered before deflate takes them, as its calls cost more
 * than a sample's bytes: a page, so that the golden recording's profile
 * (tests/unit/test_pprof.c) spans batches.
 */
#define BATCH 4096

/* A sample's bytes at most: two lists of ten-byte numbers, and labels of three such fields and a tag each. */
#define LIST_MAX (1 + 2 + MS_PBGZ_LIST_MAX * 10)
#define LABEL_MAX (1 + 1 + 3 * 11)
#define SAMPLE_MAX (2 * LIST_MAX + MS_PBGZ_LABELS_MAX * LABEL_MAX)

int ms_pbgz_open(struct ms_pbgz *o, int fd)
{
	o->fd = fd;
	if (deflateInit2(&o->z, MS_PBGZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	o->z_open = true;
	return 0;
}

void ms_pbgz_release(struct ms_pbgz *o)
{
	if (o->z_open)
		deflateEnd(&o->z);
	o->z_open = false;
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

int ms_pbgz_flush(struct ms_pbgz *o, bool finish)
{
	unsigned char zbuf[65536];
	size_t have, off;
	ssize_t w;
	int zr;

	o->z.next_in = o->buf;
	o->z.avail_in = (uInt)o->len;
	do {
		o->z.next_out = zbuf;
		o->z.avail_out = sizeof(zbuf);
		zr = deflate(&o->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		have = sizeof(zbuf) - o->z.avail_out;
		for (off = 0; off < have; off += (size_t)w)
			if ((w = write(o->fd, zbuf + off, have - off)) <= 0)
				return w < 0 ? -errno : -EIO;
	} while (o->z.avail_out == 0 || (finish && zr != Z_STREAM_END));
	o->len = 0;
	return 0;
}

int ms_pbgz_batch(struct ms_pbgz *o)
{
	return o->len >= BATCH ? ms_pbgz_flush(o, false) : 0;
}

int ms_pbgz_room(struct ms_pbgz *o, size_t more)
{
	return more > SIZE_MAX - o->len ? -ENOMEM : MS_GROW(o->buf, o->len + more, o->cap, 1 << 16, SIZE_MAX, false);
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	return p;
}

/* A field's tag and a length-delimited body of len bytes at body, after p; where it ends. */
static uint8_t *put_bytes(uint8_t *p, unsigned int field, const uint8_t *body, size_t len)
{
	*p++ = (uint8_t)(field << 3 | 2);
	p = put_varint(p, len);
	memcpy(p, body, len);
	return p + len;
}

/* A repeated uint64 or int64 field of n values, packed; nothing where n is 0. */
static uint8_t *put_list(uint8_t *p, unsigned int field, const uint64_t *v, size_t n)
{
	uint8_t body[MS_PBGZ_LIST_MAX * 10], *q = body;
	size_t i;

	if (!n)
		return p;
	for (i = 0; i < n; i++)
		q = put_varint(q, v[i]);
	return put_bytes(p, field, body, (size_t)(q - body));
}

/* A Label of (key, str, num) as field 3: proto3 leaves out a field that is 0. */
static uint8_t *put_label(uint8_t *p, const int64_t *f)
{
	uint8_t body[3 * 11], *q = body;
	unsigned int k;

	for (k = 0; k < 3; k++)
		if (f[k]) {
			*q++ = (uint8_t)((k + 1) << 3);     /* a varint */
			q = put_varint(q, (uint64_t)f[k]);
		}
	return put_bytes(p, 3, body, (size_t)(q - body));
}

int ms_pbgz_sample(struct ms_pbgz *o, const uint64_t *locs, size_t nlocs, const uint64_t *vals, size_t nvals,
		   const int64_t (*labels)[3], size_t nlabels)
{
	uint8_t body[SAMPLE_MAX], *q = body;
	size_t k;

	if (nlocs > MS_PBGZ_LIST_MAX || nvals > MS_PBGZ_LIST_MAX || nlabels > MS_PBGZ_LABELS_MAX)
		return -EINVAL;
	q = put_list(q, 1, locs, nlocs);
	q = put_list(q, 2, vals, nvals);
	for (k = 0; k < nlabels; k++)
		q = put_label(q, labels[k]);
	if (ms_pbgz_room(o, sizeof(body) + 11))
		return -ENOMEM;
	o->len = (size_t)(put_bytes(o->buf + o->len, 2, body, (size_t)(q - body)) - o->buf);
	return ms_pbgz_batch(o);
}
