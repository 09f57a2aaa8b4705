/* The kernel's VMA rules the model follows with no record to go by: merges, flags, anon_vma, accounting. */
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

#include "aspace/samples.h"
#include "aspace_events.h"

/*
 * mprotect to the protection a VMA already has splits nothing (the kernel
 * returns early, writing no record); over a range spanning VMAs, only the
 * ones whose protection differs are split.
 */
static void mprotect_to_same_protection(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct vmas v;

	map(as, 16 * P, 32 * P, "//anon");
	protect(as, 20 * P, 21 * P, RW);             /* as it is: one VMA still */
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 1);
	protect(as, 24 * P, 28 * P, PROT_READ);      /* 16-24 rw, 24-28 r, 28-32 rw */
	/* 22-30 to r: the r VMA as it is; 22-24 and 28-30 split off and become r. */
	protect(as, 22 * P, 30 * P, PROT_READ);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 5);
	assert_int_equal(v.e[0], 22 * P);
	assert_int_equal(v.s[1], 22 * P);
	assert_int_equal(v.e[1], 24 * P);
	assert_int_equal(v.prot[1], PROT_READ);
	assert_int_equal(v.s[2], 24 * P);            /* untouched, not re-split */
	assert_int_equal(v.e[2], 28 * P);
	assert_int_equal(v.s[3], 28 * P);
	assert_int_equal(v.e[3], 30 * P);
	assert_int_equal(v.prot[3], PROT_READ);
	assert_int_equal(v.prot[4], RW);
	ms_aspace_free(as);
}

/*
 * Advice that changes VMA flags splits a VMA where the flags change and
 * merges neighbours whose flags come to match (mm/vma.c); advice that
 * changes nothing splits nothing; a file piece merges only with the same
 * file at contiguous offsets; MADV_DONTFORK parts are not in a child.
 */
static void vm_flags_split_and_merge(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f, m;
	struct vmas v;

	map(as, 16 * P, 32 * P, "//anon");
	advise(as, 20 * P, 24 * P, MADV_HUGEPAGE);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.s[1], 20 * P);
	assert_int_equal(v.e[1], 24 * P);
	advise(as, 20 * P, 22 * P, MADV_HUGEPAGE);   /* as it is: nothing splits */
	assert_int_equal(vmas_of(as, PID).n, 3);
	advise(as, 16 * P, 32 * P, MADV_NOHUGEPAGE); /* all alike again: one VMA */
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.s[0], 16 * P);
	assert_int_equal(v.e[0], 32 * P);
	/* DONTDUMP everywhere, DODUMP a part, DONTDUMP it back: split, then one VMA. */
	advise(as, 16 * P, 32 * P, MADV_DONTDUMP);
	advise(as, 24 * P, 26 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 3);
	advise(as, 24 * P, 26 * P, MADV_DONTDUMP);
	assert_int_equal(vmas_of(as, PID).n, 1);
	/* A different protection keeps neighbours apart whatever their flags. */
	protect(as, 28 * P, 32 * P, PROT_READ);
	advise(as, 16 * P, 32 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 2);
	/* Two maps of one file: they merge only at contiguous offsets. */
	m = ev(MS_EV_MAP);
	m.map = (struct ms_event_map){ .start = 64 * P, .end = 68 * P, .vma_start = 64 * P, .vma_end = 68 * P,
				       .pgoff = 0, .prot = PROT_READ, .flags = MAP_PRIVATE, .maj = 8, .ino = 77,
				       .name = "/f", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	m = ev(MS_EV_MAP);
	m.map = (struct ms_event_map){ .start = 68 * P, .end = 72 * P, .vma_start = 68 * P, .vma_end = 72 * P,
				       .pgoff = 8 * P, .prot = PROT_READ, .flags = MAP_PRIVATE, .maj = 8, .ino = 77,
				       .name = "/f", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	advise(as, 64 * P, 72 * P, MADV_DONTDUMP);
	advise(as, 64 * P, 72 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 4);     /* the file's two stay two */
	/* DONTFORK: the child has everything but that part. */
	advise(as, 16 * P, 20 * P, MADV_DONTFORK);
	f = ev(MS_EV_FORK);
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	v = vmas_of(as, PID + 1);
	assert_int_equal(v.s[0], 20 * P);
	assert_int_equal(region_at(as, PID + 1, 17 * P), -1);
	assert_true(region_at(as, PID, 17 * P) >= 0);
	ms_aspace_free(as);
}

/* mremap growing in place up to the next VMA merges the two where they match (vma_merge_extend). */
static void mremap_grow_merges_next(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct vmas v;

	map(as, 16 * P, 20 * P, "//anon");
	map(as, 24 * P, 28 * P, "//anon");
	map(as, 40 * P, 44 * P, "//anon");
	protect(as, 48 * P, 52 * P, RW);             /* nothing there: no change */
	map(as, 48 * P, 52 * P, "//anon");
	protect(as, 48 * P, 52 * P, PROT_READ);
	remap(as, 16 * P, 20 * P, 16 * P, 24 * P);   /* up to the next: one VMA */
	remap(as, 40 * P, 44 * P, 40 * P, 48 * P);   /* up to one of another protection: two */
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.s[0], 16 * P);
	assert_int_equal(v.e[0], 28 * P);
	assert_int_equal(v.e[1], 48 * P);
	assert_int_equal(v.s[2], 48 * P);
	assert_int_not_equal(region_at(as, PID, 17 * P), region_at(as, PID, 25 * P));   /* two regions still */
	ms_aspace_free(as);
}

