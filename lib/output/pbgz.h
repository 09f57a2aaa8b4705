/*
 * Internal: a protobuf message gzipped into a file as it is packed (pprof's
 * profile.proto, lib/analysis/pprof.c). The packed bytes gather in a
 * buffer and deflate takes them a batch at a time, so that a profile of
 * many samples is never held whole; deflate's output does not depend on
 * how its input was cut, so the file is the one the whole message packed
 * and gzipped at once would make.
 */
#ifndef MS_OUTPUT_PBGZ_H
#define MS_OUTPUT_PBGZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

struct ms_pbgz {
	uint8_t *buf;                 /* packed, not yet gzipped */
	size_t len, cap;
	z_stream z;                   /* gzip's wrapper around deflate, into fd */
	bool z_open;
	int fd;
};

/*
 * zlib's level: its fastest, as Go's runtime/pprof writes its profiles.
 * chromium's page load packs into 79 KB, not 60, and the default level
 * spent 5 ms of 75 searching for the matches that save the difference.
 */
#define MS_PBGZ_LEVEL Z_BEST_SPEED

/* The most numbers in each of a sample's lists, and labels, that ms_pbgz_sample() packs. */
#define MS_PBGZ_LIST_MAX 4
#define MS_PBGZ_LABELS_MAX 3

/* The gzip stream into fd (borrowed) begun, in a zeroed o. 0 or -ENOMEM; ms_pbgz_release() either way. */
int ms_pbgz_open(struct ms_pbgz *o, int fd);

/* Room for more bytes at o->buf + o->len, which the caller then adds to o->len. 0 or -ENOMEM. */
int ms_pbgz_room(struct ms_pbgz *o, size_t more);

/* The bytes packed so far, through deflate into the file; with finish, the stream's end. 0 or a negative errno. */
int ms_pbgz_flush(struct ms_pbgz *o, bool finish);

/* ms_pbgz_flush() once the bytes packed fill a batch (a page: deflate's calls cost more than a sample's bytes). */
int ms_pbgz_batch(struct ms_pbgz *o);

/*
 * A pprof Sample (location ids, values, labels of key, str and num) as the
 * next element of the profile's field 2, byte for byte as protobuf-c packs
 * it: fields by number, repeated numbers packed (proto3), a label's fields
 * of 0 left out. Gzipped with the bytes before it once they fill a batch.
 * 0, -EINVAL past the maxima above, or another negative errno.
 */
int ms_pbgz_sample(struct ms_pbgz *o, const uint64_t *locs, size_t nlocs, const uint64_t *vals, size_t nvals,
		   const int64_t (*labels)[3], size_t nlabels);

/* Frees what o holds (not the file). */
void ms_pbgz_release(struct ms_pbgz *o);

#endif
