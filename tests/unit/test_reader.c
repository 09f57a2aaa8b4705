/* perf.data reader and stream: ordering, layouts, and damaged files. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/aspace.h>
#include <mapscope/log.h>
#include <mapscope/pdreader.h>
#include <mapscope/pdwriter.h>

#include "stream/stream.h"
#include "stream_file.h"

#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "records.h"
#include "pmd_file.h"

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

static struct sample_rec sample(uint64_t time, uint64_t addr)
{
	return (struct sample_rec){ { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(struct sample_rec) },
				    ID, 0x400000, 10, 10, time, addr, ID, 0, 0, 1 };
}

static struct mmap2_rec mmap2(uint64_t time, uint64_t addr, uint64_t len)
{
	return (struct mmap2_rec){ { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(struct mmap2_rec) },
				   10, 10, addr, len, 0, 0, 0, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				   "//anon", 10, 10, time, ID, 0, 0, ID };
}

/* A file: MMAP2 at 10, samples at 30 and 20 (two CPUs), a round, then 25 and 40. */
static int make_file(bool pipe, size_t *len)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
				     .sample_id_all = 1, .mmap2 = 1 };
	uint64_t id = ID;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, pipe, 0 };
	struct mmap2_rec m = mmap2(10, 0x10000, 0x4000);
	struct sample_rec s30 = sample(30, 0x10008), s20 = sample(20, 0x11000), s25 = sample(25, 0x12000),
			  s40 = sample(40, 0x99000);
	int fd = memfd_create("pd", 0);
	struct ms_pdwriter *w = ms_pdwriter_new(fd, &o);

	assert_non_null(w);
	ms_pdwriter_write(w, &m.h);
	ms_pdwriter_write(w, &s30.h);
	ms_pdwriter_write(w, &s20.h);
	ms_pdwriter_finish_round(w);
	ms_pdwriter_write(w, &s25.h);
	ms_pdwriter_write(w, &s40.h);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	*len = (size_t)lseek(fd, 0, SEEK_END);
	return fd;
}

static char path_of(int fd, char *buf)
{
	sprintf(buf, "/proc/self/fd/%d", fd);
	return 0;
}

struct seen { uint64_t times[16]; int kinds[16]; int n; int charged_unmapped, charged; };

static int collect(const struct ms_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->times[s->n] = ev->time;
		s->kinds[s->n++] = ev->kind;
	}
	return 0;
}

static int run_file(const char *path, struct seen *s)
{
	struct ms_pdreader *r = ms_pdreader_open(path);
	struct ms_stream *st;
	int ret;

	if (!r)
		return -errno;
	st = stream_file_new(r);
	assert_non_null(st);
	ret = stream_file_run(st, collect, s);
	ms_stream_free(st);
	ms_pdreader_free(r);
	return ret;
}

/* A stream over path, with runs of samples going to runs where it is not NULL. */
static struct ms_stream *stream_of(const char *path, struct ms_pdreader **r, ms_stream_samples_fn runs)
{
	struct ms_stream *st;

	*r = ms_pdreader_open(path);
	assert_non_null(*r);
	st = stream_file_new(*r);
	assert_non_null(st);
	if (runs)
		assert_int_equal(ms_stream_set_samples_fn(st, runs), 0);
	return st;
}