/*
 * anon_vma, both ways (mm/vma.c, is_mergeable_anon_vma): VMAs whose flags
 * come to match merge when one of them has no anon_vma, whichever; they
 * stay apart when each has its own. A fork's copy with one never merges
 * with a VMA that has none.
 */
static void anon_vma_both_ways(void **state)
{
	struct ms_aspace *as;
	struct ms_event f;
	int faults;

	for (faults = 0; faults < 4; faults++) {
		as = halves(16 * P, faults);
		assert_int_equal(vmas_of(as, PID).n, 2);
		advise(as, 20 * P, 24 * P, MADV_DODUMP);
		assert_int_equal(vmas_of(as, PID).n, faults == 3 ? 2 : 1);
		ms_aspace_free(as);
	}
	/* A neighbour with an anon_vma lends it to a compatible VMA's first fault: one anon_vma, one VMA. */
	as = ms_aspace_new();
	map(as, 16 * P, 20 * P, "//anon");
	advise(as, 16 * P, 20 * P, MADV_DONTDUMP);
	map(as, 20 * P, 24 * P, "//anon");
	protect(as, 20 * P, 24 * P, PROT_READ);       /* apart by protection only: compatible */
	sample(as, 17 * P);
	advise(as, 20 * P, 24 * P, MADV_DONTDUMP);
	protect(as, 20 * P, 24 * P, RW);
	sample(as, 21 * P);
	advise(as, 16 * P, 24 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
	/* The first half faulted, then forked: in the child it stays apart; in the parent it merges. */
	as = halves(16 * P, 1);
	f = ev(MS_EV_FORK);
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	f = ev(MS_EV_MADVISE);
	f.pid = f.tid = PID + 1;
	f.madvise.start = 20 * P;
	f.madvise.end = 24 * P;
	f.madvise.advice = MADV_DODUMP;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	assert_int_equal(vmas_of(as, PID + 1).n, 2);
	advise(as, 20 * P, 24 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
}

/*
 * Populated by the kernel, no fault seen: MAP_POPULATE and
 * MADV_POPULATE_WRITE give a private writable VMA its anon_vma, so it no
 * longer merges with a neighbour that has its own; MAP_POPULATE leaves a
 * VMA locked on fault alone, MADV_POPULATE_WRITE does not, and stops at a
 * hole. mprotect that makes a locked private VMA writable populates it.
 */
static void populate_makes_anon_vma(void **state)
{
	struct ms_aspace *as;
	struct ms_event m;
	int how;

	for (how = 0; how < 5; how++) {
		/* The second half faulted; the first mapped again over, populated or not, or advised. */
		as = halves(16 * P, 2);
		m = map_ev(PID, 16 * P, 20 * P, "//anon");
		m.map.fixed = true;
		m.map.populate = how == 1;
		m.map.prot = how == 2 ? PROT_READ : RW;       /* read faults: the zero page, no anon_vma */
		assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
		if (how == 2)
			protect(as, 16 * P, 20 * P, RW);
		if (how >= 3)
			advise(as, 16 * P, 20 * P, how == 3 ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
		advise(as, 20 * P, 24 * P, MADV_DODUMP);
		assert_int_equal(vmas_of(as, PID).n, how == 1 || how == 3 ? 2 : 1);
		ms_aspace_free(as);
	}
	/* A VMA locked on fault: MAP_POPULATE (mm_populate) passes it over; the advice populates it. */
	for (how = 0; how < 2; how++) {
		as = halves(16 * P, 2);
		lock(as, 0, 0, 0, true, MS_LOCK_LOCKED | MS_LOCK_ONFAULT);
		m = map_ev(PID, 16 * P, 20 * P, "//anon");
		m.map.fixed = m.map.populate = true;
		assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
		if (how)
			advise(as, 16 * P, 20 * P, MADV_POPULATE_WRITE);
		lock(as, 0, 0, 0, true, 0);
		advise(as, 20 * P, 24 * P, MADV_DODUMP);
		assert_int_equal(vmas_of(as, PID).n, how ? 2 : 1);
		ms_aspace_free(as);
	}
	/* Advised over 16-20, a hole, then 40-44: the advice stops at the hole (-ENOMEM), 40-44 stays as it was. */
	as = halves(16 * P, 2);
	map(as, 40 * P, 44 * P, "//anon");
	advise(as, 40 * P, 44 * P, MADV_DONTDUMP);
	map(as, 44 * P, 48 * P, "//anon");
	sample(as, 45 * P);
	advise(as, 16 * P, 44 * P, MADV_POPULATE_WRITE);
	advise(as, 20 * P, 24 * P, MADV_DODUMP);
	advise(as, 40 * P, 44 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 3);              /* 16-20, 20-24; 40-48 one */
	ms_aspace_free(as);
	/* Advised from a VMA it may not write: madvise_populate stops there (-EINVAL), 24-28 as it was. */
	as = halves(24 * P, 2);
	m = map_ev(PID, 20 * P, 24 * P, "//anon");
	m.map.prot = PROT_READ;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	advise(as, 20 * P, 28 * P, MADV_POPULATE_WRITE);
	advise(as, 28 * P, 32 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 2);              /* 20-24; 24-32 one */
	ms_aspace_free(as);
	/* Locked read-only (nothing to write-fault), then made writable: populated then. */
	as = halves(16 * P, 2);
	protect(as, 16 * P, 20 * P, PROT_READ);
	lock(as, 16 * P, 20 * P, MS_LOCK_LOCKED, false, -1);
	protect(as, 16 * P, 20 * P, RW);
	lock(as, 16 * P, 20 * P, 0, false, -1);
	advise(as, 20 * P, 24 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 2);
	ms_aspace_free(as);
}

/*
 * Where the recording says a read fault takes a page of its own, not the
 * zero page (mm.read_fault_zero_page 0: a kernel booted with
 * pvm_no_zero_page=1), a read fault makes the VMA's anon_vma as a write
 * does: MAP_POPULATE of a read-only private map, MADV_POPULATE_READ, a
 * fault sampled in a read-only anonymous VMA, mlock of one (unlocked
 * before mprotect makes it writable, which would populate it anyway).
 * The first half then keeps apart from the second (its own anon_vma)
 * once their flags match; with the zero page it merges.
 */
static void read_fault_page_makes_anon_vma(void **state)
{
	struct ms_aspace *as;
	struct ms_event m;
	int how, page;

	for (how = 0; how < 4; how++)
		for (page = 0; page < 2; page++) {
			as = halves(16 * P, 2);
			ms_aspace_set_read_fault_page(as, page);
			m = map_ev(PID, 16 * P, 20 * P, "//anon");
			m.map.fixed = true;
			m.map.prot = PROT_READ;
			m.map.populate = how == 0;
			assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
			if (how == 1)
				advise(as, 16 * P, 20 * P, MADV_POPULATE_READ);
			if (how == 2)
				sample(as, 17 * P);
			if (how == 3) {
				lock(as, 16 * P, 20 * P, MS_LOCK_LOCKED, false, -1);
				lock(as, 16 * P, 20 * P, 0, false, -1);
			}
			protect(as, 16 * P, 20 * P, RW);
			advise(as, 20 * P, 24 * P, MADV_DODUMP);
			assert_int_equal(vmas_of(as, PID).n, page ? 2 : 1);
			ms_aspace_free(as);
		}
	/* POPULATE_READ faults nothing in a VMA it may not read (-EINVAL): 16-20, PROT_NONE then, merges. */
	as = halves(16 * P, 2);
	ms_aspace_set_read_fault_page(as, true);
	protect(as, 16 * P, 20 * P, PROT_NONE);
	advise(as, 16 * P, 20 * P, MADV_POPULATE_READ);
	protect(as, 16 * P, 20 * P, RW);
	advise(as, 20 * P, 24 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
}

/*
 * A map the kernel's record says MAP_LOCKED (VM_LOCKED) is locked, and so
 * populated: next to a VMA never locked it stays apart; unlocked, it is
 * that VMA's twin, and merges unless each has its own anon_vma. Locked on
 * fault by mlockall(MCL_FUTURE | MCL_ONFAULT), it is not populated.
 */
static void map_locked_is_a_lock(void **state)
{
	struct ms_aspace *as;
	struct ms_event m;
	int how;

	for (how = 0; how < 3; how++) {
		as = ms_aspace_new();
		map(as, 16 * P, 20 * P, "//anon");
		if (how == 1)
			sample(as, 17 * P);                   /* its own anon_vma */
		if (how == 2)
			lock(as, 0, 0, 0, false, MS_LOCK_LOCKED | MS_LOCK_ONFAULT);
		m = map_ev(PID, 20 * P, 24 * P, "//anon");
		m.map.flags = MAP_PRIVATE | MAP_LOCKED;
		assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
		assert_int_equal(vmas_of(as, PID).n, 2);
		if (how == 1)
			sample(as, 21 * P);                   /* populated already: no new anon_vma */
		lock(as, 20 * P, 24 * P, 0, false, -1);
		assert_int_equal(vmas_of(as, PID).n, how == 1 ? 2 : 1);
		ms_aspace_free(as);
	}
}

/* PR_SET_MEMORY_MERGE's event: what=MS_VMA_MERGE_ANY over the whole address space. */
static void merge_any(struct ms_aspace *as, uint32_t pid, bool on)
{
	struct ms_event e = ev(MS_EV_VMA_ATTR);

	e.pid = e.tid = pid;
	e.vma_attr.start = 0;
	e.vma_attr.end = 1ULL << 57;
	e.vma_attr.what = MS_VMA_MERGE_ANY;
	e.vma_attr.value = on;
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
}

/* Process PID + 1 maps [s, e) named name, then advises [us, ue) unmergeable (where us < ue). */
static void child_map_unmerge(struct ms_aspace *as, uint64_t s, uint64_t e, const char *name, uint64_t us, uint64_t ue)
{
	struct ms_event m = map_ev(PID + 1, s, e, name);

	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	if (us >= ue)
		return;
	m = ev(MS_EV_MADVISE);
	m.pid = m.tid = PID + 1;
	m.madvise.start = us;
	m.madvise.end = ue;
	m.madvise.advice = MADV_UNMERGEABLE;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

/*
 * KSM's VM_MERGEABLE (mm/ksm.c): MADV_MERGEABLE passes over shared
 * memory; PR_SET_MEMORY_MERGE sets the flag in place on every private VMA
 * and on those mapped later, the stack an exec sets up aside, kept by a
 * fork's child and across an exec; off, it clears it everywhere in place.
 */
static void ksm_merge_any(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m, f;

	m = map_ev(PID, 16 * P, 19 * P, "/dev/zero (deleted)");
	m.map.flags = MAP_SHARED;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	advise(as, 17 * P, 18 * P, MADV_MERGEABLE);              /* shared: passed over */
	assert_int_equal(vmas_of(as, PID).n, 1);
	map(as, 24 * P, 27 * P, "//anon");
	merge_any(as, PID, true);
	assert_int_equal(vmas_of(as, PID).n, 2);                 /* in place: nothing split */
	advise(as, 25 * P, 26 * P, MADV_UNMERGEABLE);
	advise(as, 17 * P, 18 * P, MADV_UNMERGEABLE);            /* the shared one never had it */
	assert_int_equal(vmas_of(as, PID).n, 4);
	map(as, 32 * P, 35 * P, "//anon");                       /* mapped after: mergeable */
	advise(as, 33 * P, 34 * P, MADV_UNMERGEABLE);
	assert_int_equal(vmas_of(as, PID).n, 7);
	f = ev(MS_EV_FORK);
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	child_map_unmerge(as, 40 * P, 43 * P, "//anon", 41 * P, 42 * P);
	assert_int_equal(vmas_of(as, PID + 1).n, 10);            /* the child's copy, and its own in three */
	merge_any(as, PID, false);
	assert_int_equal(vmas_of(as, PID).n, 7);                 /* cleared in place: nothing merged */
	advise(as, 32 * P, 35 * P, MADV_UNMERGEABLE);            /* as it is now: nothing to change */
	assert_int_equal(vmas_of(as, PID).n, 7);
	/* An exec keeps the setting; the stack it sets up is not mergeable, what it maps is. */
	merge_any(as, PID + 1, true);
	f = ev(MS_EV_EXEC);
	f.pid = f.tid = PID + 1;
	f.comm.comm = "next";
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	child_map_unmerge(as, 60 * P, 63 * P, "[stack]", 0, 0);
	child_map_unmerge(as, 50 * P, 53 * P, "//anon", 51 * P, 62 * P);
	assert_int_equal(vmas_of(as, PID + 1).n, 3);             /* 50-51, 51-53; the stack whole */
	/* The stack grown: its new pages have its flags, not a new map's (not mergeable: one VMA still). */
	child_map_unmerge(as, 58 * P, 63 * P, "[stack]", 0, 0);
	assert_int_equal(vmas_of(as, PID + 1).n, 3);
	ms_aspace_free(as);
	/* Asked for twice, or off when never on: nothing changes (ksm_enable_merge_any, ksm_disable_merge_any). */
	as = ms_aspace_new();
	map(as, 16 * P, 19 * P, "//anon");
	advise(as, 17 * P, 18 * P, MADV_MERGEABLE);
	merge_any(as, PID, false);                               /* never on: MADV_MERGEABLE's flag stays */
	advise(as, 17 * P, 18 * P, MADV_UNMERGEABLE);
	assert_int_equal(vmas_of(as, PID).n, 1);
	merge_any(as, PID, true);
	advise(as, 17 * P, 18 * P, MADV_UNMERGEABLE);
	merge_any(as, PID, true);                                /* on already: the page stays unmergeable */
	advise(as, 17 * P, 18 * P, MADV_MERGEABLE);
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
}

/*
 * The break grown where mlockall(MCL_FUTURE) locks new maps: a VMA of its
 * own above the (unlocked, written) heap, populated by brk, so its own
 * anon_vma: the two stay apart once munlockall makes their flags match.
 */
static void break_populated_when_locked(void **state)
{
	struct ms_aspace *as = ms_aspace_new();

	(void)state;
	brk(as, 100 * P, 104 * P, 100 * P, 104 * P);
	sample(as, 101 * P);
	lock(as, 0, 0, 0, false, MS_LOCK_LOCKED);
	brk(as, 104 * P, 108 * P, 104 * P, 108 * P);
	lock(as, 0, 0, 0, true, 0);
	assert_int_equal(vmas_of(as, PID).n, 2);
	ms_aspace_free(as);
}

/*
 * A stack grows with the flags it has: pages the kernel added to its VMA
 * are that VMA's (DONTDUMP here), whatever a new map would get.
 */
static void stack_grows_with_its_flags(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = map_ev(PID, 60 * P, 63 * P, "[stack]");   /* the kernel's: the stack */

	(void)state;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	advise(as, 60 * P, 63 * P, MADV_DONTDUMP);
	m = map_ev(PID, 58 * P, 63 * P, "[stack]");                    /* grown by two pages */
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	assert_int_equal(vmas_of(as, PID).n, 1);
	advise(as, 58 * P, 59 * P, MADV_DODUMP);                 /* a grown page, DONTDUMP as the rest: a split */
	assert_int_equal(vmas_of(as, PID).n, 2);
	ms_aspace_free(as);
}

/*
 * mlock family (mm/mlock.c): a lock splits and merges like advice; a lock
 * not on fault populates, which makes an anon_vma with no fault seen;
 * mlockall sets every VMA and what later maps get; munlockall clears both;
 * a fork's child holds no lock.
 */
static void mlock_split_merge_populate(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f;
	struct vmas v;

	map(as, 16 * P, 32 * P, "//anon");
	lock(as, 18 * P, 20 * P, MS_LOCK_LOCKED, false, -1);
	lock(as, 24 * P, 25 * P, MS_LOCK_LOCKED | MS_LOCK_ONFAULT, false, -1);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 5);
	assert_int_equal(v.s[1], 18 * P);
	assert_int_equal(v.s[3], 24 * P);
	lock(as, 18 * P, 20 * P, MS_LOCK_LOCKED, false, -1);   /* as it is: nothing changes */
	assert_int_equal(vmas_of(as, PID).n, 5);
	lock(as, 16 * P, 32 * P, 0, false, -1);                /* unlocked: all merge */
	assert_int_equal(vmas_of(as, PID).n, 1);
	/* Locked in two steps, under one anon_vma: one VMA. */
	lock(as, 18 * P, 20 * P, MS_LOCK_LOCKED, false, -1);
	lock(as, 20 * P, 22 * P, MS_LOCK_LOCKED | MS_LOCK_ONFAULT, false, -1);
	lock(as, 20 * P, 22 * P, MS_LOCK_LOCKED, false, -1);
	assert_int_equal(vmas_of(as, PID).n, 3);
	/* Populated by its lock, and faulted while locked on fault: two anon_vmas, two VMAs once unlocked. */
	map(as, 40 * P, 48 * P, "//anon");
	lock(as, 40 * P, 44 * P, MS_LOCK_LOCKED, false, -1);
	lock(as, 44 * P, 48 * P, MS_LOCK_LOCKED | MS_LOCK_ONFAULT, false, -1);
	sample(as, 45 * P);
	lock(as, 40 * P, 48 * P, 0, false, -1);
	assert_int_equal(vmas_of(as, PID).n, 5);               /* 16-18, 18-22, 22-32, 40-44, 44-48 */
	/* mlockall(MCL_CURRENT | MCL_FUTURE): every VMA locked, so 16-32 is one; a new map is locked too. */
	lock(as, 0, 0, MS_LOCK_LOCKED, true, MS_LOCK_LOCKED);
	assert_int_equal(vmas_of(as, PID).n, 3);
	map_vma(as, 48 * P, 50 * P, 44 * P, 50 * P, "//anon");            /* the kernel merged it with 44-48 */
	lock(as, 49 * P, 50 * P, 0, false, -1);
	assert_int_equal(vmas_of(as, PID).n, 4);
	f = ev(MS_EV_FORK);
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	f = ev(MS_EV_MLOCK);                                    /* the child unlocks: nothing to change */
	f.pid = f.tid = PID + 1;
	f.mlock.start = 40 * P;
	f.mlock.end = 50 * P;
	f.mlock.def = -1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	assert_int_equal(vmas_of(as, PID + 1).n, 4);
	lock(as, 0, 0, 0, true, 0);                             /* munlockall: 44-49 and 49-50 alike again */
	assert_int_equal(vmas_of(as, PID).n, 3);
	/* ... and new maps are not locked: one next to an unlocked VMA merges with it once their advice matches. */
	map(as, 70 * P, 72 * P, "//anon");
	advise(as, 70 * P, 72 * P, MADV_DONTDUMP);
	map(as, 72 * P, 74 * P, "//anon");
	advise(as, 70 * P, 72 * P, MADV_DODUMP);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.s[3], 70 * P);
	assert_int_equal(v.e[3], 74 * P);
	ms_aspace_free(as);
}

/*
 * VM_ACCOUNT: mprotect adds it, and takes it away only from anonymous
 * memory with no anon_vma yet; a faulted piece made read-only stays apart.
 */
static void accounting_keeps_apart(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = ev(MS_EV_MAP), f = ev(MS_EV_SAMPLE);

	m.map = (struct ms_event_map){ .start = 16 * P, .end = 20 * P, .vma_start = 16 * P, .vma_end = 20 * P,
				       .prot = PROT_READ, .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	map(as, 20 * P, 24 * P, "//anon");               /* writable: accounted */
	protect(as, 20 * P, 24 * P, PROT_READ);          /* never faulted: the charge given back */
	advise(as, 16 * P, 24 * P, MADV_DONTDUMP);
	assert_int_equal(vmas_of(as, PID).n, 1);
	map(as, 24 * P, 28 * P, "//anon");
	f.sample.addr = 24 * P;                          /* a write fault: an anon_vma, and the charge kept */
	f.sample.has_addr = f.sample.fault = true;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	ms_aspace_finish(as);
	protect(as, 24 * P, 28 * P, PROT_READ);
	advise(as, 16 * P, 28 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 2);
	/* MAP_NORESERVE, made writable, is not accounted: it merges with its like. */
	m = ev(MS_EV_MAP);
	m.map = (struct ms_event_map){ .start = 40 * P, .end = 48 * P, .vma_start = 40 * P, .vma_end = 48 * P,
				       .prot = PROT_NONE, .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP,
				       .noreserve = true };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	protect(as, 40 * P, 44 * P, RW);
	advise(as, 40 * P, 48 * P, MADV_DONTDUMP);
	protect(as, 44 * P, 48 * P, RW);
	advise(as, 40 * P, 48 * P, MADV_DODUMP);
	assert_int_equal(vmas_of(as, PID).n, 3);
	ms_aspace_free(as);
}

/* The read-ahead hints are VMA flags: RANDOM and SEQUENTIAL split, NORMAL makes one VMA again. */
static void readahead_hints(void **state)
{
	struct ms_aspace *as = ms_aspace_new();

	(void)state;
	map(as, 16 * P, 24 * P, "//anon");
	advise(as, 18 * P, 20 * P, MADV_RANDOM);
	assert_int_equal(vmas_of(as, PID).n, 3);
	advise(as, 18 * P, 19 * P, MADV_SEQUENTIAL);
	assert_int_equal(vmas_of(as, PID).n, 4);
	advise(as, 19 * P, 20 * P, MADV_SEQUENTIAL);
	assert_int_equal(vmas_of(as, PID).n, 3);
	advise(as, 16 * P, 24 * P, MADV_NORMAL);
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
}

/*
 * A lock that fails at a gap (-ENOMEM) changed the VMAs before it
 * (apply_vma_lock_flags); one that starts in a hole, or finds no gap
 * (RLIMIT_MEMLOCK), changed nothing.
 */
static void lock_failed_at_gap(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m;
	struct vmas v;

	map(as, 16 * P, 20 * P, "//anon");
	map(as, 21 * P, 25 * P, "//anon");
	m = ev(MS_EV_MLOCK);
	m.mlock = (typeof(m.mlock)){ .start = 18 * P, .end = 23 * P, .lock = MS_LOCK_LOCKED | MS_LOCK_ONFAULT,
				     .def = -1, .to_gap = true };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);                 /* 16-18, 18-20 locked, 21-25 untouched */
	assert_int_equal(v.s[1], 18 * P);
	assert_int_equal(v.e[1], 20 * P);
	m.mlock.start = 20 * P;                   /* from the hole: nothing */
	m.mlock.end = 25 * P;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	m.mlock.start = 21 * P;                   /* no gap: the limit, before any change */
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	assert_int_equal(vmas_of(as, PID).n, 3);
	ms_aspace_free(as);
}

/* A VMA tree write inside a piece the model holds whole splits it there (mseal, mbind, userfaultfd). */
static void tree_write_splits(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event w = ev(MS_EV_VMA);
	struct vmas v;

	map(as, 16 * P, 24 * P, "//anon");
	w.vma.start = 18 * P;
	w.vma.end = 20 * P;
	assert_int_equal(ms_aspace_apply(as, &w, NULL), 0);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.e[0], 18 * P);
	assert_int_equal(v.e[1], 20 * P);
	assert_int_equal(v.e[2], 24 * P);
	w = ev(MS_EV_VMA);                        /* merged again: one write over all of it */
	w.vma.start = 16 * P;
	w.vma.end = 24 * P;
	assert_int_equal(ms_aspace_apply(as, &w, NULL), 0);
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
}

/*
 * mseal and mbind split like flag changes and merge where flags and
 * policy match again; the home node goes on VMAs with a BIND policy,
 * skips those with none, and stops at one with another policy.
 */
static void seal_and_policy(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct vmas v;

	map(as, 16 * P, 24 * P, "//anon");
	vma_attr(as, 18 * P, 20 * P, MS_VMA_SEAL, 0);
	assert_int_equal(vmas_of(as, PID).n, 3);
	vma_attr(as, 20 * P, 24 * P, MS_VMA_SEAL, 0);       /* sealed next to sealed: merged */
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.s[1], 18 * P);
	map(as, 32 * P, 48 * P, "//anon");
	vma_attr(as, 34 * P, 36 * P, MS_VMA_POLICY, 2);     /* MPOL_BIND */
	vma_attr(as, 36 * P, 38 * P, MS_VMA_POLICY, 2);     /* the same: merged */
	vma_attr(as, 38 * P, 40 * P, MS_VMA_POLICY, 1);     /* MPOL_PREFERRED: apart */
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 2 + 4);
	assert_int_equal(v.s[3], 34 * P);
	assert_int_equal(v.e[3], 38 * P);
	/* Home node over 32-48: 32-34 has no policy (left), 34-38 takes it, 38-40 stops the walk. */
	vma_attr(as, 32 * P, 48 * P, MS_VMA_HOME_NODE, 0);
	assert_int_equal(vmas_of(as, PID).n, 6);
	vma_attr(as, 35 * P, 36 * P, MS_VMA_POLICY, 2);     /* BIND without the home node: a split */
	assert_int_equal(vmas_of(as, PID).n, 8);
	vma_attr(as, 32 * P, 48 * P, MS_VMA_POLICY, 0);     /* MPOL_DEFAULT: no policy, one VMA */
	assert_int_equal(vmas_of(as, PID).n, 3);
	ms_aspace_free(as);
}

