/*
 * pprof's profile gzipped as it is packed (lib/output/pbgz.c): a message
 * fed in pieces and gzipped a batch at a time makes the file the message
 * gzipped at once would; a sample packed by hand is byte for byte what
 * protobuf-c packs for it (lists of numbers packed, a label's fields of 0
 * left out, numbers of ten bytes and negative ones), and a profile of
 * many samples so packed is the whole message packed and gzipped at once.
 */
#include <errno.h>
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

	assert_int_equal(deflateInit2(&z, MS_PBGZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	assert_non_null(*out = malloc(cap));
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	return cap - z.avail_out;
}

/* Whether f holds the len bytes at msg gzipped at once. */
static void file_is_gzipped(FILE *f, const uint8_t *msg, size_t len)
{
	uint8_t *want, *got;
	size_t want_len = gzip_at_once(msg, len, &want);

	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	assert_int_equal(ftell(f), want_len);
	assert_non_null(got = malloc(want_len));
	assert_int_equal(lseek(fileno(f), 0, SEEK_SET), 0);
	assert_int_equal(read(fileno(f), got, want_len), want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
}

/*
 * A message of some 40 batches fed in pieces of odd sizes, a batch gzipped
 * as each fills: the file is byte for byte the message gzipped at once.
 */
static void a_message_cut_anywhere_gzips_whole(void **state)
{
	FILE *f = tmpfile();
	struct ms_pbgz gz = { 0 };
	size_t len, off, piece, k = 0;
	uint8_t *msg;

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
	file_is_gzipped(f, msg, len);
	free(msg);
	fclose(f);
}

struct one {
	uint64_t locs[MS_PBGZ_LIST_MAX], vals[MS_PBGZ_LIST_MAX];
	size_t nlocs, nvals;
	int64_t labels[MS_PBGZ_LABELS_MAX][3];
	size_t nlabels;
};

/* The samples through ms_pbgz_sample() into a file, against protobuf-c's packing of them as a profile, gzipped. */
static void same_as_protobuf_c(const struct one *s, size_t n)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Sample *smp = calloc(n, sizeof(*smp)), **smp_p = calloc(n, sizeof(*smp_p));
	Perftools__Profiles__Label *lab = calloc(n * MS_PBGZ_LABELS_MAX, sizeof(*lab));
	Perftools__Profiles__Label **lab_p = calloc(n * MS_PBGZ_LABELS_MAX, sizeof(*lab_p));
	struct ms_pbgz gz = { 0 };
	FILE *f = tmpfile();
	uint8_t *want;
	size_t i, k, len;

	assert_true(smp && smp_p && lab && lab_p && f);
	assert_int_equal(ms_pbgz_open(&gz, fileno(f)), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(ms_pbgz_sample(&gz, s[i].locs, s[i].nlocs, s[i].vals, s[i].nvals, s[i].labels,
						s[i].nlabels), 0);
		perftools__profiles__sample__init(&smp[i]);
		smp_p[i] = &smp[i];
		smp[i].location_id = (uint64_t *)s[i].locs;
		smp[i].n_location_id = s[i].nlocs;
		smp[i].value = (int64_t *)s[i].vals;
		smp[i].n_value = s[i].nvals;
		smp[i].label = &lab_p[i * MS_PBGZ_LABELS_MAX];
		smp[i].n_label = s[i].nlabels;
		for (k = 0; k < s[i].nlabels; k++) {
			Perftools__Profiles__Label *l = &lab[i * MS_PBGZ_LABELS_MAX + k];

			perftools__profiles__label__init(l);
			lab_p[i * MS_PBGZ_LABELS_MAX + k] = l;
			l->key = s[i].labels[k][0];
			l->str = s[i].labels[k][1];
			l->num = s[i].labels[k][2];
		}
	}
	assert_int_equal(ms_pbgz_flush(&gz, true), 0);
	ms_pbgz_release(&gz);
	p.sample = smp_p;
	p.n_sample = n;
	len = perftools__profiles__profile__get_packed_size(&p);
	assert_non_null(want = malloc(len ? len : 1));
	assert_int_equal(perftools__profiles__profile__pack(&p, want), len);
	file_is_gzipped(f, want, len);
	free(want);
	fclose(f);
	free(lab_p);
	free(lab);
	free(smp_p);
	free(smp);
}

static void samples_as_protobuf_c_packs_them(void **state)
{
	const struct one s[] = {
		/* pprof's own: two locations, samples and pages, pid, comm and kind */
		{ { 1, 711 }, { 1, 1 }, 2, 2, { { 5, 0, 4242 }, { 6, 17, 0 }, { 7, 18, 0 } }, 3 },
		/* zeros: a value of 0 stays in its list, a label's field of 0 goes, an empty label stays */
		{ { 3, 4 }, { 0, 0, 5, 0 }, 2, 4, { { 0, 0, 0 }, { 5, 0, 0 }, { 0, 0, 9 } }, 3 },
		/* ten-byte numbers, and negative labels as protobuf-c writes an int64 */
		{ { UINT64_MAX, 1ULL << 63 }, { UINT64_MAX, 127, 128, 16383 }, 2, 4,
		  { { -1, INT64_MIN, INT64_MAX }, { 16384, -2, 1 } }, 2 },
		/* no locations, no values, no labels */
		{ { 0 }, { 0 }, 0, 0, { { 0 } }, 0 },
	};

	(void)state;
	same_as_protobuf_c(s, sizeof(s) / sizeof(s[0]));
}

/* Some 40,000 packed bytes: ten batches' worth, gzipped as they fill, and the file is the whole message's. */
static void batches_make_the_whole_message(void **state)
{
	const size_t n = 1000;
	struct one *s = calloc(n, sizeof(*s));
	size_t i;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < n; i++)
		s[i] = (struct one){ { i + 1, i * 7919 % 1000 + 1 }, { i % 13, i * i, i & 1, i << 20 }, 2, 2 + i % 3,
				     { { 1, 0, (int64_t)(i * 31) }, { 2, (int64_t)(i % 5), 0 }, { 3, 4, 0 } }, 3 };
	same_as_protobuf_c(s, n);
	free(s);
}

static void more_than_it_packs_is_refused(void **state)
{
	const uint64_t v[MS_PBGZ_LIST_MAX + 1] = { 1, 2, 3, 4, 5 };
	const int64_t lab[MS_PBGZ_LABELS_MAX + 1][3] = { { 1, 2, 3 } };
	struct ms_pbgz gz = { 0 };
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	assert_int_equal(ms_pbgz_open(&gz, fileno(f)), 0);
	assert_int_equal(ms_pbgz_sample(&gz, v, MS_PBGZ_LIST_MAX + 1, v, 1, lab, 1), -EINVAL);
	assert_int_equal(ms_pbgz_sample(&gz, v, 1, v, MS_PBGZ_LIST_MAX + 1, lab, 1), -EINVAL);
	assert_int_equal(ms_pbgz_sample(&gz, v, 1, v, 1, lab, MS_PBGZ_LABELS_MAX + 1), -EINVAL);
	assert_int_equal(gz.len, 0);
	ms_pbgz_release(&gz);
	ms_pbgz_release(&gz);              /* twice: nothing left to free */
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_message_cut_anywhere_gzips_whole),
		cmocka_unit_test(samples_as_protobuf_c_packs_them),
		cmocka_unit_test(batches_make_the_whole_message),
		cmocka_unit_test(more_than_it_packs_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
