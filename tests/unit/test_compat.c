/*
 * perf's own files: the record kinds and layouts other perf versions write,
 * each crafted here with the writer as perf lays it out, in file mode and
 * pipe mode. Every case is read through the reader and the stream and
 * checked against the events the file was made of.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>

#include <mapscope/log.h>
#include <mapscope/pdreader.h>
#include <mapscope/pdwriter.h>

#include "stream/stream.h"
#include "stream_file.h"

#include "perfdata/format.h"
#include "records.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define ID 77

static char logged[4096];

static void on_log(enum ms_log_level l, const char *msg, void *ctx)
{
	snprintf(logged, sizeof(logged), "%s", msg);
}

struct sample_rec {
	struct perf_event_header h;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id;
	uint32_t cpu, res;
	uint64_t period;
};

static struct sample_rec sample(uint64_t id, uint64_t time, uint64_t addr)
{
	return (struct sample_rec){ { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(struct sample_rec) },
				    id, 0x400000, 10, 10, time, addr, id, 0, 0, 1 };
}

struct seen {
	uint64_t times[32], addrs[32];
	int kinds[32];
	int n;
};

static int collect(const struct ms_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 32) {
		s->times[s->n] = ev->time;
		s->addrs[s->n] = ev->kind == MS_EV_SAMPLE ? ev->sample.addr : 0;
		s->kinds[s->n++] = ev->kind;
	}
	return 0;
}

/* Reads fd's file through a stream: what run returned, the events in s, the stats in st. */
static int run_fd(int fd, struct seen *s, struct ms_stream_stats *st)
{
	char path[64];
	struct ms_pdreader *r;
	struct ms_stream *stream;
	int ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = ms_pdreader_open(path);
	if (!r)
		return -errno;
	stream = stream_file_new(r);
	assert_non_null(stream);
	memset(s, 0, sizeof(*s));
	ret = stream_file_run(stream, collect, s);
	if (st)
		ms_stream_stats(stream, st);
	ms_stream_free(stream);
	ms_pdreader_free(r);
	return ret;
}

/* A writer on a new memfd for the events given (one page-fault event with id ID where NULL). */
static struct ms_pdwriter *writer(int *fd, bool pipe, const struct ms_pdwriter_evsel *e, size_t nr)
{
	static struct perf_event_attr a;
	static uint64_t id = ID;
	static struct ms_pdwriter_evsel one;
	static char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { e, nr, NULL, 0, 1, argv, CLOCK_MONOTONIC, pipe, 0 };
	struct ms_pdwriter *w;

	if (!e) {
		a = (struct perf_event_attr){ .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
					      .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
					      .sample_id_all = 1, .mmap2 = 1 };
		one = (struct ms_pdwriter_evsel){ &a, "page-faults", &id, 1 };
		o.evsels = &one;
		o.nr_evsels = 1;
	}
	*fd = memfd_create("compat", 0);
	w = ms_pdwriter_new(*fd, &o);
	assert_non_null(w);
	return w;
}

static void finish(struct ms_pdwriter *w)
{
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
}

/*
 * perf inject -b writes build-id records of 100 bytes, perf 4.16 CPU map
 * records of 38: records of perf's own that the reader takes whatever
 * their size, realigning what follows. The build-id is kept.
 */