/*
 * munmap refused (-EPERM) at a sealed VMA (mm/vma.c,
 * vms_gather_munmap_vmas): the VMA holding its start, not sealed, is split
 * there and stays split, nothing is unmapped; a start on a VMA's start, a
 * sealed VMA there, or no seal known in the range split nothing.
 */
static void munmap_refused_at_seal(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct vmas v;

	map(as, 16 * P, 24 * P, "//anon");
	vma_attr(as, 20 * P, 22 * P, MS_VMA_SEAL, 0);       /* 16-20, 20-22 sealed, 22-24 */
	vma_attr(as, 18 * P, 22 * P, MS_VMA_UNMAP_REFUSED, 0);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.s[0], 16 * P);
	assert_int_equal(v.e[0], 18 * P);
	assert_int_equal(v.s[1], 18 * P);
	assert_int_equal(v.e[1], 20 * P);
	assert_int_equal(v.s[2], 20 * P);
	assert_non_null(ms_aspace_lookup(as, PID, 18 * P));
	vma_attr(as, 16 * P, 22 * P, MS_VMA_UNMAP_REFUSED, 0);  /* on a VMA's start: nothing */
	vma_attr(as, 21 * P, 24 * P, MS_VMA_UNMAP_REFUSED, 0);  /* in the sealed one: nothing */
	vma_attr(as, 23 * P, 24 * P, MS_VMA_UNMAP_REFUSED, 0);  /* no seal past it: nothing */
	assert_int_equal(vmas_of(as, PID).n, 4);
	vma_attr(as, 20 * P, 22 * P, MS_VMA_SEAL, 0);       /* sealing again merges nothing back */
	map(as, 32 * P, 40 * P, "//anon");
	vma_attr(as, 34 * P, 40 * P, MS_VMA_UNMAP_REFUSED, 0);  /* no seal known: nothing */
	assert_int_equal(vmas_of(as, PID).n, 5);
	ms_aspace_free(as);
}

