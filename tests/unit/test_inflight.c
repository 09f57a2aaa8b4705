/*
 * The holes of calls in flight (lib/stream/inflight.c): a store cuts them
 * (in two, from either side, or whole), only in its own process; they are
 * dropped by thread or by process; an unmapping exit turns its thread's
 * holes, and only its thread's, into unmaps in the order written; a hole
 * that overlaps or touches one of its thread's joins it; a file that
 * writes NULL without end holds a bounded number.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/internal.h"

#define P 4096ULL

static struct ms_event got[8];
static size_t nr_got;

static int keep(const struct ms_event *ev, void *ctx)
{
	(void)ctx;
	if (nr_got < 8)
		got[nr_got] = *ev;
	nr_got++;
	return 0;
}

static void note(struct ms_stream *s, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end)
{
	struct ms_sample smp = { .pid = pid, .tid = tid, .time = 5 };

	assert_int_equal(stream_hole_note(s, &smp, start, end), 0);
}

static void assert_hole(const struct ms_stream *s, size_t i, uint32_t tid, uint64_t start, uint64_t end)
{
	assert_true(i < s->nr_holes);
	assert_int_equal(s->holes[i].tid, tid);
	assert_int_equal(s->holes[i].start, start);
	assert_int_equal(s->holes[i].end, end);
}

static void cuts(void **state)
{
	struct ms_stream s;

	(void)state;
	memset(&s, 0, sizeof(s));
	note(&s, 1, 10, 0, 10 * P);
	note(&s, 1, 11, 20 * P, 30 * P);
	note(&s, 2, 20, 0, 10 * P);
	assert_int_equal(stream_holes_cut(&s, 1, 4 * P, 6 * P), 0);      /* the middle: two holes */
	assert_int_equal(s.nr_holes, 4);
	assert_hole(&s, 0, 10, 0, 4 * P);
	assert_hole(&s, 1, 10, 6 * P, 10 * P);
	assert_hole(&s, 2, 11, 20 * P, 30 * P);
	assert_hole(&s, 3, 20, 0, 10 * P);                               /* another process's: untouched */
	assert_int_equal(stream_holes_cut(&s, 1, 0, P), 0);              /* from the left */
	assert_hole(&s, 0, 10, P, 4 * P);
	assert_int_equal(stream_holes_cut(&s, 1, 28 * P, 40 * P), 0);    /* from the right */
	assert_hole(&s, 2, 11, 20 * P, 28 * P);
	assert_int_equal(stream_holes_cut(&s, 1, 5 * P, 11 * P), 0);     /* the whole of one */
	assert_int_equal(s.nr_holes, 3);
	assert_hole(&s, 0, 10, P, 4 * P);
	assert_hole(&s, 1, 11, 20 * P, 28 * P);
	assert_int_equal(stream_holes_cut(&s, 1, 4 * P, 20 * P), 0);     /* touching both ends: no change */
	assert_int_equal(s.nr_holes, 3);
	free(s.holes);
}

static void drops_and_unmaps(void **state)
{
	struct ms_sample smp = { .pid = 1, .tid = 10, .time = 9 };
	struct ms_stream s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.fn = keep;
	note(&s, 1, 10, 0, P);
	note(&s, 1, 11, 4 * P, 5 * P);
	note(&s, 1, 10, 2 * P, 3 * P);
	note(&s, 2, 20, 0, P);
	note(&s, 3, 30, 0, P);
	stream_holes_drop(&s, 3, 0);                                      /* a process's, every thread's */
	assert_int_equal(s.nr_holes, 4);
	nr_got = 0;
	assert_int_equal(stream_holes_unmap(&s, &smp), 0);
	assert_int_equal(nr_got, 2);
	assert_int_equal(got[0].kind, MS_EV_UNMAP);
	assert_int_equal(got[0].pid, 1);
	assert_int_equal(got[0].tid, 10);
	assert_int_equal(got[0].time, 9);                                 /* at the exit */
	assert_int_equal(got[0].unmap.start, 0);
	assert_int_equal(got[0].unmap.end, P);
	assert_int_equal(got[1].unmap.start, 2 * P);
	assert_int_equal(s.nr_holes, 2);
	assert_hole(&s, 0, 11, 4 * P, 5 * P);
	stream_holes_drop(&s, 1, 11);
	assert_int_equal(s.nr_holes, 1);
	assert_hole(&s, 0, 20, 0, P);
	free(s.holes);
}

/* A file that writes NULL without end holds no more than a bounded number of holes. */
static void bounded(void **state)
{
	struct ms_stream s;
	uint64_t i;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (i = 0; i < 100000; i++)
		note(&s, 1, 10, 2 * i * P, (2 * i + 1) * P);
	assert_true(s.nr_holes >= 64 && s.nr_holes <= 4096);
	assert_hole(&s, 0, 10, 0, P);                                     /* the first ones are kept */
	free(s.holes);
}

/*
 * A thread that never makes a followed call and tears down an AIO
 * context again and again: io_setup maps the ring at the top of the gap
 * (a store, cutting the hole's top), io_destroy writes NULL over the gap
 * again. Holes that overlap or touch one of their thread's join it: one
 * hole, not one a round (which would fill the bound, and another
 * thread's call in flight would go unheld), and its unmap is the gap.
 */
static void joins(void **state)
{
	struct ms_sample smp = { .pid = 1, .tid = 10, .time = 9 };
	struct ms_stream s;
	int k;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.fn = keep;
	note(&s, 1, 11, 0, 12 * P);                                       /* another thread's */
	for (k = 0; k < 5000; k++) {
		note(&s, 1, 10, 0, 12 * P);
		assert_int_equal(stream_holes_cut(&s, 1, 11 * P, 12 * P), 0);
	}
	assert_int_equal(s.nr_holes, 2);
	assert_hole(&s, 0, 11, 0, 11 * P);
	assert_hole(&s, 1, 10, 0, 11 * P);
	note(&s, 1, 12, 40 * P, 41 * P);                                  /* a third thread's, held */
	note(&s, 1, 10, 11 * P, 14 * P);                                  /* touching */
	note(&s, 1, 10, 20 * P, 21 * P);                                  /* apart */
	assert_int_equal(s.nr_holes, 4);
	assert_hole(&s, 1, 12, 40 * P, 41 * P);
	assert_hole(&s, 2, 10, 0, 14 * P);
	nr_got = 0;
	assert_int_equal(stream_holes_unmap(&s, &smp), 0);
	assert_int_equal(nr_got, 2);
	assert_int_equal(got[0].unmap.start, 0);
	assert_int_equal(got[0].unmap.end, 14 * P);
	assert_int_equal(got[1].unmap.start, 20 * P);
	free(s.holes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuts),
		cmocka_unit_test(drops_and_unmaps),
		cmocka_unit_test(bounded),
		cmocka_unit_test(joins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
