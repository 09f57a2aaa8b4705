/*
 * The ordering on its own (lib/stream/ordered.c): records queued out of
 * order come out sorted and stable, up to the limit asked for; runs
 * queued as segments are cut where the limit falls; a record out of order
 * turns the segments back into a queue; what is left after an in-order
 * flush becomes segments again; copies outlive the caller's bytes.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/ordered.h"

/* A record with its time at byte 8 and a sequence number after it. */
struct rec {
	struct perf_event_header h;
	uint64_t time;
	uint64_t seq;
};

static void make(struct rec *r, uint64_t time, uint64_t seq)
{
	*r = (struct rec){ { PERF_RECORD_SAMPLE, 0, sizeof(*r) }, time, seq };
}

static bool is_sample(void *ctx, const struct perf_event_header *h)
{
	(void)ctx;
	return h->type == PERF_RECORD_SAMPLE;
}

static uint64_t seq_at(const struct ms_ordered *o, size_t i)
{
	return ((const struct rec *)ms_ordered_at(o, i)->rec)->seq;
}

/*
 * Two "CPUs", each in order, queued one after the other with times that
 * interleave, and ties between them: sorted by time, the first CPU's
 * record before the second's at a tie (queued order), cut at the limit.
 */
static void two_runs_merge_stable(void **state)
{
	static struct rec r[200];
	struct ms_ordered o;
	bool in_order;
	size_t i, n;

	(void)state;
	ms_ordered_init(&o, false);
	for (i = 0; i < 100; i++)
		make(&r[i], 2 * i, i);                   /* times 0, 2, 4 ... 198 */
	for (i = 0; i < 100; i++)
		make(&r[100 + i], i % 2 ? i - 1 : i, 100 + i);   /* 0, 0, 2, 2 ...: ties with the first */
	for (i = 0; i < 200; i++)
		assert_int_equal(ms_ordered_queue(&o, &r[i].h, r[i].time), 0);
	assert_int_equal(o.max_time, 198);
	n = ms_ordered_sort_upto(&o, 99, &in_order);
	assert_false(in_order);
	/* times <= 99: 50 of the first (0..98), all 100 of the second but those above 99 (i = 99 is 99) */
	assert_int_equal(n, 50 + 100);
	for (i = 1; i < n; i++)
		assert_true(ms_ordered_at(&o, i - 1)->time <= ms_ordered_at(&o, i)->time);
	/* at a tie, queued order: time 2 is the first's r[1] (seq 1), then the second's seq 102, 103 */
	for (i = 0; i + 1 < n; i++)
		if (ms_ordered_at(&o, i)->time == ms_ordered_at(&o, i + 1)->time)
			assert_true(seq_at(&o, i) < seq_at(&o, i + 1));
	assert_int_equal(ms_ordered_drop(&o, n, in_order, 99), 0);
	assert_int_equal(o.nq, 50);
	n = ms_ordered_sort_upto(&o, UINT64_MAX, &in_order);
	assert_true(in_order);                           /* sorted by the flush before */
	assert_int_equal(n, 50);
	assert_int_equal(ms_ordered_at(&o, 0)->time, 100);
	assert_int_equal(ms_ordered_at(&o, 49)->time, 198);
	ms_ordered_release(&o);
}

/* A ring that wraps and grows keeps every record once, in time order. */
static void ring_wraps_and_grows(void **state)
{
	struct rec *r = calloc(30000, sizeof(*r));
	struct ms_ordered o;
	uint64_t want = 0;
	bool in_order;
	size_t i, n, k, total = 0;

	(void)state;
	assert_non_null(r);
	ms_ordered_init(&o, false);
	for (k = 0; k < 3; k++) {
		/* 10,000 a round, reversed in blocks of 7: each round sorted whole */
		for (i = 0; i < 10000; i++) {
			n = k * 10000 + (i / 7) * 7 + (6 - i % 7);
			n = n >= (k + 1) * 10000 ? k * 10000 + i : n;
			make(&r[k * 10000 + i], n, n);
			assert_int_equal(ms_ordered_queue(&o, &r[k * 10000 + i].h, n), 0);
		}
		n = ms_ordered_sort_upto(&o, k * 10000 + 4999, &in_order);
		for (i = 0; i < n; i++, want++)
			assert_int_equal(ms_ordered_at(&o, i)->time, want);
		total += n;
		assert_int_equal(ms_ordered_drop(&o, n, in_order, want - 1), 0);
	}
	n = ms_ordered_sort_upto(&o, UINT64_MAX, &in_order);
	for (i = 0; i < n; i++, want++)
		assert_int_equal(ms_ordered_at(&o, i)->time, want);
	assert_int_equal(total + n, 30000);
	ms_ordered_release(&o);
	free(r);
}