/*
 * userfaultfd: registration splits at the range's ends and merges what
 * has the same mode; a VMA that has every flag asked for already is
 * skipped; unregister merges back; a fork's copy has none of it.
 */
static void uffd_register(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f = ev(MS_EV_FORK);

	(void)state;
	map(as, 16 * P, 24 * P, "//anon");
	vma_attr(as, 18 * P, 22 * P, MS_VMA_UFFD, 1);         /* MISSING */
	assert_int_equal(vmas_of(as, PID).n, 3);
	vma_attr(as, 19 * P, 20 * P, MS_VMA_UFFD, 0);         /* unregistered in the middle */
	assert_int_equal(vmas_of(as, PID).n, 5);
	vma_attr(as, 19 * P, 20 * P, MS_VMA_UFFD, 1);         /* again: merged back */
	assert_int_equal(vmas_of(as, PID).n, 3);
	vma_attr(as, 18 * P, 20 * P, MS_VMA_UFFD, 2);         /* WP: another mode, apart */
	assert_int_equal(vmas_of(as, PID).n, 4);
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	vma_attr(as, 16 * P, 24 * P, MS_VMA_UFFD, 0);         /* all unregistered: one VMA */
	assert_int_equal(vmas_of(as, PID).n, 1);
	ms_aspace_free(as);
}

