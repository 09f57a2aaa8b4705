/* pprof's profile gzipped as it is packed (pbgz.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "output/pbgz.h"
#include "util/grow.h"

/*
 * Packed bytes gathered before deflate takes them, as its calls cost more
 * than a sample's bytes: a page, so that the golden recording's profile
 * (tests/unit/test_pprof.c) spans batches.
 */
#define BATCH 4096

int ms_pbgz_open(struct ms_pbgz *o, int fd)
{
	o->fd = fd;
	if (deflateInit2(&o->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
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