static void misaligned_perf_records(void **state)
{
	unsigned char rec[104] = { 0 };
	struct perf_event_header h;
	struct sample_rec s1 = sample(ID, 10, 0x1000), s2 = sample(ID, 20, 0x2000);
	const unsigned char *bid;
	const char *path;
	struct seen seen;
	struct ms_pdwriter *w;
	struct ms_pdreader *r;
	char name[64];
	size_t len;
	int fd, pipe;

	for (pipe = 0; pipe < 2; pipe++) {
		w = writer(&fd, pipe, NULL, 0);
		assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
		h = (struct perf_event_header){ PERF_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_BUILD_ID_SIZE, 100 };
		memcpy(rec, &h, sizeof(h));
		memset(rec + 12, 0xab, 20);          /* pid at 8, then the build-id */
		rec[12 + 20] = 20;
		strcpy((char *)rec + 36, "/usr/bin/x");
		assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
		memset(rec, 0, sizeof(rec));
		h = (struct perf_event_header){ 74 /* CPU_MAP */, 0, 38 };
		memcpy(rec, &h, sizeof(h));
		assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
		assert_int_equal(ms_pdwriter_write(w, &s2.h), 0);
		finish(w);

		assert_int_equal(run_fd(fd, &seen, NULL), 0);
		assert_int_equal(seen.n, 2);
		assert_int_equal(seen.addrs[0], 0x1000);
		assert_int_equal(seen.addrs[1], 0x2000);
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		r = ms_pdreader_open(name);
		assert_non_null(r);
		assert_int_equal(ms_pdreader_next(r, (const struct perf_event_header **)&bid), 1);
		assert_int_equal(ms_pdreader_next(r, (const struct perf_event_header **)&bid), 1);
		assert_int_equal(((const struct perf_event_header *)bid)->type, PERF_RECORD_SAMPLE);
		assert_true(ms_pdreader_build_id(r, 0, &path, &bid, &len));
		assert_string_equal(path, "/usr/bin/x");
		assert_int_equal(len, 20);
		assert_int_equal(bid[19], 0xab);
		ms_pdreader_free(r);
		close(fd);
	}
}

/* A kernel record whose size is not a multiple of 8 is damage, named with its offset. */
static void misaligned_kernel_record_is_corrupt(void **state)
{
	struct sample_rec s1 = sample(ID, 10, 0x1000);
	unsigned char rec[40] = { 0 };
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 36 };
	struct seen seen;
	struct ms_pdwriter *w;
	int fd;

	w = writer(&fd, false, NULL, 0);
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
	assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
	finish(w);
	logged[0] = 0;
	assert_int_equal(run_fd(fd, &seen, NULL), -EBADMSG);
	assert_int_equal(seen.n, 1);
	assert_non_null(strstr(logged, "not a multiple of 8"));
	close(fd);
}

/*
 * AUX trace records (Intel PT, Arm SPE) are followed by their trace data,
 * outside their size: the reader steps over it.
 */
static void auxtrace_data_is_skipped(void **state)
{
	struct sample_rec s1 = sample(ID, 10, 0x1000), s2 = sample(ID, 20, 0x2000);
	struct {
		struct perf_event_header h;
		uint64_t size, offset, reference;
		uint32_t idx, tid, cpu, res;
		unsigned char data[40];
	} aux = { { PERF_RECORD_AUXTRACE, 0, 48 }, 40, 0, 0, 0, 10, 0, 0, { 0 } };
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, pipe;

	memset(aux.data, 0x41, sizeof(aux.data));   /* would read as a record of size 0x4141 */
	for (pipe = 0; pipe < 2; pipe++) {
		w = writer(&fd, pipe, NULL, 0);
		assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
		aux.h.size = sizeof(aux);            /* the writer writes h.size bytes: the data too */
		assert_int_equal(ms_pdwriter_write(w, &aux.h), 0);
		assert_int_equal(ms_pdwriter_write(w, &s2.h), 0);
		finish(w);
		/* Put back the size perf writes: the record without its data. */
		aux.h.size = 48;
		{
			unsigned char *m;
			off_t len = lseek(fd, 0, SEEK_END);
			size_t i;

			m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			assert_true(m != MAP_FAILED);
			for (i = 0; i + sizeof(aux) <= (size_t)len; i += 8)
				if (!memcmp(m + i + 8, &aux.size, 40) && m[i] == PERF_RECORD_AUXTRACE) {
					memcpy(m + i, &aux.h, sizeof(aux.h));
					break;
				}
			munmap(m, (size_t)len);
		}
		assert_int_equal(run_fd(fd, &seen, NULL), 0);
		assert_int_equal(seen.n, 2);
		assert_int_equal(seen.addrs[1], 0x2000);
		close(fd);
	}
}

/*
 * perf record -z: the records of a stretch of ring buffer compressed as
 * one zstd stream, cut into COMPRESSED records (whose size need not be a
 * multiple of 8) or COMPRESSED2 records (padded, with the data size
 * first). A record may begin in one and end in the next.
 */