/*
 * mremap moving a VMA next to a compatible one: copy_vma merges them
 * (vma_merge_new_range), and a VMA moved out of the middle of another
 * leaves it split; one with an anon_vma keeps its old page offsets, and
 * stays apart.
 */
static void mremap_move_merges(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f = ev(MS_EV_SAMPLE);

	(void)state;
	map(as, 16 * P, 18 * P, "//anon");
	map(as, 40 * P, 41 * P, "//anon");
	remap(as, 40 * P, 41 * P, 18 * P, 19 * P);       /* right after 16-18: one VMA */
	assert_int_equal(vmas_of(as, PID).n, 1);
	map(as, 40 * P, 41 * P, "//anon");
	f.sample.addr = 40 * P;                           /* a write fault: it has an anon_vma now */
	f.sample.has_addr = f.sample.fault = true;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	ms_aspace_finish(as);
	remap(as, 40 * P, 41 * P, 19 * P, 20 * P);
	assert_int_equal(vmas_of(as, PID).n, 2);
	ms_aspace_free(as);
}

/*
 * A first fault takes a neighbour's anon_vma only where their page
 * offsets run on (anon_vma_compatible), anonymous memory's too: a VMA
 * made where a written one was before it moved down by its own length
 * gets its own, so the two, moved side by side later with offsets that
 * run on, stay apart (rules/remap-pgoff, its last step).
 */