static void orders_across_cpus(void **state)
{
	char path[64];
	size_t len;
	int fd = make_file(false, &len);
	struct seen s = { .n = 0 };

	path_of(fd, path);
	assert_int_equal(run_file(path, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.kinds[0], MS_EV_MAP);
	assert_int_equal(s.times[0], 10);
	assert_int_equal(s.times[1], 20);
	assert_int_equal(s.times[2], 25);        /* after the round, still in its place */
	assert_int_equal(s.times[3], 30);
	assert_int_equal(s.times[4], 40);
	close(fd);
}

static void reads_pipe_mode_from_file_and_pipe(void **state)
{
	char path[64], *buf;
	size_t len;
	int fd = make_file(true, &len), p[2];
	struct seen s = { .n = 0 };

	path_of(fd, path);
	assert_int_equal(run_file(path, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.times[2], 25);
	/* The same bytes through a real pipe. */
	buf = malloc(len);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	assert_int_equal(pipe(p), 0);
	assert_true(len < 65536);
	assert_int_equal(write(p[1], buf, len), (ssize_t)len);
	close(p[1]);
	path_of(p[0], path);
	memset(&s, 0, sizeof(s));
	assert_int_equal(run_file(path, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.times[4], 40);
	close(p[0]);
	free(buf);
	close(fd);
}

/*
 * A file's bytes are where it is mapped, so a record handed out lies in
 * what ms_pdreader_lasting() says lasts; a pipe's are in blocks the
 * reader reuses, and nothing lasts.
 */
static void lasting_bytes_of_a_file_not_a_pipe(void **state)
{
	const struct perf_event_header *h;
	const void *lo, *hi;
	char path[64], *buf;
	size_t len;
	int fd = make_file(false, &len), p[2];
	struct ms_pdreader *r;

	(void)state;
	path_of(fd, path);
	assert_non_null(r = ms_pdreader_open(path));
	ms_pdreader_lasting(r, &lo, &hi);
	assert_non_null(lo);
	assert_int_equal((const char *)hi - (const char *)lo, len);
	assert_int_equal(ms_pdreader_next(r, &h), 1);
	assert_true((const void *)h >= lo && (const void *)(h + 1) <= hi);
	ms_pdreader_free(r);
	buf = malloc(len);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	close(fd);
	fd = make_file(true, &len);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	close(fd);
	assert_int_equal(pipe(p), 0);
	assert_true(len < 65536);
	assert_int_equal(write(p[1], buf, len), (ssize_t)len);
	close(p[1]);
	path_of(p[0], path);
	assert_non_null(r = ms_pdreader_open(path));
	ms_pdreader_lasting(r, &lo, &hi);
	assert_null(lo);
	assert_null(hi);
	assert_int_equal(ms_pdreader_next(r, &h), 1);
	ms_pdreader_free(r);
	close(p[0]);
	free(buf);
}

/*
 * perf 6.1 pads pipe mode's feature records to 4 bytes, not 8: one of 20
 * bytes before the data leaves every later record 4 bytes off; each must
 * still be read, whole and in order, through the usual paths.
 */
static void pipe_feature_record_padded_to_4(void **state)
{
	char path[64], *buf, *out;
	size_t len, off = sizeof(struct perf_pipe_file_header);
	int fd = make_file(true, &len), fd2 = memfd_create("pd4", 0);
	struct perf_event_header h;
	uint64_t feat = 255;                     /* a feature no one knows: skipped */
	struct seen s = { .n = 0 };

	buf = malloc(len);
	out = malloc(len + 20);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	/* Past the attrs and any other header records, to the first kernel record. */
	for (memcpy(&h, buf + off, sizeof(h)); h.type >= 64; memcpy(&h, buf + off, sizeof(h)))
		off += h.size;
	h = (struct perf_event_header){ PERF_RECORD_HEADER_FEATURE, 0, 20 };
	memcpy(out, buf, off);
	memcpy(out + off, &h, sizeof(h));
	memcpy(out + off + sizeof(h), &feat, 8);
	memset(out + off + 16, 0, 4);
	memcpy(out + off + 20, buf + off, len - off);
	assert_int_equal(write(fd2, out, len + 20), (ssize_t)(len + 20));
	path_of(fd2, path);
	logged[0] = '\0';
	assert_int_equal(run_file(path, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.kinds[0], MS_EV_MAP);
	assert_int_equal(s.times[1], 20);
	assert_int_equal(s.times[2], 25);
	assert_int_equal(s.times[4], 40);
	free(buf);
	free(out);
	close(fd);
	close(fd2);
}

static void truncated_file_keeps_records_before(void **state)
{
	char path[64];
	size_t len;
	int fd = make_file(false, &len);
	struct perf_file_header h;
	struct seen s = { .n = 0 };

	assert_int_equal(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	/* Cut inside the fourth record: the first three are whole. */
	assert_int_equal(ftruncate(fd, (off_t)(h.data.offset + sizeof(struct mmap2_rec) +
					      2 * sizeof(struct sample_rec) + 8 + 20)), 0);
	path_of(fd, path);
	logged[0] = '\0';
	assert_int_equal(run_file(path, &s), -EBADMSG);
	assert_int_equal(s.n, 3);
	assert_non_null(strstr(logged, "byte offset"));
	close(fd);
}

static void corrupt_record_size(void **state)
{
	char path[64];
	size_t len;
	int fd = make_file(false, &len);
	struct perf_file_header h;
	uint16_t bad = 4;                        /* smaller than a header */
	struct seen s = { .n = 0 };

	pread(fd, &h, sizeof(h), 0);
	pwrite(fd, &bad, 2, (off_t)(h.data.offset + sizeof(struct mmap2_rec) + 6));
	path_of(fd, path);
	logged[0] = '\0';
	assert_int_equal(run_file(path, &s), -EBADMSG);
	assert_int_equal(s.n, 1);                /* the MMAP2 before it */
	assert_non_null(strstr(logged, "byte offset"));
	close(fd);
}

static void not_perf_data(void **state)
{
	char path[64];
	int fd = memfd_create("x", 0);

	assert_int_equal(write(fd, "hello, this is not a recording at all", 37), 37);
	path_of(fd, path);
	assert_null(ms_pdreader_open(path));
	assert_int_equal(errno, EBADMSG);
	assert_non_null(strstr(logged, "PERFILE2"));
	ftruncate(fd, 3);
	assert_null(ms_pdreader_open(path));
	assert_int_equal(errno, EBADMSG);
	close(fd);
}

/* perf wrote 64-byte attrs once (PERF_ATTR_SIZE_VER0): fields past them read as 0. */
static void old_attr_layout(void **state)
{
	struct perf_file_header h = { .magic = PERF_MAGIC2, .size = sizeof(h), .attr_size = 64 + 16 };
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = 64, .sample_type = ST,
				     .config = PERF_COUNT_SW_PAGE_FAULTS };
	struct perf_file_section ids = { sizeof(h) + 80, 8 };
	uint64_t id = ID;
	struct sample_rec s = sample(5, 0x1000);
	const struct perf_event_attr *got;
	struct ms_pdreader *r;
	char path[64];
	int fd = memfd_create("old", 0);

	a.sample_id_all = 1;                     /* bit 18: inside the first 64 bytes */
	h.attrs = (struct perf_file_section){ sizeof(h), 80 };
	h.data = (struct perf_file_section){ sizeof(h) + 88, sizeof(s) };
	write(fd, &h, sizeof(h));
	write(fd, &a, 64);
	write(fd, &ids, sizeof(ids));
	write(fd, &id, 8);
	write(fd, &s, sizeof(s));
	path_of(fd, path);
	r = ms_pdreader_open(path);
	assert_non_null(r);
	got = ms_pdreader_attr(r, 0);
	assert_int_equal(got->sample_type, ST);
	assert_int_equal(got->config1, 0);
	assert_int_equal(ms_pdreader_evsel_by_id(r, ID), 0);
	ms_pdreader_free(r);
	close(fd);
}

static int drive(const struct ms_event *ev, void *ctx)
{
	return ms_aspace_apply(ctx, ev, NULL);
}

/* Random damage must never crash the reader, the stream or the model. */
static void survives_mutations(void **state)
{
	size_t len, i, k;
	int fd = make_file(false, &len), out;
	unsigned char *orig = malloc(len), *buf = malloc(len);
	char path[64];
	struct ms_pdreader *r;
	struct ms_stream *st;
	struct ms_aspace *as;

	pread(fd, orig, len, 0);
	srand(1234);
	out = memfd_create("mut", 0);
	path_of(out, path);
	for (i = 0; i < 2000; i++) {
		memcpy(buf, orig, len);
		for (k = 0; k < 1 + (size_t)rand() % 8; k++)
			buf[(size_t)rand() % len] = (unsigned char)rand();
		ftruncate(out, 0);
		pwrite(out, buf, len - (i % 7 == 0 ? (size_t)rand() % len : 0), 0);
		r = ms_pdreader_open(path);
		if (!r)
			continue;
		st = stream_file_new(r);
		as = ms_aspace_new();
		if (st && as)
			stream_file_run(st, drive, as);
		ms_aspace_free(as);
		ms_stream_free(st);
		ms_pdreader_free(r);
	}
	free(orig);
	free(buf);
	close(out);
	close(fd);
}

/*
 * Many rounds, some far larger than the reader's blocks, with records that
 * straddle block edges and long COMM records: every record comes out once,
 * in time order, whether the file is read in place or through a pipe.
 */
#define BIG_ROUNDS 60
#define NAME_LEN 4000

struct bigseen { uint64_t samples, comms, addr_sum, addr_xor, last_time, order_hash, runs; bool in_order; };

static int collect_big(const struct ms_event *ev, void *ctx)
{
	struct bigseen *b = ctx;

	if (ev->time < b->last_time)
		b->in_order = false;
	b->last_time = ev->time;
	b->order_hash = b->order_hash * 1000003 +
			(ev->time ^ (ev->kind == MS_EV_SAMPLE ? ev->sample.addr * 31 : 0) ^ (uint64_t)ev->kind);
	if (ev->kind == MS_EV_SAMPLE) {
		b->samples++;
		b->addr_sum += ev->sample.addr;
		b->addr_xor ^= ev->sample.addr;
	} else if (ev->kind == MS_EV_MAP) {
		b->comms++;
		if (strlen(ev->map.name) != NAME_LEN - 1)
			b->in_order = false;     /* the name must come through whole */
	}
	return 0;
}

/*
 * An MMAP2 record with a name of NAME_LEN - 1 bytes (a long path, as large
 * as a record of its type can be), then the sample_id trailer.
 */
static void write_comm(struct ms_pdwriter *w, uint64_t time)
{
	size_t size = sizeof(struct perf_event_header) + 64 + NAME_LEN + 40;
	unsigned char *rec = calloc(1, size);
	struct perf_event_header h = { PERF_RECORD_MMAP2, 0, (uint16_t)size };
	uint32_t ids[2] = { 10, 10 }, prot[2] = { PROT_READ, MAP_PRIVATE };
	uint64_t range[3] = { 0x10000, 0x1000, 0 };
	uint64_t trailer[4] = { time, ID, 0, ID };   /* after TID: TIME, ID, CPU, IDENTIFIER */

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), ids, 8);
	memcpy(rec + sizeof(h) + 8, range, 24);
	memcpy(rec + sizeof(h) + 56, prot, 8);
	rec[sizeof(h) + 64] = '/';
	memset(rec + sizeof(h) + 65, 'c', NAME_LEN - 2);
	memcpy(rec + size - 40, ids, 8);
	memcpy(rec + size - 32, trailer, 32);
	assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
	free(rec);
}

static int make_big_file(bool pipe, struct bigseen *want)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
				     .sample_id_all = 1, .mmap2 = 1, .comm = 1 };
	uint64_t id = ID, t, addr = 1;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, pipe, 0 };
	int fd = memfd_create("big", 0), k, cpu, i, n;
	struct ms_pdwriter *w = ms_pdwriter_new(fd, &o);
	struct sample_rec smp;

	assert_non_null(w);
	memset(want, 0, sizeof(*want));
	srand(99);
	for (k = 0; k < BIG_ROUNDS; k++) {
		/* Round k's times lie in [1000 k, 1000 k + 1500): later than all of round k - 2. */
		n = k % 7 == 3 ? 6000 : 200 + 13 * k;
		for (cpu = 0; cpu < 2; cpu++) {          /* two CPUs' buffers, each in time order */
			for (i = 0, t = 1000 * (uint64_t)k + 1 + (uint64_t)cpu; i < n; i++) {
				t += (uint64_t)(rand() % 2);
				if (t >= 1000 * (uint64_t)k + 1500)
					t = 1000 * (uint64_t)k + 1499;
				smp = sample(t, addr);
				want->samples++;
				want->addr_sum += addr;
				want->addr_xor ^= addr;
				addr = ((addr * 3 + 7) & 0x7fffffffffffULL) | 1;   /* user addresses */
				ms_pdwriter_write(w, &smp.h);
				if (i == n / 2 && k % 5 == 1) {
					write_comm(w, t);
					want->comms++;
				}
			}
		}
		ms_pdwriter_finish_round(w);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	return fd;
}