static void write_compressed(struct ms_pdwriter *w, int type, const void *src, size_t len, size_t cut)
{
	ZSTD_CStream *z = ZSTD_createCStream();
	unsigned char out[4096], rec[4096 + 32];
	struct perf_event_header h = { (uint32_t)type, 0, 0 };
	ZSTD_inBuffer in;
	ZSTD_outBuffer o;
	size_t at, n, hdr = type == PERF_RECORD_COMPRESSED2 ? 16 : 8;
	uint64_t dsize;

	assert_non_null(z);
	ZSTD_initCStream(z, 1);
	for (at = 0; at < len; at += n) {
		n = len - at < cut ? len - at : cut;
		in = (ZSTD_inBuffer){ (const char *)src + at, n, 0 };
		o = (ZSTD_outBuffer){ out, sizeof(out), 0 };
		assert_false(ZSTD_isError(ZSTD_compressStream(z, &o, &in)));
		assert_false(ZSTD_isError(ZSTD_flushStream(z, &o)));
		assert_int_equal(in.pos, n);
		h.size = (uint16_t)(hdr + o.pos);
		if (type == PERF_RECORD_COMPRESSED2)
			h.size = (uint16_t)((h.size + 7) & ~7);
		memset(rec, 0, sizeof(rec));
		memcpy(rec, &h, sizeof(h));
		dsize = o.pos;
		if (type == PERF_RECORD_COMPRESSED2)
			memcpy(rec + 8, &dsize, 8);
		memcpy(rec + hdr, out, o.pos);
		assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
	}
	ZSTD_freeCStream(z);
}

static void compressed_records(void **state)
{
	struct sample_rec s[40];
	struct sample_rec before = sample(ID, 1, 0x100000), after = sample(ID, 500, 0x200000);
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, pipe, type, i;

	for (i = 0; i < 40; i++)
		s[i] = sample(ID, 10 + (uint64_t)i, 0x1000 + 0x1000 * (uint64_t)i);
	for (type = PERF_RECORD_COMPRESSED; type <= PERF_RECORD_COMPRESSED2; type += 2)
		for (pipe = 0; pipe < 2; pipe++) {
			w = writer(&fd, pipe, NULL, 0);
			assert_int_equal(ms_pdwriter_write(w, &before.h), 0);
			/* 333 bytes a piece: every cut falls inside a sample. */
			write_compressed(w, type, s, sizeof(s), 333);
			assert_int_equal(ms_pdwriter_finish_round(w), 0);
			assert_int_equal(ms_pdwriter_write(w, &after.h), 0);
			finish(w);
			logged[0] = 0;
			assert_int_equal(run_fd(fd, &seen, &st), 0);
			assert_int_equal(st.samples, 42);
			assert_int_equal(seen.n, 32);          /* as many as it keeps */
			assert_int_equal(seen.addrs[0], 0x100000);
			for (i = 1; i < 32; i++) {
				assert_int_equal(seen.times[i], 10 + i - 1);
				assert_int_equal(seen.addrs[i], 0x1000 + 0x1000 * (uint64_t)(i - 1));
			}
			close(fd);
		}
}

/* Compressed data that does not decompress is named as such, with its offset. */
static void corrupt_compressed_data(void **state)
{
	struct sample_rec s1 = sample(ID, 10, 0x1000);
	unsigned char rec[64];
	struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, 61 };
	struct seen seen;
	struct ms_pdwriter *w;
	int fd;

	w = writer(&fd, false, NULL, 0);
	assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
	memset(rec, 0x5a, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
	finish(w);
	logged[0] = 0;
	assert_int_equal(run_fd(fd, &seen, NULL), -EBADMSG);
	assert_int_equal(seen.n, 1);
	assert_non_null(strstr(logged, "does not decompress"));
	close(fd);
}

/*
 * perf 6.0 and later: PERF_FORMAT_LOST adds a u64 per value of a READ
 * group (perf record -e '{page-faults,cpu-clock}:S'). Every field after
 * READ, the call chain here, lies 8 bytes further per value.
 */
