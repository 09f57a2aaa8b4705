/*
 * Settling the regions a change touched (lib/aspace/settle.c): their new
 * extents and perms, and their ends, after changes over few regions and
 * over many, against what the changes did.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/aspace.h>

#include "aspace/internal.h"

#include "aspace_events.h"

/*
 * A change over more regions than a change lists (64) settles every
 * region of the process: each of the 100 it covers takes its new perms,
 * then ends (or shrinks), though the process has more than 64 alive. Only
 * the first 64 of them were settled before: 36 stayed alive with stale
 * extents and perms.
 */
static void change_over_many_regions(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *r;
	uint64_t t;
	char name[32];
	int i;

	(void)state;
	for (i = 0; i < 30; i++)                         /* elsewhere: the process has 130 alive */
		map(as, (5000 + 2 * i) * P, (5001 + 2 * i) * P, "//anon");
	for (i = 0; i < 100; i++) {                      /* adjacent, never merged: a name each */
		snprintf(name, sizeof(name), "/f%d", i);
		map(as, (1000 + 2 * i) * P, (1002 + 2 * i) * P, name);
	}
	protect(as, 1000 * P, 1200 * P, PROT_READ);
	for (i = 0; i < 100; i++)
		assert_int_equal(ms_aspace_region(as, 30 + i)->prot, PROT_READ);
	t = now;
	unmap(as, 1000 * P, 1199 * P);                   /* the last region keeps its last page */
	for (i = 0; i < 99; i++) {
		r = ms_aspace_region(as, 30 + i);
		assert_false(r->alive);
		assert_int_equal(r->ended_ns, t);
	}
	r = ms_aspace_region(as, 129);
	assert_true(r->alive);
	assert_int_equal(r->start, 1199 * P);
	assert_int_equal(r->end, 1200 * P);
	for (i = 0; i < 30; i++)
		assert_true(ms_aspace_region(as, i)->alive);
	ms_aspace_free(as);
}

/*
 * A change over many regions, a region of many pieces among them (one
 * that keeps a heap of their sizes): each takes the perms of its biggest
 * piece, the first among equals, and its extent from its pieces.
 */
static void many_with_a_big_region(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *big;
	char name[32];
	int i;

	(void)state;
	map(as, 100 * P, 400 * P, "//anon");                 /* region 0 */
	for (i = 0; i < 75; i++)                             /* [100, 250): 150 pieces of a page */
		protect(as, (100 + 2 * i) * P, (101 + 2 * i) * P, PROT_READ);
	for (i = 0; i < 100; i++) {                          /* regions 1..100, after it */
		snprintf(name, sizeof(name), "/g%d", i);
		map(as, (400 + i) * P, (401 + i) * P, name);
	}
	big = ms_aspace_region(as, 0);
	assert_int_equal(big->prot, RW);                     /* [250, 400): 150 pages */
	/* Over the big region's last 100 pages and every small one: one change, 101 regions. */
	protect(as, 300 * P, 500 * P, PROT_READ | PROT_EXEC);
	assert_int_equal(big->prot, PROT_READ | PROT_EXEC);  /* [300, 400) now the biggest */
	assert_int_equal(big->start, 100 * P);
	assert_int_equal(big->end, 400 * P);
	for (i = 1; i <= 100; i++)
		assert_int_equal(ms_aspace_region(as, i)->prot, PROT_READ | PROT_EXEC);
	/* Unmapped from 250 on: the big region shrinks to its pages of one each, the small ones end. */
	unmap(as, 250 * P, 500 * P);
	assert_true(big->alive);
	assert_int_equal(big->start, 100 * P);
	assert_int_equal(big->end, 250 * P);
	assert_int_equal(big->prot, PROT_READ);              /* page 100's: the first of equals */
	for (i = 1; i <= 100; i++)
		assert_false(ms_aspace_region(as, i)->alive);
	ms_aspace_free(as);
}

/*
 * One mprotect over 30 pieces cut from a region (every other page made
 * read-only), making them alike, and the VMA tree's write of the one VMA
 * the kernel merged them into: the pieces are joined, past the eight
 * joins a settle once listed, and the region takes the perms of most of
 * it, [40, 100) r-x, not those of its biggest piece before, [0, 40) rw-.
 */
