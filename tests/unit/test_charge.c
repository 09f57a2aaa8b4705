/* Charging samples: runs charged whole count what samples charged one by one do. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/aspace.h>

#include "runs.h"

#include "aspace_events.h"

#define NR_EVS 5900

/*
 * The first events, for one run: the maps; samples that make a piece the
 * quick one, a change to that piece, and samples in it again; then a
 * thread's first sample in a piece the main thread just used (the
 * thread's stack gets named). Returns how many.
 */
static size_t script_start(struct ms_event *evs)
{
	size_t n = 0, k;

	evs[n++] = map_ev(PID, 100 * P, 200 * P, "//anon");
	evs[n++] = map_ev(PID, 300 * P, 400 * P, "/lib/x.so");
	evs[n++] = map_ev(PID, 500 * P, 600 * P, "//anon");       /* a thread's stack, named by SP */
	evs[n++] = map_ev(PID, 1000 * P, 1032 * P, "[stack]");
	evs[n++] = map_ev(PID + 1, 100 * P, 150 * P, "//anon");
	for (k = 0; k < 10; k++)
		evs[n++] = sample_ev(PID, PID, 360 * P + k * 8);
	evs[n] = ev(MS_EV_UNMAP);
	evs[n].unmap.start = 350 * P;
	evs[n++].unmap.end = 400 * P;
	evs[n++] = sample_ev(PID, PID, 370 * P);        /* unmapped now */
	evs[n++] = sample_ev(PID, PID, 320 * P);
	evs[n++] = sample_ev(PID, PID, 321 * P);
	evs[n++] = map_ev(PID, 350 * P, 400 * P, "//anon");
	evs[n++] = sample_ev(PID, PID, 370 * P);        /* the new region */
	evs[n++] = sample_ev(PID, PID, 510 * P);
	evs[n++] = sample_ev(PID, PID, 511 * P);
	evs[n] = sample_ev(PID, PID + 7, 520 * P);
	evs[n].sample.has_sp = true;
	evs[n++].sample.sp = 590 * P;
	return n;
}

/* One cluster of samples of kind c (0-99, from rand()) at evs[n]: returns the new n. */
static size_t script_cluster(struct ms_event *evs, size_t n, int c)
{
	size_t k;

	for (k = 0; k < 1 + (size_t)(rand() % 150) && n < NR_EVS; k++) {
		evs[n] = ev(MS_EV_SAMPLE);
		evs[n].sample.has_addr = true;
		if (c < 60)
			evs[n].sample.addr = (100 + (uint64_t)(rand() % 100)) * P;
		else if (c < 75)
			evs[n].sample.addr = (300 + (uint64_t)(rand() % 100)) * P;
		else if (c < 82)
			evs[n].sample.addr = (uint64_t)(rand() % 50) * P;   /* unmapped */
		else if (c < 90) {
			evs[n].pid = evs[n].tid = PID + 1;
			evs[n].sample.addr = (100 + (uint64_t)(rand() % 60)) * P;
		} else {                     /* a thread, its SP in its stack */
			evs[n].tid = PID + 7;
			evs[n].sample.has_sp = true;
			evs[n].sample.sp = 590 * P;
			evs[n].sample.addr = (500 + (uint64_t)(rand() % 100)) * P;
		}
		n++;
	}
	return n;
}

/* Then, up to NR_EVS: clusters of samples, changes mid-run, stack faults before their growth. */
static size_t script_random(struct ms_event *evs, size_t n)
{
	uint64_t stack_lo = 1000 * P;
	int c;

	srand(7);
	while (n < NR_EVS) {
		c = rand() % 100;
		if (c < 2) {                     /* the model changes mid-run */
			evs[n] = ev(rand() % 2 ? MS_EV_UNMAP : MS_EV_MAP);
			if (evs[n].kind == MS_EV_UNMAP) {
				evs[n].unmap.start = 350 * P;
				evs[n].unmap.end = 400 * P;
			} else
				evs[n] = map_ev(PID, 350 * P, 400 * P, "//anon");
			n++;
		} else if (c < 4) {              /* a stack fault, then the growth the kernel records */
			stack_lo -= P;
			evs[n] = ev(MS_EV_SAMPLE);
			evs[n].sample.addr = stack_lo + 8;
			evs[n++].sample.has_addr = true;
			evs[n++] = map_ev(PID, stack_lo, 1032 * P, "[stack]");
		} else
			n = script_cluster(evs, n, c);
	}
	return n;
}

