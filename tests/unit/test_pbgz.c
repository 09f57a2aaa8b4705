/*
 * pprof's profile gzipped as it is packed (lib/output/pbgz.c): a message
 * fed in pieces and gzipped a batch at a time makes the file the message
 * gzipped at once would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "output/pbgz.h"
#include "profile.pb-c.h"

/* A profile of n samples packed whole by protobuf-c, in *len bytes (the caller frees them). */
static uint8_t *whole_profile(size_t n, size_t *len)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Sample *smp = calloc(n, sizeof(*smp)), **smp_p = calloc(n, sizeof(*smp_p));
	uint64_t *v = calloc(2 * n, sizeof(*v));
	uint8_t *out;
	size_t i;

	assert_true(smp && smp_p && v);
	for (i = 0; i < n; i++) {
		perftools__profiles__sample__init(&smp[i]);
		smp_p[i] = &smp[i];
		v[2 * i] = i + 1;
		v[2 * i + 1] = i * 7919 % 100000;
		smp[i].location_id = &v[2 * i];
		smp[i].n_location_id = 2;
	}
	p.sample = smp_p;
	p.n_sample = n;
	*len = perftools__profiles__profile__get_packed_size(&p);
	assert_non_null(out = malloc(*len));
	assert_int_equal(perftools__profiles__profile__pack(&p, out), *len);
	free(v);
	free(smp_p);
	free(smp);
	return out;
}

/* len bytes gzipped at once, as ms_pbgz_open() sets deflate up, in *out (the caller frees it): their length. */
static size_t gzip_at_once(const uint8_t *in, size_t len, uint8_t **out)
{
	z_stream z = { 0 };
	size_t cap = deflateBound(&z, (uLong)len) + 64;

	assert_int_equal(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	assert_non_null(*out = malloc(cap));
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	return cap - z.avail_out;
}

/*
 * A message of some 40 batches fed in pieces of odd sizes, a batch gzipped
 * as each fills: the file is byte for byte the message gzipped at once.
 */
static void a_message_cut_anywhere_gzips_whole(void **state)
{
	FILE *f = tmpfile();
	struct ms_pbgz gz = { 0 };
	uint8_t *msg, *want, *got;
	size_t len, want_len, off, piece, k = 0;
	long got_len;

	(void)state;
	assert_non_null(f);
	msg = whole_profile(20000, &len);
	assert_int_equal(ms_pbgz_open(&gz, fileno(f)), 0);
	for (off = 0; off < len; off += piece) {
		piece = (k++ * 977 + 13) % 9000 + 1;
		piece = piece < len - off ? piece : len - off;
		assert_int_equal(ms_pbgz_room(&gz, piece), 0);
		memcpy(gz.buf + gz.len, msg + off, piece);
		gz.len += piece;
		assert_int_equal(ms_pbgz_batch(&gz), 0);
	}
	assert_int_equal(ms_pbgz_flush(&gz, true), 0);
	ms_pbgz_release(&gz);
	want_len = gzip_at_once(msg, len, &want);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	got_len = ftell(f);
	assert_int_equal(got_len, want_len);
	assert_non_null(got = malloc(want_len));
	assert_int_equal(lseek(fileno(f), 0, SEEK_SET), 0);
	assert_int_equal(read(fileno(f), got, want_len), want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
	free(msg);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_message_cut_anywhere_gzips_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
