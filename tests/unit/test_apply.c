/* Applying changes: each event as the kernel does it, and the change described. */
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

#include "aspace_events.h"

static void mremap_shrink_grow_move(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	int a, b, c;

	map(as, 100 * P, 110 * P, "//anon");
	a = region_at(as, PID, 100 * P);
	remap(as, 100 * P, 110 * P, 100 * P, 104 * P);     /* shrink in place */
	assert_int_equal(region_at(as, PID, 105 * P), -1);
	assert_int_equal(ms_aspace_region(as, (size_t)a)->end, 104 * P);
	remap(as, 100 * P, 104 * P, 100 * P, 120 * P);     /* grow in place */
	assert_int_equal(region_at(as, PID, 119 * P), a);
	assert_int_equal(vmas_of(as, PID).n, 1);

	/* Move onto another mapping (MREMAP_FIXED): the overlap of b ends. */
	map(as, 200 * P, 210 * P, "//anon");
	b = region_at(as, PID, 200 * P);
	remap(as, 100 * P, 120 * P, 195 * P, 215 * P);
	assert_int_equal(region_at(as, PID, 100 * P), -1);
	assert_int_equal(region_at(as, PID, 195 * P), a);
	assert_int_equal(region_at(as, PID, 214 * P), a);
	assert_false(ms_aspace_region(as, (size_t)b)->alive);
	assert_int_equal(ms_aspace_region(as, (size_t)a)->start, 195 * P);

	/* Move across two mappings, growing: both lose what it covers. */
	map(as, 300 * P, 305 * P, "//anon");
	map(as, 305 * P, 310 * P, "/lib/x.so");
	c = region_at(as, PID, 305 * P);
	remap(as, 195 * P, 215 * P, 302 * P, 330 * P);
	assert_int_equal(region_at(as, PID, 301 * P), (int)ms_aspace_nr_regions(as) - 2);
	assert_int_equal(region_at(as, PID, 306 * P), a);
	assert_int_equal(region_at(as, PID, 329 * P), a);
	assert_false(ms_aspace_region(as, (size_t)c)->alive);
	assert_int_equal(ms_aspace_region(as, (size_t)a)->end, 330 * P);
	ms_aspace_free(as);
}

static void brk_grow_and_shrink_below_start(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *heap;
	int h, below;

	map(as, 40 * P, 50 * P, "/bin/prog");          /* the program, right below the heap */
	below = region_at(as, PID, 49 * P);
	brk(as, 50 * P, 60 * P, 50 * P, 60 * P);
	h = region_at(as, PID, 50 * P);
	heap = ms_aspace_region(as, (size_t)h);
	assert_string_equal(heap->name, "[heap]");     /* named so from its first brk */
	assert_int_equal(heap->kind, MS_KIND_HEAP);
	brk(as, 60 * P, 80 * P, 50 * P, 80 * P);
	assert_int_equal(region_at(as, PID, 79 * P), h);
	brk(as, 80 * P, 55 * P + 100, 0, 0);            /* shrink: the page with the break stays */
	assert_int_equal(region_at(as, PID, 55 * P), h);
	assert_int_equal(region_at(as, PID, 56 * P), -1);
	assert_int_equal(heap->end, 56 * P);
	brk(as, 56 * P, 10 * P, 0, 0);                  /* below its start: the heap ends there */
	assert_false(heap->alive);
	assert_int_equal(region_at(as, PID, 45 * P), below); /* nothing under it is touched */
	ms_aspace_free(as);
}

/*
 * Attached to a process: its heap came from /proc, and the break before
 * its first brk is not known (old == new). A shrink is measured from the
 * heap's end; a query (the break where the heap ends) changes nothing.
 */
static void first_brk_after_attach(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = ev(MS_EV_MAP);
	enum ms_aspace_op op;
	struct vmas v;

	m.map = (struct ms_event_map){ .start = 16 * P, .end = 40 * P, .vma_start = 16 * P, .vma_end = 40 * P,
				       .prot = RW, .flags = MAP_PRIVATE, .name = "[heap]", .via = MS_VIA_SYNTH };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	m = ev(MS_EV_BRK);
	m.brk.old_brk = m.brk.new_brk = 40 * P;     /* brk(0): where it is */
	assert_int_equal(ms_aspace_apply(as, &m, &op), 0);
	assert_int_equal(op, MS_OP_NONE);
	m = ev(MS_EV_BRK);
	m.brk.old_brk = m.brk.new_brk = 30 * P + 100; /* shrunk: the old break is the heap's end */
	assert_int_equal(ms_aspace_apply(as, &m, &op), 0);
	assert_int_equal(op, MS_OP_BRK);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.e[0], 31 * P);
	ms_aspace_free(as);
}