/* A run queued as a segment goes out in pieces cut at each limit. */
static void segments_cut_at_the_limit(void **state)
{
	static struct rec r[100];
	struct ms_ordered o;
	struct seg g;
	size_t i;

	(void)state;
	for (i = 0; i < 100; i++)
		make(&r[i], 10 * i, i);
	ms_ordered_init(&o, false);
	ms_ordered_set_runs(&o, sizeof(struct rec), 8, is_sample, NULL);
	ms_ordered_use_segments(&o);
	assert_true(o.seg_mode);
	assert_int_equal(ms_ordered_seg_push(&o, (const void *)r, 100, 0, 990, true), 0);
	assert_int_equal(ms_ordered_seg_pop(&o, 255, &g), 1);
	assert_int_equal(g.n, 26);                       /* times 0 ... 250 */
	assert_ptr_equal(g.p, (const void *)r);
	assert_int_equal(g.last, 250);
	assert_int_equal(ms_ordered_seg_pop(&o, 255, &g), 0);
	assert_int_equal(ms_ordered_seg_pop(&o, 990, &g), 1);
	assert_int_equal(g.n, 74);
	assert_int_equal(g.first, 260);
	assert_ptr_equal(g.p, (const void *)&r[26]);
	assert_int_equal(ms_ordered_seg_pop(&o, UINT64_MAX, &g), 0);
	ms_ordered_release(&o);
}

/*
 * Records in order join the segments; one out of order turns them into
 * queue entries, sorted with it; a flush that came in order leaves the
 * rest as segments again, adjacent samples joined into one run.
 */
static void back_and_forth_between_segments_and_queue(void **state)
{
	static struct rec r[10];
	struct ms_ordered o;
	bool in_order;
	struct seg g;
	size_t i, n;

	(void)state;
	for (i = 0; i < 10; i++)
		make(&r[i], 100 + 10 * i, i);
	r[5].time = 105;                                 /* out of order */
	ms_ordered_init(&o, false);
	ms_ordered_set_runs(&o, sizeof(struct rec), 8, is_sample, NULL);
	ms_ordered_use_segments(&o);
	for (i = 0; i < 5; i++)
		assert_int_equal(ms_ordered_queue(&o, &r[i].h, r[i].time), 0);
	assert_true(o.seg_mode);
	assert_int_equal(o.nseg, 5);
	assert_int_equal(ms_ordered_queue(&o, &r[5].h, r[5].time), 0);
	assert_false(o.seg_mode);
	for (i = 6; i < 10; i++)
		assert_int_equal(ms_ordered_queue(&o, &r[i].h, r[i].time), 0);
	n = ms_ordered_sort_upto(&o, 120, &in_order);
	assert_int_equal(n, 4);                          /* 100, 105, 110, 120 */
	assert_int_equal(seq_at(&o, 1), 5);
	assert_int_equal(ms_ordered_drop(&o, n, true, 120), 0);
	assert_true(o.seg_mode);
	assert_int_equal(o.nseg, 2);                     /* r[5] went out: r[4] and r[6] are apart */
	assert_int_equal(ms_ordered_seg_pop(&o, UINT64_MAX, &g), 1);
	assert_int_equal(g.n, 2);                        /* r[3], r[4] one run */
	assert_ptr_equal(g.p, (const void *)&r[3]);
	assert_int_equal(ms_ordered_seg_pop(&o, UINT64_MAX, &g), 1);
	assert_int_equal(g.n, 4);                        /* r[6] ... r[9] */
	assert_int_equal(g.last, 190);
	ms_ordered_release(&o);
}

/* With copy, what was queued survives the caller's bytes being written over. */
static void copies_outlive_the_callers_bytes(void **state)
{
	struct ms_ordered o;
	struct rec r;
	bool in_order;
	size_t i, n;

	(void)state;
	ms_ordered_init(&o, true);
	for (i = 0; i < 1000; i++) {
		make(&r, 1000 - i, i);
		assert_int_equal(ms_ordered_queue(&o, &r.h, r.time), 0);
		memset(&r, 0xff, sizeof(r));
	}
	n = ms_ordered_sort_upto(&o, UINT64_MAX, &in_order);
	assert_int_equal(n, 1000);
	for (i = 0; i < n; i++) {
		assert_int_equal(((const struct rec *)ms_ordered_at(&o, i)->rec)->time, i + 1);
		assert_int_equal(seq_at(&o, i), 999 - i);
	}
	assert_int_equal(ms_ordered_drop(&o, n, in_order, 1000), 0);
	ms_ordered_recycle(&o);
	assert_null(o.arena_cur);
	assert_non_null(o.spare);                        /* kept to be used again, not freed */
	ms_ordered_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_runs_merge_stable),
		cmocka_unit_test(ring_wraps_and_grows),
		cmocka_unit_test(segments_cut_at_the_limit),
		cmocka_unit_test(back_and_forth_between_segments_and_queue),
		cmocka_unit_test(copies_outlive_the_callers_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