static int collect_big_run(const struct ms_samples *run, void *ctx)
{
	struct bigseen *b = ctx;
	const struct ms_event *ev;
	struct ms_event tmp;
	size_t i;

	b->runs++;
	for (i = 0; i < run->n; i++) {
		ev = ms_samples_event(run, i, &tmp);
		if (ev->kind != MS_EV_SAMPLE)
			b->in_order = false;     /* runs hold samples only */
		collect_big(ev, ctx);
	}
	return 0;
}

/*
 * Every field of fixed-layout samples, whether IP..ADDR lie side by side or
 * not, one by one or in runs; with an IP the runs lie over the file's own
 * bytes. Samples with a kernel address, at the ends of runs and inside
 * them, are set aside and counted either way, and so are those at address
 * 0 of an event without addresses (perf -d's cpu-clock); a page fault's
 * address 0 is a NULL pointer's access, kept.
 */
#define NFIELD_SAMPLES 700

struct fields_seen { int n, raw, views; uint64_t at; bool ok; };

static bool fields_fault;            /* the event is page faults, not perf -d's cpu-clock */

/*
 * Sample i's data source: the page faults' any, the clock's "not
 * available" (PERF_MEM_OP_NA), as perf -d writes it for cycles.
 */
static uint64_t field_dsrc(uint64_t i)
{
	return fields_fault ? 0x42 + i : ((0x42 + i) & ~0x1fULL) | PERF_MEM_OP_NA;
}

