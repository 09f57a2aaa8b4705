/*
 * The perms of the memory a region's samples touched: a reservation made
 * PROT_NONE and committed rw- in part keeps its identity, and its samples
 * say rw-; a part made r-- later is counted apart, with its first time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aspace_events.h"
#include "analysis/touched.h"

#define BASE 0x10000000ULL

static void forward(void *ctx, const struct ms_event *s, const struct ms_region *r)
{
	ms_touched_analysis.charge(ctx, s, r);
}

/* t counting the samples of model as, as a session would have it. */
static void bind_both(struct ms_touched *t, struct ms_aspace *as, struct ms_aspace_listener *l)
{
	assert_non_null(as);
	assert_non_null(t);
	ms_touched_bind(t, as);
	ms_aspace_set_listener(as, l, t);
}

static void perms_of_touched_memory(void **state)
{
	struct ms_aspace_listener l = { .charge = forward };
	struct ms_aspace *as = ms_aspace_new();
	struct ms_touched *t = ms_touched_new();
	struct ms_touched_stat st;
	const struct ms_region *r;
	uint64_t t_rw, t_none, t_r;
	int kinds;

	(void)state;
	bind_both(t, as, &l);
	map(as, BASE, BASE + 64 * P, "");
	protect(as, BASE, BASE + 64 * P, PROT_NONE);
	protect(as, BASE, BASE + 4 * P, RW);
	t_rw = now;
	sample(as, BASE);
	sample(as, BASE + P);
	sample(as, BASE + 3 * P);
	t_none = now;
	sample(as, BASE + 10 * P);        /* a PROT_NONE page: charged, and said so */
	protect(as, BASE + 20 * P, BASE + 21 * P, PROT_READ);
	t_r = now;
	sample(as, BASE + 20 * P);        /* a third protection: no longer inline */
	sample(as, BASE + 2 * P);
	r = ms_aspace_lookup(as, PID, BASE);
	assert_non_null(r);
	assert_int_equal(r->prot, PROT_NONE);               /* the region's first page... */
	assert_ptr_equal(ms_aspace_lookup(as, PID, BASE + 20 * P), r);    /* ...and one region */
	assert_true(ms_touched_region(t, r->id, &st));
	assert_int_equal(st.samples[RW], 4);
	assert_int_equal(st.first_ns[RW], t_rw);
	assert_int_equal(st.samples[PROT_NONE], 1);
	assert_int_equal(st.first_ns[PROT_NONE], t_none);
	assert_int_equal(st.samples[PROT_READ], 1);
	assert_int_equal(st.first_ns[PROT_READ], t_r);
	assert_int_equal(ms_touched_main_prot(&st, &kinds), RW);
	assert_int_equal(kinds, 3);
	ms_touched_free(t);
	ms_aspace_free(as);
}

/* One or two protections (the rule), each with its own count and first time, in two regions. */
static void one_or_two_perms(void **state)
{
	struct ms_aspace_listener l = { .charge = forward };
	struct ms_aspace *as = ms_aspace_new();
	struct ms_touched *t = ms_touched_new();
	struct ms_touched_stat st;
	const struct ms_region *a, *b;
	uint64_t t_a, t_rw, t_r;
	int kinds;

	(void)state;
	bind_both(t, as, &l);
	map(as, BASE, BASE + 8 * P, "");
	map(as, BASE + 64 * P, BASE + 72 * P, "b");
	protect(as, BASE + 64 * P, BASE + 68 * P, PROT_READ);
	t_a = now;
	sample(as, BASE + P);
	sample(as, BASE + 2 * P);
	t_rw = now;
	sample(as, BASE + 70 * P);
	t_r = now;
	sample(as, BASE + 64 * P);
	sample(as, BASE + 71 * P);
	a = ms_aspace_lookup(as, PID, BASE);
	b = ms_aspace_lookup(as, PID, BASE + 70 * P);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(ms_touched_region(t, a->id, &st));
	assert_int_equal(st.samples[RW], 2);
	assert_int_equal(st.first_ns[RW], t_a);
	assert_int_equal(ms_touched_main_prot(&st, &kinds), RW);
	assert_int_equal(kinds, 1);
	assert_true(ms_touched_region(t, b->id, &st));
	assert_int_equal(st.samples[RW], 2);
	assert_int_equal(st.first_ns[RW], t_rw);
	assert_int_equal(st.samples[PROT_READ], 1);
	assert_int_equal(st.first_ns[PROT_READ], t_r);
	assert_int_equal(st.samples[PROT_NONE] + st.samples[PROT_EXEC], 0);
	assert_int_equal(ms_touched_main_prot(&st, &kinds), RW);
	assert_int_equal(kinds, 2);
	/* The same answers read in place. */
	assert_int_equal(ms_touched_region_main(t, a->id, &kinds), RW);
	assert_int_equal(kinds, 1);
	assert_int_equal(ms_touched_region_main(t, b->id, &kinds), RW);
	assert_int_equal(kinds, 2);
	sample(as, BASE + 65 * P);                /* PROT_READ level with RW, and later: RW still */
	assert_int_equal(ms_touched_region_main(t, b->id, &kinds), RW);
	sample(as, BASE + 66 * P);                /* PROT_READ ahead */
	assert_int_equal(ms_touched_region_main(t, b->id, &kinds), PROT_READ);
	assert_int_equal(kinds, 2);
	assert_int_equal(ms_touched_region_main(t, 999, &kinds), -1);
	assert_int_equal(kinds, 0);
	ms_touched_free(t);
	ms_aspace_free(as);
}

/* A region no sample touched has no figures; ties go to the earlier protection. */
static void untouched_and_ties(void **state)
{
	struct ms_touched_stat st = { { 0 }, { 0 } };
	struct ms_touched *t = ms_touched_new();
	int kinds;

	(void)state;
	assert_false(ms_touched_region(t, 0, &st));
	assert_false(ms_touched_region(t, 12345, &st));
	assert_int_equal(ms_touched_main_prot(&st, &kinds), -1);
	assert_int_equal(kinds, 0);
	st.samples[PROT_READ] = 2;
	st.first_ns[PROT_READ] = 50;
	st.samples[RW] = 2;
	st.first_ns[RW] = 10;
	assert_int_equal(ms_touched_main_prot(&st, &kinds), RW);
	assert_int_equal(kinds, 2);
	ms_touched_free(t);
	ms_touched_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perms_of_touched_memory),
		cmocka_unit_test(one_or_two_perms),
		cmocka_unit_test(untouched_and_ties),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
