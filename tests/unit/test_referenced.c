/*
 * mapscope:vma_referenced, from a recording to the analyses: samples as
 * record --referenced writes them (kernel/refsample.h), their format in
 * the tracing data, decoded into MS_EV_ACCESS with every field, and
 * charged by the model to the regions they overlap at their instant: a
 * range over two regions once to each, a range where nothing is mapped
 * to none, a range over an unmapped region's old place to nothing of it.
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

#include <mapscope/pdwriter.h>
#include <mapscope/session.h>

#include "kernel/refsample.h"
#include "kernel/tracefs.h"
#include "fake_tracefs.h"
#include "records.h"

#define P 4096ULL
#define A 0x10000000ULL
#define PID 7
#define FAULT_ID 100
#define TP 0xfffe
#define FAULT_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

static char root[] = "/tmp/ms-referenced-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return fake_tracefs_new(root);
}

static int teardown(void **state)
{
	(void)state;
	return fake_remove(root);
}

struct rec {
	struct ms_pdwriter *w;
	int fd;
	struct perf_event_attr fa, ra;
	struct ms_buf td;
};

/* A file with the page-fault event (its maps) and mapscope:vma_referenced, its format in the tracing data. */
static void rec_open(struct rec *r)
{
	static const uint64_t fid = FAULT_ID, rid = MS_REFERENCED_ID;
	static char *argv[] = { "test" };
	struct ms_pdwriter_evsel ev[2];
	struct ms_pdwriter_opts o = { ev, 2, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	struct ms_buf base, fmt;

	memset(r, 0, sizeof(*r));
	r->fa = (struct perf_event_attr){ .size = sizeof(r->fa), .type = PERF_TYPE_SOFTWARE,
					  .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = FAULT_TYPE,
					  .sample_id_all = 1, .mmap = 1, .mmap2 = 1, .mmap_data = 1, .task = 1 };
	ms_referenced_attr(TP, &r->ra);
	ev[0] = (struct ms_pdwriter_evsel){ &r->fa, "page-faults", &fid, 1 };
	ev[1] = (struct ms_pdwriter_evsel){ &r->ra, MS_REFERENCED_NAME, &rid, 1 };
	ms_buf_init(&base);
	ms_buf_init(&fmt);
	ms_buf_init(&r->td);
	assert_int_equal(ms_tracefs_tracing_data(root, NULL, 0, &base), 0);
	ms_referenced_format(TP, &fmt);
	assert_int_equal(ms_tracefs_add_system(base.data, base.len, MS_REFERENCED_SYS, fmt.data, fmt.len, &r->td), 0);
	o.tracing_data = r->td.data;
	o.tracing_data_len = r->td.len;
	r->fd = memfd_create("referenced", 0);
	assert_true(r->fd >= 0);
	r->w = ms_pdwriter_new(r->fd, &o);
	assert_non_null(r->w);
	ms_buf_release(&base);
	ms_buf_release(&fmt);
}

static void put_map(struct rec *r, uint64_t t, uint64_t start, uint64_t len)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, PID, PID, start, len, 0,
			       0, 0, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon", PID, PID, t, FAULT_ID,
			       0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &m.h), 0);
}

static void put_ref(struct rec *r, uint64_t t, uint64_t start, uint64_t end, uint64_t referenced)
{
	struct ms_referenced v = { .pid = PID, .time = t, .start = start, .end = end, .interval_ns = 50000000,
				   .referenced = referenced, .rss = end - start, .anon = end - start - P,
				   .anon_huge = 0 };
	struct ms_referenced_record rec;

	ms_referenced_encode(&v, TP, &rec);
	assert_int_equal(ms_pdwriter_write(r->w, (const void *)&rec), 0);
}

/* What the analysis heard: each access event, and each charge of one. */
struct heard {
	struct ms_event ev[8];
	int nev;
	struct { uint64_t time, start, end; int64_t region; } ch[16];
	int nch;
};

static int on_event(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct heard *h = ctx;

	(void)s;
	if (ev->kind == MS_EV_ACCESS && h->nev < 8)
		h->ev[h->nev++] = *ev;
	return 0;
}

static void on_access(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end)
{
	struct heard *h = ctx;

	if (h->nch < 16)
		h->ch[h->nch++] = (typeof(h->ch[0])){ ev->time, start, end, r ? (int64_t)r->id : -1 };
}