static void fork_then_diverge(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f = ev(MS_EV_FORK), c;
	const struct ms_region *r;
	int parent_r, child_r;

	map(as, 10 * P, 20 * P, "//anon");
	map(as, 40 * P, 50 * P, "/usr/lib/libx.so");
	f.fork.child_pid = f.fork.child_tid = 200;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	parent_r = region_at(as, PID, 10 * P);
	child_r = region_at(as, 200, 10 * P);
	assert_true(child_r >= 0);
	assert_int_not_equal(parent_r, child_r);       /* the child's copy is its own region */
	assert_int_equal(ms_aspace_region(as, (size_t)child_r)->pid, 200);
	/* A copy's name is its /proc name, one string, as the parent's is: not a second copy. */
	r = ms_aspace_region(as, (size_t)region_at(as, 200, 40 * P));
	assert_string_equal(r->name, "/usr/lib/libx.so");
	assert_ptr_equal(r->name, r->proc_name);
	assert_int_equal(r->kind, ms_aspace_region(as, (size_t)region_at(as, PID, 40 * P))->kind);
	unmap(as, 10 * P, 20 * P);                     /* the parent drops it */
	c = ev(MS_EV_MAP);
	c.pid = c.tid = 200;
	c.map.start = c.map.vma_start = 30 * P;
	c.map.end = c.map.vma_end = 31 * P;
	c.map.name = "//anon";
	c.map.via = MS_VIA_MMAP;
	assert_int_equal(ms_aspace_apply(as, &c, NULL), 0);
	assert_int_equal(region_at(as, PID, 10 * P), -1);
	assert_int_equal(region_at(as, 200, 10 * P), child_r);
	assert_int_equal(region_at(as, PID, 30 * P), -1);
	assert_true(region_at(as, 200, 30 * P) >= 0);
	ms_aspace_free(as);
}

static void exec_resets_and_exit_ends(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e = ev(MS_EV_EXEC);
	int old;

	map(as, 10 * P, 20 * P, "/bin/old");
	old = region_at(as, PID, 10 * P);
	e.comm.comm = "new";
	ms_aspace_apply(as, &e, NULL);
	assert_int_equal(region_at(as, PID, 10 * P), -1);
	assert_false(ms_aspace_region(as, (size_t)old)->alive);
	map(as, 10 * P, 20 * P, "/bin/new");
	assert_string_equal(ms_aspace_region(as, (size_t)region_at(as, PID, 10 * P))->comm, "new");
	e = ev(MS_EV_EXIT);
	ms_aspace_apply(as, &e, NULL);
	assert_int_equal(region_at(as, PID, 10 * P), -1);
	assert_int_equal(vmas_of(as, PID).n, 0);
	assert_int_equal(ms_aspace_for_each_vma(as, 4242, collect, NULL), -ESRCH);
	ms_aspace_free(as);
}

/* Applies e with ms_aspace_apply_change(); asserts it returned want (1: a change, 0: none). */
static void change(struct ms_aspace *as, const struct ms_event *e, int want, struct ms_change *c)
{
	assert_int_equal(ms_aspace_apply_change(as, e, c), want);
}

/*
 * Each change described as the timeline and the watch channel show it:
 * its op, range, protection, region, name, and what it released.
 */