static void group_read_with_lost(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ |
						    PERF_SAMPLE_CALLCHAIN,
				     .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | (1u << 4) /* LOST */,
				     .sample_id_all = 1 };
	uint64_t id = ID;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	/* header, identifier, ip, pid/tid, time, addr, nr=2 {value, id, lost} x2, chain nr=3, 3 ips */
	uint64_t rec[1 + 5 + 1 + 6 + 1 + 3];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec) };
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, pipe;

	memcpy(&rec[0], &h, 8);
	rec[1] = ID;
	rec[2] = 0x401000;
	rec[3] = 10 | (10ULL << 32);
	rec[4] = 123;
	rec[5] = 0x7f0000001000;
	rec[6] = 2;
	rec[7] = 5, rec[8] = ID, rec[9] = 0;
	rec[10] = 6, rec[11] = ID + 1, rec[12] = 0;
	rec[13] = 3;
	rec[14] = PERF_CONTEXT_USER, rec[15] = 0x401000, rec[16] = 0x402000;
	for (pipe = 0; pipe < 2; pipe++) {
		w = writer(&fd, pipe, &e, 1);
		assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
		finish(w);
		logged[0] = 0;
		assert_int_equal(run_fd(fd, &seen, &st), 0);
		assert_int_equal(st.bad_samples, 0);
		assert_int_equal(st.samples, 1);
		assert_int_equal(seen.n, 1);
		assert_int_equal(seen.times[0], 123);
		assert_int_equal(seen.addrs[0], 0x7f0000001000);
		assert_null(strstr(logged, "skipping"));
		close(fd);
	}
}

/*
 * Samples that are not user accesses are set aside and counted: address 0
 * of an event without an address (perf -d writes it for cpu-clock) and
 * kernel addresses. A page fault at 0 is a NULL pointer's access: kept.
 * Both ways samples are decoded: the only event's fixed layout, and a
 * full parse where there are several events.
 */
static void zero_and_kernel_addresses_set_aside(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_type = ST,
				     .sample_id_all = 1 };
	struct perf_event_attr b = a;
	uint64_t ida = ID, idb = ID + 1;
	struct ms_pdwriter_evsel e[2] = { { &a, "cpu-clock", &ida, 1 }, { &b, "page-faults", &idb, 1 } };
	struct sample_rec fault0 = sample(ID + 1, 14, 0);
	struct sample_rec s[4] = { sample(ID, 10, 0), sample(ID, 11, 0x5000),
				   sample(ID, 12, 0xffff888000001000ULL), sample(ID, 13, 0x6000) };
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, nr, i;

	b.config = PERF_COUNT_SW_PAGE_FAULTS;
	for (nr = 1; nr <= 2; nr++) {
		w = writer(&fd, false, e, (size_t)nr);
		for (i = 0; i < 4; i++)
			assert_int_equal(ms_pdwriter_write(w, &s[i].h), 0);
		if (nr == 2)
			assert_int_equal(ms_pdwriter_write(w, &fault0.h), 0);
		finish(w);
		assert_int_equal(run_fd(fd, &seen, &st), 0);
		assert_int_equal(st.samples, nr == 2 ? 3 : 2);
		assert_int_equal(st.zero_addr, 1);
		assert_int_equal(st.kernel_addr, 1);
		assert_int_equal(seen.n, nr == 2 ? 3 : 2);
		assert_int_equal(seen.addrs[0], 0x5000);
		assert_int_equal(seen.addrs[1], 0x6000);
		if (nr == 2)
			assert_int_equal(seen.addrs[2], 0);
		close(fd);
	}
}

/*
 * A sample whose id matches none of the file's events is counted and
 * dropped, never charged to the first event. Files of perf before
 * IDENTIFIER (ID only) find the id where every event has it.
 */
