/*
 * mremap applied (lib/aspace/remap.c): a move of several VMAs and the
 * holes between them, and a move of one VMA that DONTUNMAP leaves behind,
 * against what the kernel does (the rules' reproducers say it on a real
 * one: rules/mremap-multi, rules/mremap-grow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/aspace.h>

#include "aspace/internal.h"

#include "aspace_events.h"

/*
 * A move of the same length to a fixed place over several VMAs and the
 * holes between them (Linux 6.17): each VMA to its offset, with its own
 * protection; the target unmapped under them alone, so the holes keep
 * what the target had. rules/mremap-multi is the kernel's say.
 */
static void move_of_several_vmas(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e = ev(MS_EV_REMAP);
	struct vmas v;
	int dst;

	(void)state;
	map(as, 100 * P, 102 * P, "//anon");
	map(as, 103 * P, 105 * P, "/lib/a.so");
	protect(as, 104 * P, 105 * P, PROT_READ);             /* its second page apart */
	map(as, 200 * P, 220 * P, "//anon");                   /* the target: a reservation */
	protect(as, 200 * P, 220 * P, PROT_NONE);
	dst = region_at(as, PID, 200 * P);
	e.remap.old_start = 100 * P;
	e.remap.old_end = 105 * P;
	e.remap.new_start = 210 * P;
	e.remap.new_end = 215 * P;
	e.remap.flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 6);
	assert_int_equal(v.s[0], 200 * P);                     /* the reservation before */
	assert_int_equal(v.e[0], 210 * P);
	assert_int_equal(v.s[1], 210 * P);                     /* the anon VMA */
	assert_int_equal(v.e[1], 212 * P);
	assert_int_equal(v.prot[1], RW);
	assert_int_equal(v.s[2], 212 * P);                     /* the hole: the reservation's still */
	assert_int_equal(v.e[2], 213 * P);
	assert_int_equal(v.prot[2], PROT_NONE);
	assert_int_equal(region_at(as, PID, 212 * P), dst);
	assert_int_equal(v.prot[3], RW);                       /* the file's two VMAs, apart */
	assert_int_equal(v.prot[4], PROT_READ);
	assert_int_equal(v.s[5], 215 * P);
	assert_int_equal(region_at(as, PID, 100 * P), -1);
	ms_aspace_free(as);
}

/*
 * MREMAP_DONTUNMAP over several VMAs and a hole, onto a reservation: each
 * moved, each left where it was as well (empty, as the kernel leaves it),
 * and the hole's part of the reservation kept.
 */
static void move_of_several_left_behind(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e = ev(MS_EV_REMAP);
	struct vmas v;

	(void)state;
	map(as, 100 * P, 102 * P, "//anon");
	map(as, 103 * P, 104 * P, "//anon");
	protect(as, 103 * P, 104 * P, PROT_READ);
	map(as, 300 * P, 310 * P, "//anon");
	protect(as, 300 * P, 310 * P, PROT_NONE);
	e.remap.old_start = 100 * P;
	e.remap.old_end = 104 * P;
	e.remap.new_start = 300 * P;
	e.remap.new_end = 304 * P;
	e.remap.flags = MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP;
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 6);
	assert_int_equal(v.s[0], 100 * P);                     /* left behind */
	assert_int_equal(v.s[1], 103 * P);
	assert_int_equal(v.s[2], 300 * P);                     /* moved */
	assert_int_equal(v.e[2], 302 * P);
	assert_int_equal(v.prot[2], RW);
	assert_int_equal(v.s[3], 302 * P);                     /* the reservation's, in the hole */
	assert_int_equal(v.e[3], 303 * P);
	assert_int_equal(v.prot[3], PROT_NONE);
	assert_int_equal(v.s[4], 303 * P);
	assert_int_equal(v.prot[4], PROT_READ);
	assert_int_equal(v.s[5], 304 * P);                     /* the rest of it */
	assert_int_equal(v.prot[5], PROT_NONE);
	ms_aspace_free(as);
}

/* A move of [os, oe) to ns, MREMAP_FIXED. */
static void move_to(struct ms_aspace *as, uint64_t os, uint64_t oe, uint64_t ns)
{
	struct ms_event e = ev(MS_EV_REMAP);

	e.remap.old_start = os;
	e.remap.old_end = oe;
	e.remap.new_start = ns;
	e.remap.new_end = ns + (oe - os);
	e.remap.flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
}