/* The same charges, in the same order, and the same regions, named the same (the thread's stack among them). */
static void same_outcome(const struct heard *a, const struct heard *b, struct ms_aspace *one, struct ms_aspace *run)
{
	const struct ms_region *ra, *rb;
	size_t i;

	assert_int_equal(b->n, a->n);
	for (i = 0; i < (size_t)a->n; i++) {
		assert_int_equal(b->time[i], a->time[i]);
		assert_int_equal(b->id[i], a->id[i]);
	}
	assert_int_equal(ms_aspace_nr_regions(run), ms_aspace_nr_regions(one));
	for (i = 0; i < ms_aspace_nr_regions(one); i++) {
		ra = ms_aspace_region(one, i);
		rb = ms_aspace_region(run, i);
		assert_string_equal(rb->name, ra->name);
		assert_int_equal(rb->kind, ra->kind);
		assert_int_equal(rb->start, ra->start);
		assert_int_equal(rb->end, ra->end);
	}
}

/*
 * Runs of samples through ms_aspace_apply_run charge exactly what one call
 * per event does, in the same order: clustered samples, other processes,
 * thread stacks named by SP, unmapped addresses, a stack fault that waits
 * for its growth record, and maps and unmaps in the middle of runs.
 */
static void runs_charge_as_one_by_one(void **state)
{
	static struct ms_event evs[NR_EVS + 2];
	static struct heard a, b, c2;
	struct ms_aspace *one = ms_aspace_new(), *run = ms_aspace_new(), *pairs = ms_aspace_new();
	struct ms_aspace_listener la = { .charge = heard_one };
	struct ms_aspace_listener lb = { .charge = heard_one, .charge_run = heard_run };
	size_t n, i, first;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c2, 0, sizeof(c2));
	ms_aspace_set_listener(one, &la, &a);
	ms_aspace_set_listener(run, &lb, &b);
	ms_aspace_set_listener(pairs, &lb, &c2);
	first = script_start(evs);
	n = script_random(evs, first);
	for (i = 0; i < first; i++)
		assert_int_equal(ms_aspace_apply(one, &evs[i], NULL), 0);
	assert_int_equal(ms_aspace_apply_run(run, evs, first), 0);
	assert_string_equal(ms_aspace_lookup(one, PID, 510 * P)->name, "[stack:107]");
	assert_string_equal(ms_aspace_lookup(run, PID, 510 * P)->name, "[stack:107]");
	apply_in_runs(one, evs + first, n - first, 0);
	apply_in_runs(run, evs + first, n - first, 200);    /* runs of every length, some over 64 */
	/*
	 * Runs of two: a run often ends with a sample whose piece the one
	 * before it made the quick one, and that last sample is charged too.
	 */
	for (i = 0; i < n; i += 2)
		assert_int_equal(ms_aspace_apply_run(pairs, evs + i, n - i < 2 ? n - i : 2), 0);
	ms_aspace_finish(one);
	ms_aspace_finish(run);
	ms_aspace_finish(pairs);
	assert_true(a.n > 5000);
	assert_true(b.runs > 0);
	assert_string_equal(ms_aspace_lookup(one, PID, 510 * P)->name, "[stack:107]");
	same_outcome(&a, &b, one, run);
	same_outcome(&a, &c2, one, pairs);
	ms_aspace_free(one);
	ms_aspace_free(run);
	ms_aspace_free(pairs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_charge_as_one_by_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
