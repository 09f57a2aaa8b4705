/*
 * What describes a recording (lib/perfdata/header.c), in file mode and in
 * pipe mode alike: each event's attr, name and ids, the tracing data and
 * the build-ids as written; who wrote it and whether it was closed; whether
 * it says its records lie in time order; and a header whose sections lie
 * outside the file refused.
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
#include "perfdata/reader.h"

static const unsigned char tracing[24] = "not parsed by the reader";
static const unsigned char bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };

/* Closes w's file where close is set, or flushes it as a recorder killed after a flush leaves it. */
static void end_file(struct ms_pdwriter *w, bool close)
{
	if (close)
		assert_int_equal(ms_pdwriter_close(w), 0);
	else
		assert_int_equal(ms_pdwriter_flush(w), 0);
	ms_pdwriter_free(w);
}

/* Two events with names and ids, tracing data, a build-id; closed where close is set. */
static int write_file(bool pipe, bool close)
{
	static struct perf_event_attr a[2] = {
		{ .type = PERF_TYPE_SOFTWARE, .size = sizeof(a[0]), .config = PERF_COUNT_SW_PAGE_FAULTS,
		  .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME, .sample_id_all = 1 },
		{ .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a[0]), .config = 77,
		  .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW, .sample_id_all = 1 },
	};
	static const uint64_t ids0[2] = { 100, 101 }, ids1[1] = { 200 };
	static char *argv[] = { "header-test" };
	struct ms_pdwriter_evsel e[2] = { { &a[0], "page-faults", ids0, 2 },
					  { &a[1], "syscalls:sys_enter_munmap", ids1, 1 } };
	struct ms_pdwriter_opts o = { e, 2, tracing, sizeof(tracing), 1, argv, CLOCK_MONOTONIC, pipe, 0 };
	struct ms_pdwriter *w;
	int fd = memfd_create("header", 0);

	assert_true(fd >= 0);
	w = ms_pdwriter_new(fd, &o);
	assert_non_null(w);
	assert_int_equal(ms_pdwriter_add_build_id(w, "/usr/bin/x", bid, sizeof(bid)), 0);
	end_file(w, close);
	return fd;
}

static struct ms_pdreader *open_fd(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return ms_pdreader_open(path);
}

static void events_names_ids_tracing(void **state)
{
	const struct perf_event_header *rec;
	const unsigned char *id;
	const char *path;
	struct ms_pdreader *r;
	const void *td;
	size_t len;
	int pipe, fd;

	(void)state;
	for (pipe = 0; pipe < 2; pipe++) {
		fd = write_file(pipe, true);
		r = open_fd(fd);
		assert_non_null(r);
		assert_int_equal(ms_pdreader_nr_evsels(r), 2);
		assert_int_equal(ms_pdreader_attr(r, 0)->config, PERF_COUNT_SW_PAGE_FAULTS);
		assert_int_equal(ms_pdreader_attr(r, 1)->config, 77);
		assert_null(ms_pdreader_attr(r, 2));
		assert_string_equal(ms_pdreader_evsel_name(r, 0), "page-faults");
		assert_string_equal(ms_pdreader_evsel_name(r, 1), "syscalls:sys_enter_munmap");
		assert_int_equal(ms_pdreader_evsel_by_id(r, 101), 0);
		assert_int_equal(ms_pdreader_evsel_by_id(r, 200), 1);
		assert_int_equal(ms_pdreader_evsel_by_id(r, 300), -1);
		ms_pdreader_tracing_data(r, &td, &len);
		assert_non_null(td);
		assert_true(len >= sizeof(tracing));
		assert_memory_equal(td, tracing, sizeof(tracing));
		/* a pipe's build-ids come as records, read as the data is */
		while (ms_pdreader_next(r, &rec) > 0)
			;
		assert_true(ms_pdreader_build_id(r, 0, &path, &id, &len));
		assert_string_equal(path, "/usr/bin/x");
		assert_int_equal(len, 20);
		assert_memory_equal(id, bid, 20);
		assert_false(ms_pdreader_build_id(r, 1, &path, &id, &len));
		assert_false(ms_pdreader_unfinished(r));
		ms_pdreader_free(r);
		close(fd);
	}
}