static void unknown_ids_are_counted(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
				     .sample_id_all = 1 };
	struct perf_event_attr b = a;
	uint64_t ida = ID, idb = ID + 1;
	struct ms_pdwriter_evsel e[2] = { { &a, "page-faults", &ida, 1 }, { &b, "minor-faults", &idb, 1 } };
	struct sample_rec s[3] = { sample(ID, 10, 0x1000), sample(999, 11, 0x2000), sample(ID + 1, 12, 0x3000) };
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, ident, i;

	b.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	for (ident = 1; ident >= 0; ident--) {
		if (!ident) {                        /* ID only: the id lies after IP, TID, TIME, ADDR */
			a.sample_type = b.sample_type = ST & ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
		}
		w = writer(&fd, false, e, 2);
		for (i = 0; i < 3; i++) {
			if (!ident) {
				memmove(&s[i].identifier, &s[i].ip, sizeof(s[i]) - offsetof(struct sample_rec, ip));
				s[i].h.size = sizeof(s[i]) - 8;
			}
			assert_int_equal(ms_pdwriter_write(w, &s[i].h), 0);
		}
		finish(w);
		assert_int_equal(run_fd(fd, &seen, &st), 0);
		assert_int_equal(st.unknown_id, 1);
		assert_int_equal(st.samples, 2);
		assert_int_equal(seen.n, 2);
		assert_int_equal(seen.addrs[0], 0x1000);
		assert_int_equal(seen.addrs[1], 0x3000);
		close(fd);
	}
}

/*
 * The warning about a sample that does not fit names that sample's own
 * offset, not where the reader has got to: samples wait in the queue
 * until their round ends.
 */
static void bad_sample_named_by_its_offset(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS,
				     .sample_type = ST | PERF_SAMPLE_CALLCHAIN, .sample_id_all = 1 };
	struct perf_event_attr b = a;
	uint64_t ida = ID, idb = ID + 1;
	struct ms_pdwriter_evsel e[2] = { { &a, "page-faults", &ida, 1 }, { &b, "minor-faults", &idb, 1 } };
	struct {
		struct sample_rec s;
		uint64_t nr, ips[2];
	} good[3], bad;
	struct perf_file_header fh;
	char want[64];
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, i;

	b.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	for (i = 0; i < 3; i++) {
		good[i].s = sample(ID, 20 + (uint64_t)i, 0x1000);
		good[i].s.h.size = sizeof(good[i]);
		good[i].nr = 2;
		good[i].ips[0] = good[i].ips[1] = 0x400000;
	}
	bad = good[0];
	bad.s.time = 10;
	bad.nr = 1000;                           /* a chain longer than the record */
	w = writer(&fd, false, e, 2);
	assert_int_equal(ms_pdwriter_write(w, &good[0].s.h), 0);
	assert_int_equal(ms_pdwriter_write(w, &bad.s.h), 0);
	assert_int_equal(ms_pdwriter_write(w, &good[1].s.h), 0);
	assert_int_equal(ms_pdwriter_write(w, &good[2].s.h), 0);
	finish(w);
	assert_int_equal(pread(fd, &fh, sizeof(fh), 0), (ssize_t)sizeof(fh));
	snprintf(want, sizeof(want), "byte offset %llu ", (unsigned long long)(fh.data.offset + sizeof(bad)));
	logged[0] = 0;
	assert_int_equal(run_fd(fd, &seen, NULL), 0);
	assert_int_equal(seen.n, 3);
	assert_non_null(strstr(logged, want));
	close(fd);
}

/*
 * A sample larger than its event's fixed layout can make is damage (a
 * flipped bit in its size), which swallowed the records after it: said,
 * with its offset, and counted, never taken silently.
 */
