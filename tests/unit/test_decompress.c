/*
 * Compressed data (lib/perfdata/decompress.c), decompressed ahead on a
 * thread of its own and in turn (MAPSCOPE_READ_AHEAD=0): the same records
 * either way; damage met after the same records, with the same message,
 * logged only once every record before it was handed out; and a reader
 * freed while the thread waits for room ends at once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/pdreader.h>
#include <mapscope/pdwriter.h>

#include "perfdata/format.h"
#include "records.h"
#include "util/log.h"

#define ID 7
#define NR 60000                         /* MMAP2 records: several MiB, many chunks ahead */

struct run {
	uint64_t nr, sum;                /* records read, and a hash of their bytes */
	int ret;                         /* the last ms_pdreader_next() */
	uint64_t nr_at_log;              /* records read when the error was logged */
	char msg[1024];
	int logs;
};

static struct run *cur;

static void on_log(enum ms_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level != MS_LOG_ERROR || !cur)
		return;
	cur->logs++;
	cur->nr_at_log = cur->nr;
	snprintf(cur->msg, sizeof(cur->msg), "%s", msg);
}

/* A compressed file of NR MMAP2 records, each telling its index; its length in *len. */
static int make_file(size_t *len)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS,
				     .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
						    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
				     .sample_id_all = 1, .mmap2 = 1 };
	uint64_t id = ID, i;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 1 };
	int fd = memfd_create("pdz", 0);
	struct ms_pdwriter *w = ms_pdwriter_new(fd, &o);
	struct mmap2_rec m;

	assert_non_null(w);
	for (i = 0; i < NR; i++) {
		m = (struct mmap2_rec){ { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, 10, 10,
					0x10000 + i * 0x3000, 0x1000 * (1 + i % 7), i * 31, 0, 0, i, 0,
					PROT_READ, MAP_PRIVATE, "//anon", 10, 10, 1000 + i, ID, 0, 0, ID };
		assert_int_equal(ms_pdwriter_write(w, &m.h), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	*len = (size_t)lseek(fd, 0, SEEK_END);
	return fd;
}

/* Reads the file at fd whole (or its first stop records), ahead or in turn. */
static void read_all(int fd, bool ahead, uint64_t stop, struct run *out)
{
	const struct perf_event_header *h;
	struct ms_pdreader *r;
	char path[64];
	uint64_t x;
	size_t i;

	memset(out, 0, sizeof(*out));
	setenv("MAPSCOPE_READ_AHEAD", ahead ? "1" : "0", 1);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	cur = out;
	r = ms_pdreader_open(path);
	if (!r)
		fail_msg("cannot open: %s (%s)", strerror(errno), out->msg);
	while (out->nr < stop && (out->ret = ms_pdreader_next(r, &h)) > 0) {
		x = out->sum;
		for (i = 0; i < h->size; i++)
			x = (x ^ ((const unsigned char *)h)[i]) * 0x100000001b3ULL;
		out->sum = x;
		out->nr++;
	}
	ms_pdreader_free(r);
	cur = NULL;
	unsetenv("MAPSCOPE_READ_AHEAD");
}

static void same_records(void **state)
{
	struct run a, b;
	size_t len;
	int fd = make_file(&len);

	(void)state;
	read_all(fd, true, UINT64_MAX, &a);
	read_all(fd, false, UINT64_MAX, &b);
	assert_int_equal(a.ret, 0);
	assert_int_equal(b.ret, 0);
	assert_true(a.nr >= NR);
	assert_int_equal(a.nr, b.nr);
	assert_int_equal(a.sum, b.sum);
	assert_int_equal(a.logs + b.logs, 0);
	close(fd);
}

/* The offset of the payload of the k-th compressed record of the data, walked from its start. */
static size_t compressed_payload(const unsigned char *p, size_t len, int k)
{
	const struct perf_file_header *fh = (const void *)p;
	size_t off = (size_t)fh->data.offset, end = off + (size_t)fh->data.size;
	struct perf_event_header h;

	assert_true(end <= len);
	while (off + sizeof(h) <= end) {
		memcpy(&h, p + off, sizeof(h));
		assert_true(h.size >= sizeof(h));
		if ((h.type == PERF_RECORD_COMPRESSED || h.type == PERF_RECORD_COMPRESSED2) && !k--)
			return off + sizeof(h) + (h.type == PERF_RECORD_COMPRESSED2 ? 8 : 0);
		off += h.size;
	}
	fail_msg("the file has too few compressed records");
	return 0;
}

static void damage_after_the_same_records(void **state)
{
	struct run a, b;
	unsigned char *p;
	size_t len, at;
	int fd = make_file(&len);

	(void)state;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	at = compressed_payload(p, len, 3);
	memset(p + at + 3, 0xa5, 64);            /* past the zstd frame's start */
	munmap(p, len);
	ms_log_set(on_log, NULL);
	read_all(fd, true, UINT64_MAX, &a);
	read_all(fd, false, UINT64_MAX, &b);
	ms_log_set(NULL, NULL);
	assert_int_equal(a.ret, -EBADMSG);
	assert_int_equal(b.ret, -EBADMSG);
	assert_true(a.nr > 0 && a.nr < NR);
	assert_int_equal(a.nr, b.nr);
	assert_int_equal(a.sum, b.sum);
	assert_int_equal(a.logs, 1);
	assert_int_equal(b.logs, 1);
	assert_string_equal(a.msg, b.msg);
	assert_int_equal(a.nr_at_log, a.nr);     /* logged once the records before were taken */
	assert_int_equal(b.nr_at_log, b.nr);
	close(fd);
}

/* Freed after a few records, the thread waiting for room: the free ends it (and ASan sees no leak). */
static void freed_early(void **state)
{
	struct run a;
	size_t len;
	int fd = make_file(&len);

	(void)state;
	read_all(fd, true, 10, &a);
	assert_int_equal(a.nr, 10);
	usleep(20000);                           /* the thread fills every chunk meanwhile */
	read_all(fd, true, 1, &a);
	assert_int_equal(a.nr, 1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_records),
		cmocka_unit_test(damage_after_the_same_records),
		cmocka_unit_test(freed_early),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