/* Sample i's address: 0 and kernel ones here and there, first and last among them. */
static uint64_t field_addr(uint64_t i)
{
	if (i % 97 == 0 || i == NFIELD_SAMPLES - 1)
		return 0;
	if (i % 131 == 5 || i == 255 || i == 256)
		return 0xffff888000001000ULL + i;
	return 0x10000 + 64 * i;
}

static void check_fields(struct fields_seen *f, const struct ms_event *ev, bool with_ip)
{
	uint64_t i = f->at;

	while (i < NFIELD_SAMPLES && (field_addr(i) >> 63 || (!field_addr(i) && !fields_fault)))
		i++;                         /* set aside: never seen */
	f->at = i + 1;
	f->n++;
	f->ok &= ev->kind == MS_EV_SAMPLE && ev->time == 1000 + i && ev->pid == 10 + (uint32_t)i % 3 &&
		 ev->tid == 20 + (uint32_t)i % 5 && ev->sample.addr == field_addr(i) &&
		 ev->sample.data_src == field_dsrc(i) && ev->sample.ip == (with_ip ? 0x400000 + i : 0) &&
		 ev->cpu == (with_ip ? (uint32_t)i % 2 : 0) && ev->sample.has_addr && !ev->sample.has_sp &&
		 ev->sample.fault == fields_fault && ev->sample.evsel == 0;
}

static bool fields_with_ip;

static int fields_one(const struct ms_event *ev, void *ctx)
{
	if (ev->kind == MS_EV_SAMPLE)
		check_fields(ctx, ev, fields_with_ip);
	return 0;
}

static int fields_run(const struct ms_samples *run, void *ctx)
{
	struct fields_seen *f = ctx;
	const struct ms_event *ev;
	struct ms_event tmp;
	size_t i;

	f->views++;
	f->raw += !run->evs;
	for (i = 0; i < run->n; i++) {
		ev = ms_samples_event(run, i, &tmp);
		/* The accessors read what the whole event says. */
		f->ok &= ms_samples_addr(run, i) == ev->sample.addr && ms_samples_time(run, i) == ev->time &&
			 ms_samples_pid(run, i) == ev->pid && ms_samples_ip(run, i) == ev->sample.ip;
		check_fields(ctx, ev, fields_with_ip);
	}
	return 0;
}

static void fixed_layouts_decode_each_field(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_id_all = 1 };
	uint64_t id = ID, rec[8], i, zero = 0, kernel = 0;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	char *argv[] = { "test" }, path[64];
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	struct ms_stream_stats stats;
	struct fields_seen seen;
	struct ms_pdwriter *w;
	struct ms_pdreader *r;
	struct ms_stream *st;
	int layout, runs, fd, k;

	for (i = 0; i < NFIELD_SAMPLES; i++) {
		zero += !field_addr(i);
		kernel += field_addr(i) >> 63;
	}
	/* No IP, faults; an IP, perf -d's clock; an IP, faults. */
	for (layout = 0; layout < 3; layout++) {
		fields_with_ip = layout >= 1;
		fields_fault = layout != 1;
		a.config = fields_fault ? PERF_COUNT_SW_PAGE_FAULTS : PERF_COUNT_SW_CPU_CLOCK;
		e.name = fields_fault ? "page-faults" : "cpu-clock";
		a.sample_type = layout ? PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
					 PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC :
					 PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
		fd = memfd_create("fields", 0);
		w = ms_pdwriter_new(fd, &o);
		assert_non_null(w);
		for (i = 0; i < NFIELD_SAMPLES; i++) {
			k = 1;                                                 /* the header goes last */
			if (layout)
				rec[k++] = 0x400000 + i;                      /* IP */
			rec[k++] = (10 + i % 3) | (20 + i % 5) << 32;          /* TID */
			rec[k++] = 1000 + i;                                   /* TIME */
			rec[k++] = field_addr(i);                              /* ADDR */
			if (layout)
				rec[k++] = i % 2;                              /* CPU */
			rec[k++] = field_dsrc(i);                              /* DATA_SRC */
			h.size = (uint16_t)(8 * k);
			memcpy(&rec[0], &h, 8);
			assert_int_equal(ms_pdwriter_write(w, (const void *)rec), 0);
			if (i % 50 == 49 && i < 300)   /* short runs, then one of 400 */
				ms_pdwriter_finish_round(w);
		}
		assert_int_equal(ms_pdwriter_close(w), 0);
		ms_pdwriter_free(w);
		path_of(fd, path);
		for (runs = 0; runs < 2; runs++) {
			seen = (struct fields_seen){ .ok = true };
			st = stream_of(path, &r, runs ? fields_run : NULL);
			assert_int_equal(stream_file_run(st, fields_one, &seen), 0);
			assert_int_equal(seen.n, NFIELD_SAMPLES - (fields_fault ? 0 : zero) - kernel);
			assert_true(seen.ok);
			ms_stream_stats(st, &stats);
			assert_int_equal(stats.samples, NFIELD_SAMPLES - (fields_fault ? 0 : zero) - kernel);
			assert_int_equal(stats.zero_addr, fields_fault ? 0 : zero);
			assert_int_equal(stats.kernel_addr, kernel);
			/* With an IP, each run lies over the file: none is a copy. */
			if (runs)
				assert_int_equal(seen.raw, layout ? seen.views : 0);
			assert_true(!runs || seen.views > 0);
			ms_stream_free(st);
			ms_pdreader_free(r);
		}
		close(fd);
	}
}