static void oversized_sample_is_damage(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST, .sample_id_all = 1 };
	uint64_t id = ID;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	struct sample_rec s[4] = { sample(ID, 10, 0x1000), sample(ID, 11, 0x2000), sample(ID, 12, 0x3000),
				   sample(ID, 13, 0x4000) };
	struct perf_file_header fh;
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	char want[64];
	int fd, i;

	w = writer(&fd, false, &e, 1);
	for (i = 0; i < 4; i++)
		assert_int_equal(ms_pdwriter_write(w, &s[i].h), 0);
	finish(w);
	/* The second sample's size now covers the third too. */
	assert_int_equal(pread(fd, &fh, sizeof(fh), 0), (ssize_t)sizeof(fh));
	s[1].h.size = 2 * sizeof(s[1]);
	assert_int_equal(pwrite(fd, &s[1].h, 8, (off_t)(fh.data.offset + sizeof(s[0]))), 8);
	snprintf(want, sizeof(want), "byte offset %llu of %zu bytes", (unsigned long long)(fh.data.offset + sizeof(s[0])),
		 2 * sizeof(s[1]));
	logged[0] = 0;
	assert_int_equal(run_fd(fd, &seen, &st), 0);
	assert_non_null(strstr(logged, want));
	assert_int_equal(st.bad_samples, 1);
	assert_int_equal(st.samples, 2);
	assert_int_equal(seen.addrs[1], 0x4000);
	close(fd);
}

/* So is any other record larger than its type can be: a COMM of 1 KiB. */
static void oversized_record_is_damage(void **state)
{
	unsigned char comm[1024] = { 0 };
	struct perf_event_header h = { PERF_RECORD_COMM, 0, sizeof(comm) };
	struct sample_rec s1 = sample(ID, 10, 0x1000);
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	int fd;

	memcpy(comm, &h, sizeof(h));
	strcpy((char *)comm + 16, "x");
	w = writer(&fd, false, NULL, 0);
	assert_int_equal(ms_pdwriter_write(w, (const void *)comm), 0);
	assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
	finish(w);
	logged[0] = 0;
	assert_int_equal(run_fd(fd, &seen, &st), 0);
	assert_non_null(strstr(logged, "its size, 1024 bytes, is more than that type ever has"));
	assert_int_equal(st.bad_records, 1);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.kinds[0], MS_EV_SAMPLE);
	close(fd);
}

static void blob_str(unsigned char **p, const char *s)
{
	memcpy(*p, s, strlen(s) + 1);
	*p += strlen(s) + 1;
}

static void blob_sized(unsigned char **p, const char *s)
{
	uint64_t n = strlen(s);

	memcpy(*p, &n, 8);
	memcpy(*p + 8, s, n);
	*p += 8 + n;
}

/*
 * A syscall tracepoint whose print fmt arguments divide by zero: "0x%08lx"
 * there reads as 0 % 08, which libtraceevent folds as it parses the format
 * and died of SIGFPE (found by fuzz_tracing: tests/golden/bad/). Only the
 * fields are wanted: the lone sys_enter_munmap still decodes, and is applied.
 */
static void print_fmt_dividing_by_zero(void **state)
{
	static const char format[] =
		"name: sys_enter_munmap\nID: 1\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned long addr;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:size_t len;\toffset:24;\tsize:8;\tsigned:0;\n\n"
		"print fmt: \"addr: 0x%08lx\", 0x%08lx, ((unsigned long)(REC->addr))\n";
	static const char header_page[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	unsigned char blob[4096], *p = blob;
	uint32_t u;
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_TRACEPOINT, .config = 1,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						    PERF_SAMPLE_RAW, .sample_id_all = 1 };
	uint64_t id = ID, rec[1 + 3 + 5];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, sizeof(rec) };
	struct ms_pdwriter_evsel e = { &a, "syscalls:sys_enter_munmap", &id, 1 };
	char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, true, 0 };
	struct ms_pdwriter *w;
	struct seen seen;
	int fd = memfd_create("fmt", 0), i, unmaps = 0;

	memcpy(p, "\027\010\104tracing", 10);
	p += 10;
	blob_str(&p, "0.6");
	*p++ = 0;                                /* little-endian */
	*p++ = 8;                                /* sizeof(long) */
	u = 4096;
	memcpy(p, &u, 4);
	p += 4;
	blob_str(&p, "header_page");
	blob_sized(&p, header_page);
	blob_str(&p, "header_event");
	blob_sized(&p, "");
	u = 0;                                   /* no ftrace formats */
	memcpy(p, &u, 4);
	p += 4;
	u = 1;                                   /* one system, one event */
	memcpy(p, &u, 4);
	p += 4;
	blob_str(&p, "syscalls");
	memcpy(p, &u, 4);
	p += 4;
	blob_sized(&p, format);
	o.tracing_data = blob;
	o.tracing_data_len = (size_t)(p - blob);
	w = ms_pdwriter_new(fd, &o);
	assert_non_null(w);
	/* header, IDENTIFIER, TID, TIME, RAW: u32 size 36, then the fields (addr at 16, len at 24) */
	memcpy(&rec[0], &h, 8);
	rec[1] = ID;
	rec[2] = 10 | (10ULL << 32);
	rec[3] = 50;
	memset(&rec[4], 0, 40);
	u = 36;
	memcpy(&rec[4], &u, 4);
	memcpy((char *)&rec[4] + 4 + 16, &(uint64_t){ 0x10000 }, 8);
	memcpy((char *)&rec[4] + 4 + 24, &(uint64_t){ 0x2000 }, 8);
	assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
	finish(w);
	assert_int_equal(run_fd(fd, &seen, NULL), 0);
	for (i = 0; i < seen.n; i++)
		unmaps += seen.kinds[i] == MS_EV_UNMAP;
	assert_int_equal(unmaps, 1);
	close(fd);
}