/*
 * An anonymous VMA with an anon_vma keeps its page offsets (its first
 * address's, as its MMAP2 gives them) through a move, and merges at its
 * new place with a neighbour of the same anon_vma whose offsets run on
 * into its own (copy_vma): moved in two halves side by side, one VMA
 * again; put back the other way round, two.
 */
static void moved_halves_merge_again(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = map_ev(PID, 100 * P, 104 * P, "//anon");
	struct vmas v;

	(void)state;
	m.map.pgoff = 100 * P;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	sample(as, 100 * P);                                   /* a fault: its anon_vma */
	map(as, 200 * P, 212 * P, "//anon");
	protect(as, 200 * P, 212 * P, PROT_NONE);
	move_to(as, 100 * P, 102 * P, 202 * P);
	move_to(as, 102 * P, 104 * P, 204 * P);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.s[1], 202 * P);
	assert_int_equal(v.e[1], 206 * P);
	move_to(as, 204 * P, 206 * P, 207 * P);
	move_to(as, 202 * P, 204 * P, 209 * P);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 5);
	assert_int_equal(v.s[2], 207 * P);
	assert_int_equal(v.e[2], 209 * P);
	assert_int_equal(v.s[3], 209 * P);
	assert_int_equal(v.e[3], 211 * P);
	ms_aspace_free(as);
}

/*
 * Anonymous memory's page offsets must run on for a merge, as a file's
 * (can_vma_merge_before): a VMA with an anon_vma moved keeps its own, so
 * grown in place up to a new map it stays apart from it; one without an
 * anon_vma takes its new address's, and merges. A map whose record says
 * no offset (/proc's) has its address's. rules/remap-pgoff is the
 * kernel's say.
 */
static void moved_offsets_run_on_or_not(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct vmas v;
	int written;

	(void)state;
	for (written = 0; written < 2; written++) {
		map(as, 300 * P, 304 * P, "//anon");           /* no offset said: 300 * P's */
		if (written)
			sample(as, 300 * P);
		move_to(as, 300 * P, 304 * P, 100 * P);
		map(as, 108 * P, 112 * P, "//anon");
		remap(as, 100 * P, 104 * P, 100 * P, 108 * P);   /* grown in place */
		v = vmas_of(as, PID);
		assert_int_equal(v.n, written ? 2 : 1);
		assert_int_equal(v.s[0], 100 * P);
		assert_int_equal(v.e[0], written ? 108 * P : 112 * P);
		unmap(as, 100 * P, 112 * P);
	}
	ms_aspace_free(as);
}

/*
 * MREMAP_DONTUNMAP leaves the old VMA unlocked, the whole of it, where only
 * half moved too (dontunmap_complete), and merges it with nothing then: a
 * neighbour made alike by madvise merges with it after. The half moved
 * keeps its lock. rules/remap-dontunmap is the kernel's say.
 */
static void dontunmap_unlocks_the_old(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e = ev(MS_EV_REMAP);
	const struct proc *p;
	struct vmas v;
	size_t i;

	(void)state;
	map(as, 100 * P, 108 * P, "//anon");
	lock(as, 100 * P, 108 * P, MS_LOCK_LOCKED, false, -1);
	map(as, 108 * P, 112 * P, "//anon");
	advise(as, 108 * P, 112 * P, MADV_DONTDUMP);
	e.remap = (typeof(e.remap)){ .old_start = 104 * P, .old_end = 108 * P, .new_start = 200 * P,
				     .new_end = 204 * P, .flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP };
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);                     /* [100, 108) whole, [108, 112), [200, 204) */
	assert_int_equal(v.e[0], 108 * P);
	advise(as, 108 * P, 112 * P, MADV_DODUMP);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.e[0], 112 * P);
	p = proc_get(as, PID);
	for (i = 0; i < p->n; i++)
		assert_int_equal(!!(p->p[i].vmflags & VF_LOCKED), p->p[i].start == 200 * P);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(move_of_several_vmas),
		cmocka_unit_test(move_of_several_left_behind),
		cmocka_unit_test(moved_halves_merge_again),
		cmocka_unit_test(moved_offsets_run_on_or_not),
		cmocka_unit_test(dontunmap_unlocks_the_old),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