/* The same events in the same order whether samples come one by one or in runs. */
static void samples_in_runs_as_one_by_one(void **state)
{
	struct bigseen want, one = { .in_order = true }, runs = { .in_order = true };
	struct ms_pdreader *r;
	struct ms_stream *st;
	char path[64];
	int fd = make_big_file(false, &want), pass;

	path_of(fd, path);
	for (pass = 0; pass < 2; pass++) {
		st = stream_of(path, &r, pass ? collect_big_run : NULL);
		assert_int_equal(stream_file_run(st, collect_big, pass ? &runs : &one), 0);
		ms_stream_free(st);
		ms_pdreader_free(r);
	}
	assert_true(one.in_order && runs.in_order);
	assert_int_equal(one.samples, want.samples);
	assert_int_equal(runs.samples, want.samples);
	assert_int_equal(runs.comms, want.comms);
	assert_int_equal(runs.order_hash, one.order_hash);
	assert_true(runs.runs > 0 && runs.runs < want.samples / 10);
	close(fd);
}

static void run_big(const char *path, const struct bigseen *want)
{
	struct bigseen got = { .in_order = true };
	struct ms_pdreader *r = ms_pdreader_open(path);
	struct ms_stream *st;

	assert_non_null(r);
	st = stream_file_new(r);
	assert_non_null(st);
	assert_int_equal(stream_file_run(st, collect_big, &got), 0);
	assert_true(got.in_order);
	assert_int_equal(got.samples, want->samples);
	assert_int_equal(got.comms, want->comms);
	assert_int_equal(got.addr_sum, want->addr_sum);
	assert_int_equal(got.addr_xor, want->addr_xor);
	ms_stream_free(st);
	ms_pdreader_free(r);
}

static void many_rounds_across_blocks(void **state)
{
	struct bigseen want;
	char path[64];
	int mode, fd, p[2], status;
	pid_t child;
	off_t len;
	ssize_t k;
	char buf[65536];

	for (mode = 0; mode < 2; mode++) {      /* file mode, then pipe mode */
		fd = make_big_file(mode == 1, &want);
		assert_true(want.samples > 100000 && want.comms > 0);
		path_of(fd, path);
		run_big(path, &want);
		/* The same bytes through a real pipe, written by a child as a pipe fills. */
		len = lseek(fd, 0, SEEK_END);
		assert_true(len > 4 * 65536);
		assert_int_equal(pipe(p), 0);
		child = fork();
		assert_true(child >= 0);
		if (!child) {
			close(p[0]);
			lseek(fd, 0, SEEK_SET);
			while ((k = read(fd, buf, sizeof(buf))) > 0)
				if (write(p[1], buf, (size_t)k) != k)
					_exit(1);
			_exit(0);
		}
		close(p[1]);
		if (mode == 1) {                /* a file-mode recording cannot come through a pipe */
			path_of(p[0], path);
			run_big(path, &want);
		}
		close(p[0]);
		waitpid(child, &status, 0);
		close(fd);
	}
}

/* A second thread's view of the reader's offset, as the progress line reads it. */
struct watcher {
	const struct ms_pdreader *r;
	atomic_int done;
	uint64_t last, reads;
	int backwards;
};

static void *watch_offset(void *arg)
{
	struct watcher *w = arg;
	uint64_t off;

	while (!atomic_load(&w->done)) {
		off = ms_pdreader_offset(w->r);
		w->backwards += off < w->last;
		w->last = off;
		w->reads++;
	}
	return NULL;
}

/*
 * The offset is read on another thread while the reader runs (the progress
 * line, and the stream run ahead writes it from a thread of its own): it
 * only grows, and is a whole word each time (a data race TSan reports,
 * where the reader writes it as a plain word).
 */
static void offset_read_on_another_thread(void **state)
{
	const struct perf_event_header *h;
	struct bigseen want;
	struct watcher w = { 0 };
	struct ms_pdreader *r;
	pthread_t th;
	char path[64];
	int fd = make_big_file(false, &want), ret;
	uint64_t n = 0;

	(void)state;
	path_of(fd, path);
	r = ms_pdreader_open(path);
	assert_non_null(r);
	w.r = r;
	assert_int_equal(pthread_create(&th, NULL, watch_offset, &w), 0);
	while ((ret = ms_pdreader_next(r, &h)) > 0)
		n++;
	atomic_store(&w.done, 1);
	pthread_join(th, NULL);
	assert_int_equal(ret, 0);
	assert_true(n > want.samples);
	assert_int_equal(w.backwards, 0);
	assert_true(w.last <= ms_pdreader_offset(r));
	ms_pdreader_free(r);
	close(fd);
}