static void changes_described(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e;
	struct ms_change c;

	e = ev(MS_EV_MAP);
	e.map = (struct ms_event_map){ .start = 16 * P, .end = 32 * P, .vma_start = 16 * P, .vma_end = 32 * P,
				       .prot = RW, .flags = MAP_PRIVATE, .name = "/lib/x.so", .ino = 7, .via = MS_VIA_MMAP };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_MAP);
	assert_int_equal(c.start, 16 * P);
	assert_int_equal(c.end, 32 * P);
	assert_int_equal(c.prot, RW);
	assert_int_equal(c.advice, -1);
	assert_int_equal(c.lock, -1);
	assert_string_equal(c.name, "/lib/x.so");
	assert_ptr_equal(c.region, ms_aspace_lookup(as, PID, 16 * P));
	assert_int_equal(c.release_end, 0);                        /* nothing was there */
	assert_int_equal(c.time_ns, e.time);
	e.time = now++;                                           /* MAP_FIXED over part of it */
	e.map.start = e.map.vma_start = 24 * P;
	e.map.end = e.map.vma_end = 40 * P;
	e.map.name = "//anon";
	e.map.ino = 0;
	change(as, &e, 1, &c);
	assert_string_equal(c.name, "");
	assert_int_equal(c.release_start, 24 * P);
	assert_int_equal(c.release_end, 40 * P);

	e = ev(MS_EV_PROTECT);
	e.protect = (typeof(e.protect)){ 16 * P, 20 * P, PROT_READ };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_PROTECT);
	assert_int_equal(c.prot, PROT_READ);
	assert_string_equal(c.name, "/lib/x.so");                  /* the region it changed */
	assert_ptr_equal(c.region, ms_aspace_lookup(as, PID, 16 * P));
	assert_int_equal(c.release_end, 0);

	e = ev(MS_EV_REMAP);
	e.remap = (typeof(e.remap)){ .old_start = 24 * P, .old_end = 40 * P, .new_start = 64 * P, .new_end = 80 * P };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_REMAP);
	assert_int_equal(c.new_start, 64 * P);
	assert_int_equal(c.new_end, 80 * P);
	assert_int_equal(c.prot, RW);
	assert_ptr_equal(c.region, ms_aspace_lookup(as, PID, 64 * P));
	assert_int_equal(c.release_start, 24 * P);
	assert_int_equal(c.release_end, 40 * P);

	e = ev(MS_EV_MADVISE);
	e.madvise = (typeof(e.madvise)){ .start = 64 * P, .end = 68 * P, .advice = MADV_DONTNEED };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_MADVISE);
	assert_int_equal(c.advice, MADV_DONTNEED);
	assert_int_equal(c.release_end, 68 * P);
	e.madvise.advice = MADV_DONTDUMP;
	change(as, &e, 1, &c);
	assert_int_equal(c.release_end, 0);                        /* flags change, pages stay */

	e = ev(MS_EV_UNMAP);
	e.unmap.start = 18 * P;
	e.unmap.end = 22 * P;
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_UNMAP);
	assert_string_equal(c.name, "/lib/x.so");
	assert_ptr_equal(c.region, ms_aspace_lookup(as, PID, 16 * P));
	assert_int_equal(c.release_start, 18 * P);
	assert_int_equal(c.release_end, 22 * P);
	ms_aspace_free(as);
}

static void task_changes_described(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e;
	struct ms_change c;

	map(as, 16 * P, 32 * P, "//anon");
	e = ev(MS_EV_MLOCK);
	e.mlock = (typeof(e.mlock)){ .lock = MS_LOCK_LOCKED, .all = true, .def = MS_LOCK_LOCKED };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_LOCK);
	assert_int_equal(c.lock, MS_LOCK_LOCKED);
	assert_string_equal(c.name, "every VMA, and maps to come");
	assert_null(c.region);
	/* mlockall(MCL_FUTURE | MCL_ONFAULT) alone: the maps to come are what it locks. */
	e = ev(MS_EV_MLOCK);
	e.mlock = (typeof(e.mlock)){ .lock = 0, .all = false, .def = MS_LOCK_LOCKED | MS_LOCK_ONFAULT };
	change(as, &e, 1, &c);
	assert_int_equal(c.lock, MS_LOCK_LOCKED | MS_LOCK_ONFAULT);
	assert_string_equal(c.name, "maps to come");
	/* munlock of a range: unlocked. */
	e = ev(MS_EV_MLOCK);
	e.mlock = (typeof(e.mlock)){ .start = 16 * P, .end = 20 * P, .lock = 0, .def = -1 };
	change(as, &e, 1, &c);
	assert_int_equal(c.lock, 0);

	e = ev(MS_EV_FORK);
	e.fork.child_pid = e.fork.child_tid = PID + 1;
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_FORK);
	assert_int_equal(c.child_pid, PID + 1);
	assert_string_equal(c.name, "child 101/101");
	assert_false(c.release_all);

	e = ev(MS_EV_EXIT);
	e.tid = PID + 5;                                          /* a thread: the process goes on */
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_EXIT);
	assert_false(c.release_all);
	e.tid = PID;
	change(as, &e, 1, &c);
	assert_true(c.release_all);

	e = ev(MS_EV_EXEC);
	e.pid = e.tid = PID + 1;
	e.comm.comm = "new";
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_EXEC);
	assert_true(c.release_all);
	assert_string_equal(c.name, "new");
	assert_int_equal(c.pid, PID + 1);

	e = ev(MS_EV_COMM);                                       /* no change to the address space */
	e.comm.comm = "renamed";
	change(as, &e, 0, &c);
	ms_aspace_free(as);
}