/* perf's first layout (PERFFILE) is named, and declined. */
static void perffile_v1_is_named(void **state)
{
	char path[64], buf[104] = "PERFFILE";
	int fd = memfd_create("v1", 0);

	assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	logged[0] = 0;
	assert_null(ms_pdreader_open(path));
	assert_int_equal(errno, EBADMSG);
	assert_non_null(strstr(logged, "PERFFILE (version 1)"));
	close(fd);
}

/*
 * Ids are bounded in total: thousands of attrs all pointing at one large
 * ids section would make a small file ask for gigabytes. It is refused,
 * saying why, before anything large is allocated.
 */
static void ids_bounded_in_total(void **state)
{
	const size_t nattr = 4096, ids_len = 1u << 20;
	struct perf_file_header h = { .magic = PERF_MAGIC2, .size = sizeof(h),
				      .attr_size = sizeof(struct perf_event_attr) + 16 };
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE, .sample_type = ST };
	struct perf_file_section ids;
	char path[64];
	size_t i;
	int fd = memfd_create("ids", 0);

	h.attrs = (struct perf_file_section){ sizeof(h), nattr * h.attr_size };
	ids = (struct perf_file_section){ sizeof(h) + h.attrs.size, ids_len };
	h.data = (struct perf_file_section){ ids.offset + ids_len, 0 };
	assert_int_equal(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	for (i = 0; i < nattr; i++) {
		assert_int_equal(write(fd, &a, sizeof(a)), (ssize_t)sizeof(a));
		assert_int_equal(write(fd, &ids, sizeof(ids)), (ssize_t)sizeof(ids));
	}
	assert_int_equal(ftruncate(fd, (off_t)(ids.offset + ids_len)), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	logged[0] = 0;
	assert_null(ms_pdreader_open(path));
	assert_int_equal(errno, EBADMSG);
	assert_non_null(strstr(logged, "event ids in all"));
	close(fd);
}

/*
 * Pipe mode: an attr that arrives after the data has started. The stream
 * set up before it keeps what it had (its attrs stay where they were), and
 * the new event's samples count as of no known event. EVENT_DESC sent
 * twice replaces the names, leaking nothing.
 */
static void pipe_attr_after_data(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
				     .sample_id_all = 1 };
	struct perf_event_attr b = a;
	uint64_t ida = ID, idb = ID + 1;
	struct ms_pdwriter_evsel e[2] = { { &a, "page-faults", &ida, 1 }, { &b, "minor-faults", &idb, 1 } };
	struct sample_rec s1 = sample(ID, 10, 0x1000), s2 = sample(500, 20, 0x2000), s3 = sample(ID + 1, 30, 0x3000);
	unsigned char rec[8 + sizeof(a) + 8], desc[8 + 8 + 8 + sizeof(a) + 8 + 16];
	struct perf_event_header h = { PERF_RECORD_HEADER_ATTR, 0, sizeof(rec) };
	uint64_t id = 500, feat = HEADER_EVENT_DESC;
	uint32_t u[4];
	struct ms_stream_stats st;
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, k;

	b.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	w = writer(&fd, true, e, 2);
	/* EVENT_DESC as a feature record, twice: u32 nr, u32 attr size, attr, u32 ids, u32 len, name. */
	for (k = 0; k < 2; k++) {
		h = (struct perf_event_header){ PERF_RECORD_HEADER_FEATURE, 0, sizeof(desc) };
		memset(desc, 0, sizeof(desc));
		memcpy(desc, &h, 8);
		memcpy(desc + 8, &feat, 8);
		u[0] = 1, u[1] = sizeof(a);
		memcpy(desc + 16, u, 8);
		memcpy(desc + 24, &a, sizeof(a));
		u[2] = 0, u[3] = 16;
		memcpy(desc + 24 + sizeof(a), u + 2, 8);
		strcpy((char *)desc + 32 + sizeof(a), k ? "faults" : "page-faults");
		assert_int_equal(ms_pdwriter_write(w, (const void *)desc), 0);
	}
	assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
	h = (struct perf_event_header){ PERF_RECORD_HEADER_ATTR, 0, sizeof(rec) };
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &a, sizeof(a));
	memcpy(rec + 8 + sizeof(a), &id, 8);
	for (k = 0; k < 8; k++)                  /* enough attrs to move a grown array */
		assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
	assert_int_equal(ms_pdwriter_write(w, &s2.h), 0);
	assert_int_equal(ms_pdwriter_write(w, &s3.h), 0);
	finish(w);
	assert_int_equal(run_fd(fd, &seen, &st), 0);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.unknown_id, 1);
	assert_int_equal(seen.addrs[1], 0x3000);
	close(fd);
}