/* Without a stream, records stay whole across block edges and are not reused early. */
static void plain_reading_across_blocks(void **state)
{
	struct bigseen want;
	const struct perf_event_header *rec;
	const unsigned char *p, *end;
	const void *start;
	struct sample_rec smp;
	struct ms_pdreader *r;
	uint64_t samples = 0, sum = 0, off, expect_off = 0;
	char path[64];
	int fd = make_big_file(false, &want), n;
	size_t len;

	path_of(fd, path);
	r = ms_pdreader_open(path);
	assert_non_null(r);
	while ((n = ms_pdreader_span(r, &start, &len, &off)) > 0) {
		if (expect_off)
			assert_int_equal(off, expect_off);   /* spans follow one another */
		/* Every whole kernel record the span holds, as a plain caller walks it. */
		for (p = start, end = p + len;;) {
			rec = (const void *)p;
			assert_true(rec->size >= 8 && p + rec->size <= end);
			if (rec->type == PERF_RECORD_SAMPLE) {
				assert_int_equal(rec->size, sizeof(smp));
				memcpy(&smp, rec, sizeof(smp));
				samples++;
				sum += smp.addr;
			}
			p += rec->size;
			if (!ms_pdreader_whole((const void *)p, (size_t)(end - p)) ||
			    ((const struct perf_event_header *)p)->type >= 64)
				break;
		}
		ms_pdreader_consume(r, (size_t)(p - (const unsigned char *)start), rec->size);
		expect_off = off + (uint64_t)(p - (const unsigned char *)start);
		if (!(samples % 3) && ms_pdreader_next(r, &rec) > 0) {   /* mix in the one-at-a-time call */
			expect_off += rec->size;
			if (rec->type == PERF_RECORD_SAMPLE) {
				memcpy(&smp, rec, sizeof(smp));
				samples++;
				sum += smp.addr;
			}
		}
	}
	assert_int_equal(n, 0);
	assert_int_equal(samples, want.samples);
	assert_int_equal(sum, want.addr_sum);
	ms_pdreader_free(r);
	close(fd);
}

/*
 * Rounds from one CPU (in order: queued as segments), then from two that
 * overlap (out of order: queue entries, sorted), then empty rounds that
 * drain the queue, then one CPU again. Each one-CPU round starts with
 * samples at the time the round before ended, so a run straddles the
 * flush limit. Every record must come out once, in stable time order.
 */
#define ORD_MAX 20000

struct ordrec { uint64_t time, addr, seq; int kind; };
struct ordseen { struct ordrec *got; size_t n; bool ok; };

static int ord_one(const struct ms_event *ev, void *ctx)
{
	struct ordseen *o = ctx;

	if (o->n >= ORD_MAX || (ev->kind == MS_EV_MAP && strlen(ev->map.name) != NAME_LEN - 1)) {
		o->ok = false;
		return 0;
	}
	o->got[o->n++] = (struct ordrec){ ev->time, ev->kind == MS_EV_SAMPLE ? ev->sample.addr : 0, 0, ev->kind };
	return 0;
}

static int ord_run(const struct ms_samples *run, void *ctx)
{
	struct ms_event tmp;
	size_t i;

	for (i = 0; i < run->n; i++)
		ord_one(ms_samples_event(run, i, &tmp), ctx);
	return 0;
}

static int ord_cmp(const void *a, const void *b)
{
	const struct ordrec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;   /* equal times: file order */
}

static void ordered_rounds_as_segments(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST,
				     .sample_id_all = 1, .mmap2 = 1, .comm = 1 };
	uint64_t id = ID, t = 100, addr = 0, ct[2];
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	char *argv[] = { "test" }, path[64];
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct ordrec *want = calloc(ORD_MAX, sizeof(*want));
	struct ordseen seen = { calloc(ORD_MAX, sizeof(struct ordrec)), 0, true };
	struct ms_stream_stats stats;
	struct ms_pdreader *r;
	struct ms_stream *st;
	struct sample_rec smp;
	size_t nwant = 0, i;
	int fd = memfd_create("ord", 0), k, j, cpu, pass;
	struct ms_pdwriter *w = ms_pdwriter_new(fd, &o);

	assert_non_null(w);
	assert_non_null(want);
	assert_non_null(seen.got);
#define PUT(time_) do { smp = sample((time_), ++addr); ms_pdwriter_write(w, &smp.h); \
			want[nwant] = (struct ordrec){ (time_), addr, nwant, MS_EV_SAMPLE }; nwant++; } while (0)
	for (k = 0; k < 45; k++) {
		if (k < 20 || k >= 30) {          /* one CPU: in order */
			for (j = 0; j < 400; j++) {
				if (j >= 3)               /* the first three share the last round's end */
					t += (uint64_t)(j % 3 != 0);
				PUT(t);
				if (j == 200 && k % 5 == 2) {
					write_comm(w, t);
					want[nwant] = (struct ordrec){ t, 0, nwant, MS_EV_MAP };
					nwant++;
				}
			}
		} else if (k < 27) {              /* two CPUs whose times overlap */
			ct[0] = t + 1;
			ct[1] = t + 2;
			for (cpu = 0; cpu < 2; cpu++)
				for (j = 0; j < 300; j++) {
					ct[cpu] += 2;
					PUT(ct[cpu]);
				}
			t = ct[0] > ct[1] ? ct[0] : ct[1];
		}                                 /* rounds 27-29: empty, the queue drains */
		ms_pdwriter_finish_round(w);
	}