static void heap_and_stack_changes_described(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e;
	struct ms_change c;

	e = ev(MS_EV_BRK);
	e.brk = (typeof(e.brk)){ .old_brk = 100 * P, .new_brk = 110 * P, .vma_start = 100 * P, .vma_end = 110 * P };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_BRK);
	assert_string_equal(c.name, "[heap]");
	assert_ptr_equal(c.region, ms_aspace_heap(as, PID));
	assert_int_equal(c.start, 100 * P);
	assert_int_equal(c.end, 110 * P);
	e = ev(MS_EV_BRK);
	e.brk = (typeof(e.brk)){ .old_brk = 110 * P, .new_brk = 104 * P + 10 };
	change(as, &e, 1, &c);
	assert_int_equal(c.release_start, 105 * P);                /* whole pages above the new break */
	assert_int_equal(c.release_end, 110 * P);
	e = ev(MS_EV_BRK);                                        /* only the break told, nothing changed */
	e.brk = (typeof(e.brk)){ .old_brk = 104 * P + 10, .new_brk = 104 * P + 10 };
	change(as, &e, 0, &c);

	e = ev(MS_EV_MAP);
	e.map = (struct ms_event_map){ .start = 1000 * P, .end = 1032 * P, .vma_start = 1000 * P,
				       .vma_end = 1032 * P, .prot = RW, .flags = MAP_PRIVATE, .name = "[stack]",
				       .via = MS_VIA_KERNEL };
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_MAP);
	e.time = now++;
	e.map.start = e.map.vma_start = 990 * P;
	change(as, &e, 1, &c);
	assert_int_equal(c.op, MS_OP_STACK_GROW);
	assert_string_equal(c.name, "[stack]");
	assert_int_equal(c.start, 990 * P);                        /* the stack's extent now */
	assert_int_equal(c.end, 1032 * P);
	assert_ptr_equal(c.region, ms_aspace_stack(as, PID));
	assert_int_equal(c.prot, -1);
	ms_aspace_free(as);
}

/*
 * A LOST record names the task that wrote next once the ring had room, and
 * a CPU's ring is every traced process's: every region alive at a loss is
 * marked, whichever process the record names; one ended before it is not,
 * nor one made after it until the next.
 */
static void lost_marks_every_process(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event other, lost;
	int a, b, c, d;

	(void)state;
	map(as, 100 * P, 110 * P, "//anon");
	a = region_at(as, PID, 100 * P);
	other = ev(MS_EV_MAP);
	other.pid = other.tid = PID + 1;
	other.map = (struct ms_event_map){ .start = 300 * P, .end = 301 * P, .vma_start = 300 * P, .vma_end = 301 * P,
					    .prot = RW, .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &other, NULL), 0);
	b = region_at(as, PID + 1, 300 * P);
	map(as, 200 * P, 201 * P, "//anon");
	c = region_at(as, PID, 200 * P);
	unmap(as, 200 * P, 201 * P);
	lost = ev(MS_EV_LOST);               /* it names PID; PID + 1's records may be the ones lost */
	assert_int_equal(ms_aspace_apply(as, &lost, NULL), 0);
	map(as, 400 * P, 401 * P, "//anon");
	d = region_at(as, PID, 400 * P);
	assert_true(ms_aspace_region(as, (size_t)a)->records_lost);
	assert_true(ms_aspace_region(as, (size_t)b)->records_lost);
	assert_false(ms_aspace_region(as, (size_t)c)->records_lost);
	assert_false(ms_aspace_region(as, (size_t)d)->records_lost);
	lost = ev(MS_EV_LOST);
	assert_int_equal(ms_aspace_apply(as, &lost, NULL), 0);
	assert_true(ms_aspace_region(as, (size_t)d)->records_lost);
	assert_false(ms_aspace_region(as, (size_t)c)->records_lost);
	ms_aspace_free(as);
}

