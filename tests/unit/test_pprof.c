/*
 * The pprof analysis on the golden recording (tests/golden/mapscope-ops.data):
 * the profile it writes is gzip, unpacks as profile.proto, and its sample
 * and page totals are the report's (tests/golden/mapscope-ops.report.json:
 * 704 samples on 680 pages, 661 of the samples in process 15327); every
 * sample's stack is the code, topped by a data-region frame, and is
 * labelled with its pid.
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

#include <mapscope/pprof.h>
#include <mapscope/session.h>

#include "golden.h"
#include "profile.pb-c.h"

#define GOLDEN_PID 15327

/* The whole of fd, gunzipped, in *out (the caller frees it). */
static size_t gunzip_fd(int fd, uint8_t **out)
{
	uint8_t in[1 << 16];
	size_t cap = 1 << 20, len = 0;
	z_stream z = { 0 };
	ssize_t n;
	int ret = Z_OK;

	*out = malloc(cap);
	assert_non_null(*out);
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);   /* gzip only */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	while (ret != Z_STREAM_END && (n = read(fd, in, sizeof(in))) > 0) {
		z.next_in = in;
		z.avail_in = (uInt)n;
		do {
			if (len == cap)
				assert_non_null(*out = realloc(*out, cap *= 2));
			z.next_out = *out + len;
			z.avail_out = (uInt)(cap - len);
			ret = inflate(&z, Z_NO_FLUSH);
			assert_true(ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR);
			len = cap - z.avail_out;
		} while (z.avail_in && ret != Z_STREAM_END);
	}
	assert_int_equal(ret, Z_STREAM_END);
	inflateEnd(&z);
	return len;
}

/*
 * The profile of pid's samples (0: all) from a fresh session over the
 * golden recording; its bytes, gunzipped, in *bytes and *nbytes where
 * bytes is not NULL (the caller frees them).
 */
static Perftools__Profiles__Profile *profile_bytes(uint32_t pid, uint8_t **bytes, size_t *nbytes)
{
	struct ms_session *s = ms_session_open(golden_path("mapscope-ops.data"), NULL);
	Perftools__Profiles__Profile *p;
	struct ms_pprof *pp = ms_pprof_new();
	FILE *f = tmpfile();
	uint8_t *raw;
	size_t len;

	if (!s)
		skip();                      /* the checked-in recording is missing: nothing to profile */
	assert_non_null(pp);
	assert_non_null(f);
	assert_int_equal(ms_session_add(s, &ms_pprof_analysis, pp), 0);
	assert_int_equal(ms_session_run(s), 0);
	assert_int_equal(ms_pprof_write(pp, fileno(f), pid, NULL, 1000), 0);
	len = gunzip_fd(fileno(f), &raw);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	if (bytes) {
		*bytes = raw;
		*nbytes = len;
	} else {
		free(raw);
	}
	fclose(f);
	ms_pprof_free(pp);
	ms_session_free(s);
	return p;
}

static Perftools__Profiles__Profile *profile_of(uint32_t pid)
{
	return profile_bytes(pid, NULL, NULL);
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* Sum of value k over the samples; checks each sample's shape on the way. */
static int64_t total(const Perftools__Profiles__Profile *p, size_t k, uint32_t pid)
{
	int64_t sum = 0;
	size_t i, j;

	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *smp = p->sample[i];
		bool has_pid = false;

		assert_int_equal(smp->n_location_id, 2);             /* the code, then the region on top */
		assert_int_equal(smp->n_value, p->n_sample_type);
		for (j = 0; j < smp->n_label; j++) {
			if (strcmp(str(p, smp->label[j]->key), "pid"))
				continue;
			has_pid = true;
			if (pid)
				assert_int_equal(smp->label[j]->num, pid);
		}
		assert_true(has_pid);
		sum += smp->value[k];
	}
	return sum;
}

static void totals_are_the_reports(void **state)
{
	Perftools__Profiles__Profile *p = profile_of(0);

	(void)state;
	assert_true(p->n_string_table > 0);
	assert_string_equal(p->string_table[0], "");                /* pprof's rule */
	assert_true(p->n_sample_type >= 2);
	assert_string_equal(str(p, p->sample_type[0]->type), "samples");
	assert_string_equal(str(p, p->sample_type[1]->type), "pages");
	assert_int_equal(p->duration_nanos, 1000);
	assert_int_equal(total(p, 0, 0), 704);
	assert_int_equal(total(p, 1, 0), 680);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void one_process(void **state)
{
	Perftools__Profiles__Profile *p = profile_of(GOLDEN_PID);

	(void)state;
	assert_int_equal(total(p, 0, GOLDEN_PID), 661);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/*
 * The samples are packed one at a time and gzipped in batches as they
 * come: the bytes are those of the whole message packed at once, as
 * protobuf-c packs what it unpacked.
 */
static void packed_as_one_message(void **state)
{
	Perftools__Profiles__Profile *p;
	uint8_t *raw, *again;
	size_t len;

	(void)state;
	p = profile_bytes(0, &raw, &len);
	assert_true(p->n_sample > 100);
	assert_int_equal(perftools__profiles__profile__get_packed_size(p), len);
	assert_non_null(again = malloc(len));
	assert_int_equal(perftools__profiles__profile__pack(p, again), len);
	assert_memory_equal(again, raw, len);
	free(again);
	free(raw);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(packed_as_one_message),
		cmocka_unit_test(totals_are_the_reports),
		cmocka_unit_test(one_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