/* A mapscope file flushed but never closed has no SAMPLE_TIME: unfinished. */
static void never_closed_is_unfinished(void **state)
{
	struct ms_pdreader *r;
	int fd = write_file(false, false);

	(void)state;
	r = open_fd(fd);
	assert_non_null(r);
	assert_true(ms_pdreader_unfinished(r));
	ms_pdreader_free(r);
	close(fd);
}

/* An attrs section past the end of the file: refused as damage. */
/* write_file()'s events, with samples of page-faults at times[0..n) and a record with a trailer at trailer. */
static int write_times(bool pipe, bool close, const uint64_t *times, size_t n, uint64_t trailer)
{
	static struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
		.config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME,
		.sample_id_all = 1 };
	static const uint64_t ids[1] = { 100 };
	static char *argv[] = { "header-test" };
	struct ms_pdwriter_evsel e[1] = { { &a, "page-faults", ids, 1 } };
	struct ms_pdwriter_opts o = { e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, pipe, 0 };
	uint64_t rec[3] = { 0, 100, 0 }, comm[4] = { 0, 0, trailer, 100 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, sizeof(rec) }, c = { PERF_RECORD_COMM, 0, sizeof(comm) };
	struct ms_pdwriter *w;
	int fd = memfd_create("header", 0);
	size_t i;

	assert_true(fd >= 0);
	w = ms_pdwriter_new(fd, &o);
	assert_non_null(w);
	memcpy(&comm[0], &c, sizeof(c));
	assert_int_equal(ms_pdwriter_write(w, (const void *)comm), 0);   /* its TIME 16 bytes from its end */
	for (i = 0; i < n; i++) {
		memcpy(&rec[0], &h, sizeof(h));
		rec[2] = times[i];
		assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
		if (i == 0)
			assert_int_equal(ms_pdwriter_finish_round(w), 0);   /* perf's own records have no time */
	}
	end_file(w, close);
	return fd;
}

/* in_order(pipe, closed, trailer, times...): what the reader finds the file to say. */
static bool in_order(bool pipe, bool closed, uint64_t trailer, const uint64_t *times, size_t n)
{
	int fd = write_times(pipe, closed, times, n, trailer);
	struct ms_pdreader *r = open_fd(fd);
	bool said;

	assert_non_null(r);
	said = ms_pdreader_in_order(r);
	ms_pdreader_free(r);
	close(fd);
	return said;
}

static void says_time_order(void **state)
{
	static const uint64_t sorted[] = { 10, 20, 20, 30 }, late[] = { 10, 30, 20, 40 };

	(void)state;
	assert_true(in_order(false, true, 5, sorted, 4));
	assert_false(in_order(false, true, 5, late, 4));       /* one record came late */
	assert_false(in_order(false, true, 15, sorted, 4));    /* ... or a record other than a sample */
	assert_false(in_order(false, false, 5, sorted, 4));    /* never closed: not known */
	assert_false(in_order(true, true, 5, sorted, 4));      /* a pipe's header went out first */
	setenv("MAPSCOPE_SORT_QUEUE", "1", 1);                 /* the sort queue forced */
	assert_false(in_order(false, true, 5, sorted, 4));
	unsetenv("MAPSCOPE_SORT_QUEUE");
}

static void attrs_outside_the_file(void **state)
{
	struct perf_file_header h;
	struct ms_pdreader *r;
	int fd = write_file(false, true);

	(void)state;
	assert_int_equal(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	h.attrs.offset = 1u << 30;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	errno = 0;
	r = open_fd(fd);
	assert_null(r);
	assert_int_equal(errno, EBADMSG);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events_names_ids_tracing),
		cmocka_unit_test(never_closed_is_unfinished),
		cmocka_unit_test(says_time_order),
		cmocka_unit_test(attrs_outside_the_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