/*
 * Records no kernel makes, as a damaged or hostile recording may hold
 * them: a map of no length or one that ends before it starts (the kernel
 * makes no empty VMA), a move whose ranges end before they start, a brk
 * whose window held a map of no length as its heap's VMA. Each changes
 * nothing: no region, no piece, no change told, and the mapping it lands
 * in stays one VMA whose every page is found.
 */
static void impossible_maps_change_nothing(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_change c;
	struct ms_event e;
	struct vmas v;
	uint64_t a;
	int id, k;

	map(as, 10 * P, 20 * P, "//anon");
	id = region_at(as, PID, 10 * P);
	for (k = 0; k < 6; k++) {
		if (k == 5) {
			e = ev(MS_EV_VMA);                   /* a VMA tree write of no length */
			e.vma.start = e.vma.end = 14 * P;
		} else if (k < 2) {
			e = map_ev(PID, 14 * P, k ? 12 * P : 14 * P, "//anon");   /* no length; ends before */
		} else if (k == 4) {
			e = ev(MS_EV_BRK);                   /* the break where it was, a VMA of no length */
			e.brk.old_brk = e.brk.new_brk = 13 * P;
			e.brk.vma_start = e.brk.vma_end = 14 * P;
		} else {
			e = ev(MS_EV_REMAP);
			e.remap.old_start = k == 2 ? 16 * P : 12 * P;
			e.remap.old_end = k == 2 ? 12 * P : 14 * P;
			e.remap.new_start = 40 * P;
			e.remap.new_end = k == 2 ? 44 * P : 30 * P;
		}
		assert_int_equal(ms_aspace_apply_change(as, &e, &c), 0);
		assert_int_equal(c.op, MS_OP_NONE);
		assert_int_equal(ms_aspace_nr_regions(as), 1);
		v = vmas_of(as, PID);
		assert_int_equal(v.n, 1);
		assert_int_equal(v.s[0], 10 * P);
		assert_int_equal(v.e[0], 20 * P);
		for (a = 10 * P; a < 20 * P; a += P / 2)
			assert_int_equal(region_at(as, PID, a), id);
		assert_int_equal(region_at(as, PID, 40 * P), -1);
	}
	ms_aspace_free(as);
}

static void offsets(const struct ms_vma *v, void *ctx)
{
	uint64_t *out = ctx;

	out[v->start / P % 64] = v->offset;
}

/*
 * An old length of 0 maps a shared mapping's pages again (mm/mremap.c): a
 * VMA of the new length at the new address, the same object from the old
 * address's offset on, past the old VMA's end too, the old VMA whole; over
 * another mapping (MREMAP_FIXED), that one loses what it covers; where
 * nothing is mapped at the old address, nothing changes.
 */
static void old_length_0_maps_again(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e = map_ev(PID, 10 * P, 18 * P, "/tmp/shared");
	uint64_t off[64] = { 0 };
	struct vmas v;
	int id, other, tree;

	e.map.flags = MAP_SHARED;
	e.map.ino = 7;
	for (tree = 0; tree < 2; tree++) {
		assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
		id = region_at(as, PID, 10 * P);
		map(as, 44 * P, 48 * P, "//anon");
		other = region_at(as, PID, 44 * P);
		e = ev(MS_EV_REMAP);
		e.remap.old_start = e.remap.old_end = 12 * P;
		e.remap.new_start = 40 * P;
		e.remap.new_end = 46 * P;
		e.remap.tree = tree;
		assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
		v = vmas_of(as, PID);
		assert_int_equal(v.n, 3);
		assert_int_equal(v.s[0], 10 * P);            /* the old VMA whole */
		assert_int_equal(v.e[0], 18 * P);
		assert_int_equal(v.s[1], 40 * P);
		assert_int_equal(v.e[1], 46 * P);
		assert_int_equal(v.s[2], 46 * P);            /* what is left of the one it went over */
		assert_int_equal(ms_aspace_for_each_vma(as, PID, offsets, off), 0);
		assert_int_equal(off[10], 0);
		assert_int_equal(off[40], 2 * P);
		assert_int_equal(region_at(as, PID, 45 * P), id);   /* past the old VMA's end: found */
		assert_int_equal(region_at(as, PID, 12 * P), id);
		assert_int_equal(region_at(as, PID, 47 * P), other);
		e.remap.old_start = e.remap.old_end = 30 * P;       /* nothing there */
		e.remap.new_start = 60 * P;
		e.remap.new_end = 62 * P;
		assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
		assert_int_equal(region_at(as, PID, 60 * P), -1);
		ms_aspace_free(as);
		as = ms_aspace_new();
		e = map_ev(PID, 10 * P, 18 * P, "/tmp/shared");
		e.map.flags = MAP_SHARED;
		e.map.ino = 7;
	}
	ms_aspace_free(as);
}