static const struct ms_analysis listener = { .name = "test", .event = on_event, .access = on_access };

static void replay(struct rec *r, struct heard *h)
{
	struct ms_session *s;
	char path[64];

	assert_int_equal(ms_pdwriter_close(r->w), 0);
	ms_pdwriter_free(r->w);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	s = ms_session_open(path, NULL);
	assert_non_null(s);
	memset(h, 0, sizeof(*h));
	assert_int_equal(ms_session_add(s, &listener, h), 0);
	assert_int_equal(ms_session_run(s), 0);
	ms_session_free(s);
	close(r->fd);
	ms_buf_release(&r->td);
}

/* Every field of the tracepoint comes back, and the event is its process's. */
static void decodes_every_field(void **state)
{
	struct heard h;
	struct rec r;

	(void)state;
	rec_open(&r);
	put_map(&r, 100, A, 8 * P);
	put_ref(&r, 200, A, A + 8 * P, 3 * P);
	replay(&r, &h);
	assert_int_equal(h.nev, 1);
	assert_int_equal(h.ev[0].kind, MS_EV_ACCESS);
	assert_int_equal(h.ev[0].pid, PID);
	assert_int_equal(h.ev[0].time, 200);
	assert_int_equal(h.ev[0].access.source, MS_ACCESS_REFERENCED);
	assert_int_equal(h.ev[0].access.start, A);
	assert_int_equal(h.ev[0].access.end, A + 8 * P);
	assert_int_equal(h.ev[0].access.interval_ns, 50000000);
	assert_int_equal(h.ev[0].access.referenced, 3 * P);
	assert_int_equal(h.ev[0].access.rss, 8 * P);
	assert_int_equal(h.ev[0].access.anon, 7 * P);
	assert_int_equal(h.ev[0].access.anon_huge, 0);
	assert_int_equal(h.nch, 1);
	assert_int_equal(h.ch[0].start, A);
	assert_int_equal(h.ch[0].end, A + 8 * P);
	assert_true(h.ch[0].region >= 0);
}

/*
 * Two regions side by side (one kernel VMA, merged): a range over both is
 * charged to each for its part; a range where nothing is mapped, to none;
 * a range partly past the last map, to the region and then to none.
 */
static void charges_the_regions_it_overlaps(void **state)
{
	struct heard h;
	struct rec r;

	(void)state;
	rec_open(&r);
	put_map(&r, 100, A, 4 * P);
	put_map(&r, 110, A + 4 * P, 4 * P);
	put_ref(&r, 200, A + 2 * P, A + 6 * P, 2 * P);
	put_ref(&r, 200, A + 10 * P, A + 12 * P, P);
	put_ref(&r, 300, A + 6 * P, A + 10 * P, P);
	replay(&r, &h);
	assert_int_equal(h.nev, 3);
	assert_int_equal(h.nch, 5);
	assert_int_equal(h.ch[0].start, A + 2 * P);
	assert_int_equal(h.ch[0].end, A + 4 * P);
	assert_int_equal(h.ch[1].start, A + 4 * P);
	assert_int_equal(h.ch[1].end, A + 6 * P);
	assert_true(h.ch[0].region >= 0 && h.ch[1].region >= 0 && h.ch[0].region != h.ch[1].region);
	assert_int_equal(h.ch[2].region, -1);
	assert_int_equal(h.ch[2].start, A + 10 * P);
	assert_int_equal(h.ch[2].end, A + 12 * P);
	assert_int_equal(h.ch[3].region, h.ch[1].region);
	assert_int_equal(h.ch[3].start, A + 6 * P);
	assert_int_equal(h.ch[3].end, A + 8 * P);
	assert_int_equal(h.ch[4].region, -1);
	assert_int_equal(h.ch[4].start, A + 8 * P);
	assert_int_equal(h.ch[4].end, A + 10 * P);
}

/* A sample whose range is empty or backwards is damage: dropped, not charged. */
static void drops_a_backward_range(void **state)
{
	struct heard h;
	struct rec r;

	(void)state;
	rec_open(&r);
	put_map(&r, 100, A, 4 * P);
	put_ref(&r, 200, A + 4 * P, A, P);
	replay(&r, &h);
	assert_int_equal(h.nev, 0);
	assert_int_equal(h.nch, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_every_field),
		cmocka_unit_test(charges_the_regions_it_overlaps),
		cmocka_unit_test(drops_a_backward_range),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