#undef PUT
	assert_true(nwant < ORD_MAX);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	qsort(want, nwant, sizeof(*want), ord_cmp);
	path_of(fd, path);
	for (pass = 0; pass < 2; pass++) {   /* one by one, then in runs */
		seen.n = 0;
		st = stream_of(path, &r, pass ? ord_run : NULL);
		assert_int_equal(stream_file_run(st, ord_one, &seen), 0);
		ms_stream_stats(st, &stats);
		assert_true(seen.ok);
		assert_int_equal(seen.n, nwant);
		for (i = 0; i < nwant; i++) {
			assert_int_equal(seen.got[i].time, want[i].time);
			assert_int_equal(seen.got[i].kind, want[i].kind);
			if (want[i].kind == MS_EV_SAMPLE)
				assert_int_equal(seen.got[i].addr, want[i].addr);
		}
		assert_int_equal(stats.out_of_order, 0);
		assert_int_equal(stats.first_time, 100);
		assert_int_equal(stats.last_time, want[nwant - 1].time);
		ms_stream_free(st);
		ms_pdreader_free(r);
	}
	free(want);
	free(seen.got);
	close(fd);
}

/*
 * A caller that takes the samples it knows from a span in its own pass,
 * and anything else one record at a time, sees every record once, in
 * order, whole; the offset is that of the last record taken.
 */
static void span_takes_known_records_in_one_pass(void **state)
{
	struct bigseen want;
	const struct perf_event_header *rec;
	const unsigned char *p, *end;
	const void *start;
	struct sample_rec smp;
	struct ms_pdreader *r;
	uint64_t samples = 0, sum = 0, others = 0, next_off = 0, off;
	char path[64];
	int fd = make_big_file(false, &want), n;
	size_t len, took, runs = 0;

	(void)state;
	path_of(fd, path);
	r = ms_pdreader_open(path);
	assert_non_null(r);
	while ((n = ms_pdreader_span(r, &start, &len, &off)) > 0) {
		assert_int_equal(off, next_off ? next_off : off);   /* spans follow one another */
		p = start;
		end = p + len;
		/* Whole samples only: a record may be cut at the end of what is buffered. */
		for (took = 0; (size_t)(end - p) >= sizeof(smp); p += sizeof(smp), took++) {
			rec = (const void *)p;
			if (rec->type != PERF_RECORD_SAMPLE || rec->size != sizeof(smp))
				break;
			memcpy(&smp, p, sizeof(smp));
			samples++;
			sum += smp.addr;
		}
		if (took) {
			runs += took > 1;
			len = (size_t)(p - (const unsigned char *)start);
			ms_pdreader_consume(r, len, sizeof(smp));
			assert_int_equal(ms_pdreader_offset(r), off + len - sizeof(smp));
			next_off = off + len;
			continue;
		}
		rec = start;                 /* the first record is whole and checked */
		assert_true(rec->size >= 8 && rec->size <= len);
		others++;
		ms_pdreader_consume(r, rec->size, rec->size);
		assert_int_equal(ms_pdreader_offset(r), off);
		next_off = off + rec->size;
	}
	assert_int_equal(n, 0);
	assert_true(runs > 10);
	assert_int_equal(samples, want.samples);
	assert_int_equal(sum, want.addr_sum);
	assert_int_equal(others, want.comms + BIG_ROUNDS);   /* COMMs and FINISHED_ROUNDs */
	ms_pdreader_free(r);
	close(fd);
}

/* Whether the page holding p is mapped in this process's page table (/proc/self/pagemap's bit 63). */
static bool page_mapped(int pagemap, const void *p)
{
	uint64_t e = 0;

	assert_int_equal(pread(pagemap, &e, 8, (off_t)((uintptr_t)p / 4096 * 8)), 8);
	return e >> 63;
}

/* Writes n page-fault samples (64 bytes apart from 0x10000), as a closed recording, into fd. */
static void write_fault_samples(int fd, int n)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = ST, .sample_id_all = 1 };
	uint64_t id = ID;
	struct ms_pdwriter_evsel e = { &a, "page-faults", &id, 1 };
	char *argv[] = { "test" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct ms_pdwriter *w = ms_pdwriter_new(fd, &o);
	struct sample_rec smp;
	int i;

	assert_non_null(w);
	for (i = 0; i < n; i++) {
		smp = sample(1000 + (uint64_t)i, 0x10000 + 64 * (uint64_t)i);
		assert_int_equal(ms_pdwriter_write(w, &smp.h), 0);
	}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
}

/*
 * A mapped file's pages are mapped ahead of what is read, a MiB or so at
 * a time (one call, not a fault every 64 KiB), and no further: the
 * pages well past it stay unmapped until the reading nears them.
 */
static void mapped_file_paged_in_ahead(void **state)
{
	uint64_t off, took = 0;
	int fd = memfd_create("ahead", 0), pagemap = open("/proc/self/pagemap", O_RDONLY);
	const unsigned char *start;
	struct ms_pdreader *r;
	char path[64];
	size_t len;
	void *probe;

	(void)state;
	probe = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pagemap < 0 || probe == MAP_FAILED || madvise(probe, 4096, MADV_POPULATE_READ)) {
		close(fd);
		skip();                      /* no pagemap, or a kernel before 5.14: pages fault in as they are read */
	}
	munmap(probe, 4096);
	write_fault_samples(fd, 80000);      /* 5.5 MiB of samples */
	path_of(fd, path);
	r = ms_pdreader_open(path);
	assert_non_null(r);
	/*
	 * Reading on a record at a time to 3 MiB in, the half MiB past each
	 * position is mapped (the reader maps a MiB on once less than that is
	 * left), 4 MiB past is not. What lies further than the half MiB is
	 * mapped or not by the kernel's fault-around, which skips a page it
	 * finds locked: a check there failed under a loaded machine.
	 */
	while (took < (3u << 20) && ms_pdreader_span(r, (const void **)&start, &len, &off) > 0) {
		assert_true(len >= (4u << 20) || off + len > (5u << 20));   /* the rest of the map */
		ms_pdreader_consume(r, sizeof(struct sample_rec), sizeof(struct sample_rec));
		took += sizeof(struct sample_rec);
		if (took % (256u << 10) >= sizeof(struct sample_rec))
			continue;
		assert_true(page_mapped(pagemap, start + (512u << 10)));
		if (len > (5u << 20))
			assert_false(page_mapped(pagemap, start + (4u << 20)));
	}
	assert_true(took >= (3u << 20));
	ms_pdreader_free(r);
	close(pagemap);
	close(fd);
}