/*
 * mprotect's bits that are no VMA bits: PROT_SEM changes nothing (the
 * same protection splits nothing), and PROT_GROWSDOWN runs the range down
 * to its VMA's start (do_mprotect_pkey); each as the oracle's programs
 * found the kernel does. The change says what it did.
 */
static void protect_bits_of_no_vma(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e;
	struct ms_change c;
	struct vmas v;

	(void)state;
	map(as, 16 * P, 32 * P, "//anon");
	protect(as, 18 * P, 20 * P, RW | 0x8 /* PROT_SEM */);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.prot[0], RW);
	protect(as, 20 * P, 22 * P, PROT_READ | 0x8);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.prot[1], PROT_READ);
	map(as, 64 * P, 80 * P, "[stack]");
	protect(as, 70 * P, 71 * P, RW | PROT_GROWSDOWN);        /* the protection it has */
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.s[3], 64 * P);
	assert_int_equal(v.e[3], 80 * P);
	e = ev(MS_EV_PROTECT);
	e.protect.start = 72 * P;
	e.protect.end = 73 * P;
	e.protect.prot = RW | PROT_EXEC | PROT_GROWSDOWN;        /* glibc's executable stack */
	change(as, &e, 1, &c);
	assert_int_equal(c.start, 64 * P);
	assert_int_equal(c.end, 73 * P);
	assert_int_equal(c.prot, RW | PROT_EXEC);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 5);
	assert_int_equal(v.s[3], 64 * P);
	assert_int_equal(v.e[3], 73 * P);
	assert_int_equal(v.prot[3], RW | PROT_EXEC);
	assert_int_equal(v.s[4], 73 * P);
	assert_int_equal(v.prot[4], RW);
	ms_aspace_free(as);
}

/* madvise of pid's [s, e). */
static void advise_in(struct ms_aspace *as, uint32_t pid, uint64_t s, uint64_t e, uint32_t advice)
{
	struct ms_event m = ev(MS_EV_MADVISE);

	m.pid = m.tid = pid;
	m.madvise = (typeof(m.madvise)){ .start = s, .end = e, .advice = advice };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

/*
 * A fork's copy of a written VMA under MADV_WIPEONFORK has no anon_vma
 * (dup_mmap), so in the child it merges with an unwritten neighbour made
 * alike; under MADV_KEEPONFORK its copy has one chained to the parent's,
 * and stays apart. rules/wipe-fork is the kernel's say.
 */
static void wiped_copy_has_no_anon_vma(void **state)
{
	const uint32_t advice[] = { MADV_WIPEONFORK, MADV_KEEPONFORK };
	struct ms_aspace *as;
	struct ms_event f;
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		as = ms_aspace_new();
		map(as, 16 * P, 24 * P, "//anon");
		advise(as, 16 * P, 24 * P, advice[k]);
		advise(as, 20 * P, 24 * P, MADV_DONTDUMP);
		sample(as, 16 * P);
		f = ev(MS_EV_FORK);
		f.fork.child_pid = f.fork.child_tid = PID + 1;
		assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
		advise_in(as, PID + 1, 20 * P, 24 * P, MADV_DODUMP);
		assert_int_equal(vmas_of(as, PID + 1).n, k == 0 ? 1 : 2);
		ms_aspace_free(as);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mremap_shrink_grow_move),
		cmocka_unit_test(old_length_0_maps_again),
		cmocka_unit_test(lost_marks_every_process),
		cmocka_unit_test(brk_grow_and_shrink_below_start),
		cmocka_unit_test(first_brk_after_attach),
		cmocka_unit_test(fork_then_diverge),
		cmocka_unit_test(exec_resets_and_exit_ends),
		cmocka_unit_test(changes_described),
		cmocka_unit_test(task_changes_described),
		cmocka_unit_test(heap_and_stack_changes_described),
		cmocka_unit_test(impossible_maps_change_nothing),
		cmocka_unit_test(protect_bits_of_no_vma),
		cmocka_unit_test(wiped_copy_has_no_anon_vma),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