static void first_fault_shares_where_offsets_run_on(void **state)
{
	struct ms_aspace *as = ms_aspace_new();

	(void)state;
	map(as, 40 * P, 48 * P, "//anon");                /* offsets from 40 * P's */
	sample(as, 40 * P);
	remap(as, 40 * P, 48 * P, 32 * P, 40 * P);       /* keeps them: 40 * P's at 32 * P */
	map(as, 40 * P, 44 * P, "//anon");                /* 40 * P's again: not 48 * P's */
	sample(as, 40 * P);                               /* its own anon_vma */
	assert_int_equal(vmas_of(as, PID).n, 2);
	remap(as, 40 * P, 44 * P, 0, 4 * P);
	remap(as, 36 * P, 40 * P, 4 * P, 8 * P);         /* offsets 44 * P's on: they run on */
	assert_int_equal(vmas_of(as, PID).n, 3);
	ms_aspace_free(as);
}

/*
 * shmdt (ipc/shm.c): the attach's VMAs where it put them go, from the
 * address on: a fragment whose first page was unmapped too; a part moved
 * away by mremap, one mapped again (old length 0) and another attach
 * stay. The change is of the attach, over what went. Without the rule,
 * every piece of the attach's region went.
 */
static void shmdt_leaves_what_moved_away(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e = map_ev(PID, 10 * P, 18 * P, "/SYSV00000000 (deleted)");
	struct ms_change c;
	struct vmas v;
	int id, other;

	(void)state;
	e.map.flags = MAP_SHARED;
	e.map.ino = 9;
	e.map.via = MS_VIA_SHMAT;
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
	id = region_at(as, PID, 10 * P);
	e.map.start = e.map.vma_start = 60 * P;           /* another attach */
	e.map.end = e.map.vma_end = 64 * P;
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
	other = region_at(as, PID, 60 * P);
	remap(as, 16 * P, 18 * P, 40 * P, 43 * P);        /* moved away, grown */
	remap(as, 11 * P, 11 * P, 30 * P, 32 * P);        /* mapped again */
	unmap(as, 10 * P, 11 * P);
	protect(as, 13 * P, 14 * P, PROT_READ);
	e = ev(MS_EV_SHMDT);
	e.shmdt.addr = 10 * P;
	assert_int_equal(ms_aspace_apply_change(as, &e, &c), 1);
	assert_int_equal(c.op, MS_OP_UNMAP);
	assert_int_equal(c.start, 11 * P);
	assert_int_equal(c.end, 16 * P);
	assert_int_equal(c.release_start, 11 * P);
	assert_int_equal(c.release_end, 16 * P);
	assert_string_equal(c.name, "/SYSV00000000 (deleted)");
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);
	assert_int_equal(region_at(as, PID, 12 * P), -1);
	assert_int_equal(region_at(as, PID, 15 * P), -1);
	assert_int_equal(region_at(as, PID, 31 * P), id);
	assert_int_equal(region_at(as, PID, 42 * P), id);
	assert_int_equal(region_at(as, PID, 60 * P), other);
	e.shmdt.addr = 40 * P;                            /* at the part moved: offset 6 pages, not 0 */
	assert_int_equal(ms_aspace_apply_change(as, &e, &c), 1);
	assert_int_equal(region_at(as, PID, 42 * P), id);
	assert_int_equal(c.start, 0);
	e.shmdt.addr = 60 * P;
	assert_int_equal(ms_aspace_apply_change(as, &e, &c), 1);
	assert_int_equal(region_at(as, PID, 60 * P), -1);
	assert_int_equal(c.end, 64 * P);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mremap_move_merges),
		cmocka_unit_test(readahead_hints),
		cmocka_unit_test(uffd_register),
		cmocka_unit_test(mprotect_to_same_protection),
		cmocka_unit_test(vm_flags_split_and_merge),
		cmocka_unit_test(mremap_grow_merges_next),
		cmocka_unit_test(anon_vma_both_ways),
		cmocka_unit_test(mlock_split_merge_populate),
		cmocka_unit_test(populate_makes_anon_vma),
		cmocka_unit_test(read_fault_page_makes_anon_vma),
		cmocka_unit_test(map_locked_is_a_lock),
		cmocka_unit_test(ksm_merge_any),
		cmocka_unit_test(stack_grows_with_its_flags),
		cmocka_unit_test(break_populated_when_locked),
		cmocka_unit_test(accounting_keeps_apart),
		cmocka_unit_test(lock_failed_at_gap),
		cmocka_unit_test(tree_write_splits),
		cmocka_unit_test(seal_and_policy),
		cmocka_unit_test(munmap_refused_at_seal),
		cmocka_unit_test(shmdt_leaves_what_moved_away),
		cmocka_unit_test(first_fault_shares_where_offsets_run_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