/*
 * A flipped bit in a map's length (a 2^60-byte region) or address is
 * refused with its offset before anything iterates over the range; the
 * records after it are read as usual.
 */
static void maps_outside_user_space_refused(void **state)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, 0, sizeof(m) }, 10, 10, 0x10000, 1ULL << 60, 0, 0, 0, 0, 0,
		PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon", 10, 10, 5, ID, 0, 0, ID };
	struct sample_rec s1 = sample(ID, 10, 0x10000);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
				     .sample_id_all = 1, .mmap2 = 1 };
	uint64_t id = ID;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	struct seen seen;
	struct ms_pdwriter *w;
	int fd, k;

	for (k = 0; k < 2; k++) {
		if (k) {                             /* an address past user space */
			m.addr = 0x4000000000000000ULL;
			m.len = 0x1000;
		}
		w = writer(&fd, false, &e, 1);
		assert_int_equal(ms_pdwriter_write(w, &m.h), 0);
		assert_int_equal(ms_pdwriter_write(w, &s1.h), 0);
		finish(w);
		logged[0] = 0;
		assert_int_equal(run_fd(fd, &seen, NULL), 0);
		assert_non_null(strstr(logged, "outside the user address space"));
		assert_int_equal(seen.n, 1);
		assert_int_equal(seen.kinds[0], MS_EV_SAMPLE);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(misaligned_perf_records),
		cmocka_unit_test(misaligned_kernel_record_is_corrupt),
		cmocka_unit_test(auxtrace_data_is_skipped),
		cmocka_unit_test(compressed_records),
		cmocka_unit_test(corrupt_compressed_data),
		cmocka_unit_test(group_read_with_lost),
		cmocka_unit_test(zero_and_kernel_addresses_set_aside),
		cmocka_unit_test(unknown_ids_are_counted),
		cmocka_unit_test(bad_sample_named_by_its_offset),
		cmocka_unit_test(perffile_v1_is_named),
		cmocka_unit_test(oversized_sample_is_damage),
		cmocka_unit_test(oversized_record_is_damage),
		cmocka_unit_test(print_fmt_dividing_by_zero),
		cmocka_unit_test(ids_bounded_in_total),
		cmocka_unit_test(pipe_attr_after_data),
		cmocka_unit_test(maps_outside_user_space_refused),
	};

	ms_log_set(on_log, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