static void one_protect_over_many_pieces(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *r;
	struct ms_event v;
	struct proc *p;
	int i;

	(void)state;
	map(as, 100 * P, 200 * P, "//anon");
	for (i = 0; i < 30; i++)
		protect(as, (140 + 2 * i) * P, (141 + 2 * i) * P, PROT_READ);
	r = ms_aspace_region(as, 0);
	assert_int_equal(r->prot, RW);
	protect(as, 140 * P, 200 * P, PROT_READ | PROT_EXEC);
	v = ev(MS_EV_VMA);
	v.vma.start = 140 * P;
	v.vma.end = 200 * P;
	assert_int_equal(ms_aspace_apply(as, &v, NULL), 0);
	p = ms_aspace_proc_make(as, PID);
	assert_int_equal(p->n, 2);
	assert_int_equal(p->p[1].start, 140 * P);
	assert_int_equal(p->p[1].end, 200 * P);
	assert_int_equal(r->prot, PROT_READ | PROT_EXEC);
	assert_int_equal(vmas_of(as, PID).n, 2);
	assert_int_equal(r->start, 100 * P);
	assert_int_equal(r->end, 200 * P);
	ms_aspace_free(as);
}

/*
 * Pieces alike met at 20,000 places by one change (a VMA tree write over
 * a reservation of 20,001 pieces made alike): joined in one pass, into
 * one piece, with the pieces around them kept as they were.
 */
static void joins_past_the_listed(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event v;
	struct proc *p;
	int i;

	(void)state;
	map(as, 10 * P, 11 * P, "/before");
	map(as, 100 * P, 40102 * P, "//anon");
	map(as, 50000 * P, 50001 * P, "/after");
	for (i = 0; i < 20000; i++)
		protect(as, (101 + 2 * i) * P, (102 + 2 * i) * P, PROT_READ);
	p = ms_aspace_proc_make(as, PID);
	assert_int_equal(p->n, 2 + 40001);
	protect(as, 100 * P, 40102 * P, PROT_READ);
	v = ev(MS_EV_VMA);
	v.vma.start = 100 * P;
	v.vma.end = 40102 * P;
	assert_int_equal(ms_aspace_apply(as, &v, NULL), 0);
	assert_int_equal(p->n, 3);
	assert_int_equal(p->p[0].start, 10 * P);
	assert_int_equal(p->p[1].start, 100 * P);
	assert_int_equal(p->p[1].end, 40102 * P);
	assert_int_equal(p->p[1].prot, PROT_READ);
	assert_int_equal(p->p[2].start, 50000 * P);
	assert_int_equal(ms_aspace_region(as, 1)->prot, PROT_READ);
	ms_aspace_free(as);
}

/*
 * One VMA of 100 regions (adjacent maps the kernel merged) moved whole: the
 * settle reads where the pieces went, so each region is alive at its new
 * place (a settle that read only their old extents would end them all).
 */
static void move_of_many_regions(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *r;
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		map_vma(as, (100 + i) * P, (101 + i) * P, 100 * P, (101 + i) * P, "//anon");
	assert_int_equal(ms_aspace_nr_regions(as), 100);
	remap(as, 100 * P, 200 * P, 500 * P, 600 * P);
	for (i = 0; i < 100; i++) {
		r = ms_aspace_region(as, i);
		assert_true(r->alive);
		assert_int_equal(r->start, (500 + i) * P);
		assert_int_equal(r->end, (501 + i) * P);
	}
	ms_aspace_free(as);
}

/*
 * A region whose pieces lie between ten others each, over more regions
 * than a change lists without repeats: it is listed again past the last
 * few looked at, and settled once, alive, as its pieces say.
 */
static void region_listed_again(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *a, *r;
	int i, k;

	(void)state;
	map(as, 1000 * P, 1110 * P, "//anon");           /* region 0 */
	for (i = 0; i < 10; i++)                         /* 100 one-page maps over it: a page of it between each ten */
		for (k = 0; k < 10; k++)
			map(as, (1000 + 11 * i + 1 + k) * P, (1000 + 11 * i + 2 + k) * P, "/x.so");
	a = ms_aspace_region(as, 0);
	protect(as, 1000 * P, 1110 * P, PROT_READ);
	assert_true(a->alive);
	assert_int_equal(a->start, 1000 * P);
	assert_int_equal(a->end, 1100 * P);                /* a page in every eleven: the last, [1099, 1100) */
	assert_int_equal(a->prot, PROT_READ);
	for (i = 1; i <= 100; i++) {
		r = ms_aspace_region(as, i);
		assert_true(r->alive);
		assert_int_equal(r->prot, PROT_READ);
	}
	unmap(as, 1000 * P, 1110 * P);
	for (i = 0; i <= 100; i++)
		assert_false(ms_aspace_region(as, i)->alive);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(change_over_many_regions),
		cmocka_unit_test(many_with_a_big_region),
		cmocka_unit_test(move_of_many_regions),
		cmocka_unit_test(region_listed_again),
		cmocka_unit_test(one_protect_over_many_pieces),
		cmocka_unit_test(joins_past_the_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