/*
 * The pages well behind the reading are let go in whole 2 MiB steps of
 * the file, so that a step the page cache holds in one folio is unmapped
 * whole: at every point each step behind is mapped or let go entirely,
 * and the first has gone by the end.
 */
static void dropped_in_whole_2mib_steps(void **state)
{
	int fd = memfd_create("drop", 0), pagemap = open("/proc/self/pagemap", O_RDONLY), n = 0;
	const struct perf_event_header *rec;
	const unsigned char *lo;
	struct ms_pdreader *r;
	uint64_t k;
	const void *l, *hi;
	char path[64];

	(void)state;
	if (pagemap < 0) {
		close(fd);
		skip();                      /* no pagemap to look in */
	}
	write_fault_samples(fd, 100000);     /* 6.9 MiB of samples */
	path_of(fd, path);
	assert_non_null(r = ms_pdreader_open(path));
	ms_pdreader_lasting(r, &l, &hi);
	lo = l;
	while (ms_pdreader_next(r, &rec) > 0) {
		if (++n % 2048)
			continue;
		for (k = 0; k + PMD_BYTES <= (uint64_t)((const unsigned char *)rec - lo); k += PMD_BYTES)
			assert_int_equal(page_mapped(pagemap, lo + k), page_mapped(pagemap, lo + k + PMD_BYTES - 4096));
	}
	assert_int_equal(n, 100000);
	assert_false(page_mapped(pagemap, lo));
	ms_pdreader_free(r);
	close(pagemap);
	close(fd);
}

/*
 * A recording out of the page cache (evicted here; kdamond's pageout, a
 * reboot or a copy elsewhere) is read back in 2 MiB folios, mapped with
 * PMDs: the commands that read it next find it as the writer left it.
 */
static void cold_file_read_in_2mib_folios(void **state)
{
	const struct perf_event_header *rec;
	char name[] = "./cold-XXXXXX", path[64];
	int fd = mkstemp(name);
	struct ms_pdreader *r;
	unsigned long kib;
	bool aligned;
	const void *lo, *hi;
	unsigned char in[8];
	void *m;

	(void)state;
	assert_true(fd >= 0);
	unlink(name);                        /* read through /proc/self/fd: nothing stays behind */
	path_of(fd, path);
	if (!dir_keeps_pmd_folios(".")) {
		fprintf(stderr, "skipped: the file system here keeps no 2 MiB folios (ext4 before 6.16, tmpfs)\n");
		skip();
	}
	write_fault_samples(fd, 60000);      /* 4.1 MiB of samples */
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	m = mmap(NULL, 8 * 4096, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, 8 * 4096, in), 0);
	munmap(m, 8 * 4096);
	if (in[0] & 1) {
		fprintf(stderr, "skipped: the page cache kept the file's first page after POSIX_FADV_DONTNEED\n");
		skip();
	}
	assert_non_null(r = ms_pdreader_open(path));
	assert_int_equal(ms_pdreader_next(r, &rec), 1);
	ms_pdreader_lasting(r, &lo, &hi);
	aligned = !((uintptr_t)lo & (PMD_BYTES - 1));
	kib = file_pmd_kib(lo);
	ms_pdreader_free(r);
	close(fd);
	if (!aligned) {
		fprintf(stderr, "skipped: this file system maps files at no 2 MiB boundary\n");
		skip();
	}
	/* A probe that fails now too says memory had no 2 MiB to give. */
	if (kib < PMD_BYTES / 1024 && !dir_keeps_pmd_folios(".")) {
		fprintf(stderr, "skipped: no 2 MiB folio to be had just now (memory fragmented)\n");
		skip();
	}
	assert_true(kib >= PMD_BYTES / 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_rounds_across_blocks),
		cmocka_unit_test(offset_read_on_another_thread),
		cmocka_unit_test(plain_reading_across_blocks),
		cmocka_unit_test(span_takes_known_records_in_one_pass),
		cmocka_unit_test(mapped_file_paged_in_ahead),
		cmocka_unit_test(cold_file_read_in_2mib_folios),
		cmocka_unit_test(dropped_in_whole_2mib_steps),
		cmocka_unit_test(ordered_rounds_as_segments),
		cmocka_unit_test(samples_in_runs_as_one_by_one),
		cmocka_unit_test(fixed_layouts_decode_each_field),
		cmocka_unit_test(orders_across_cpus),
		cmocka_unit_test(reads_pipe_mode_from_file_and_pipe),
		cmocka_unit_test(lasting_bytes_of_a_file_not_a_pipe),
		cmocka_unit_test(pipe_feature_record_padded_to_4),
		cmocka_unit_test(truncated_file_keeps_records_before),
		cmocka_unit_test(corrupt_record_size),
		cmocka_unit_test(not_perf_data),
		cmocka_unit_test(old_attr_layout),
		cmocka_unit_test(survives_mutations),
	};
	ms_log_set(on_log, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
