/* The address-space model, driven by hand-made events. */
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

#define P 4096ULL
#define PID 100
#define RW (PROT_READ | PROT_WRITE)

static uint64_t now = 1000;

static struct ms_event ev(enum ms_event_kind k)
{
	struct ms_event e;

	memset(&e, 0, sizeof(e));
	e.kind = k;
	e.time = now++;
	e.pid = e.tid = PID;
	return e;
}

/* A new map [s, e) that the kernel merged into the VMA [vs, ve) (the MMAP2 record says so). */
static void map_vma(struct ms_aspace *as, uint64_t s, uint64_t e, uint64_t vs, uint64_t ve, const char *name)
{
	struct ms_event m = ev(MS_EV_MAP);

	m.map.start = s;
	m.map.end = e;
	m.map.vma_start = vs;
	m.map.vma_end = ve;
	m.map.prot = RW;
	m.map.flags = MAP_PRIVATE;
	m.map.name = name;
	m.map.via = MS_VIA_MMAP;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

static void map(struct ms_aspace *as, uint64_t s, uint64_t e, const char *name)
{
	map_vma(as, s, e, s, e, name);
}

static void unmap(struct ms_aspace *as, uint64_t s, uint64_t e)
{
	struct ms_event u = ev(MS_EV_UNMAP);

	u.unmap.start = s;
	u.unmap.end = e;
	assert_int_equal(ms_aspace_apply(as, &u, NULL), 0);
}

static void remap(struct ms_aspace *as, uint64_t os, uint64_t oe, uint64_t ns, uint64_t ne)
{
	struct ms_event r = ev(MS_EV_REMAP);

	r.remap.old_start = os;
	r.remap.old_end = oe;
	r.remap.new_start = ns;
	r.remap.new_end = ne;
	assert_int_equal(ms_aspace_apply(as, &r, NULL), 0);
}

static void protect(struct ms_aspace *as, uint64_t s, uint64_t e, uint32_t prot)
{
	struct ms_event p = ev(MS_EV_PROTECT);

	p.protect.start = s;
	p.protect.end = e;
	p.protect.prot = prot;
	assert_int_equal(ms_aspace_apply(as, &p, NULL), 0);
}

static int region_at(struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	const struct ms_region *r = ms_aspace_lookup(as, pid, addr);

	return r ? (int)r->id : -1;
}

struct vmas { uint64_t s[16], e[16]; uint32_t prot[16]; int n; };

static void collect(const struct ms_vma *v, void *ctx)
{
	struct vmas *out = ctx;

	out->s[out->n] = v->start;
	out->e[out->n] = v->end;
	out->prot[out->n++] = v->prot;
}

static struct vmas vmas_of(struct ms_aspace *as, uint32_t pid)
{
	struct vmas v = { .n = 0 };

	assert_int_equal(ms_aspace_for_each_vma(as, pid, collect, &v), 0);
	return v;
}

static void split_and_merge(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event hint;
	struct vmas v;

	map(as, 16 * P, 32 * P, "//anon");
	protect(as, 20 * P, 24 * P, PROT_READ);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 3);                    /* split in three VMAs */
	assert_int_equal(v.s[1], 20 * P);
	assert_int_equal(v.e[1], 24 * P);
	assert_int_equal(v.prot[1], PROT_READ);
	/* One region still: identity survives the split. */
	assert_int_equal(region_at(as, PID, 16 * P), region_at(as, PID, 31 * P));
	assert_int_equal(region_at(as, PID, 16 * P), region_at(as, PID, 21 * P));
	/* Back to rw: the kernel reports the merged VMA. */
	protect(as, 20 * P, 24 * P, RW);
	hint = ev(MS_EV_VMA);
	hint.vma.start = 16 * P;
	hint.vma.end = 32 * P;
	ms_aspace_apply(as, &hint, NULL);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.s[0], 16 * P);
	assert_int_equal(v.e[0], 32 * P);
	/* Two adjacent mappings the kernel merged stay two regions. */
	map(as, 8 * P, 16 * P, "//anon");
	hint.vma.start = 8 * P;
	ms_aspace_apply(as, &hint, NULL);
	v = vmas_of(as, PID);
	assert_int_equal(v.n, 1);
	assert_int_not_equal(region_at(as, PID, 8 * P), region_at(as, PID, 16 * P));
	ms_aspace_free(as);
}

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

static void advise(struct ms_aspace *as, uint64_t s, uint64_t e, uint32_t advice)
{
	struct ms_event m = ev(MS_EV_MADVISE);

	m.madvise.start = s;
	m.madvise.end = e;
	m.madvise.advice = advice;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
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

static void partial_unmaps(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *r;
	int id;

	map(as, 100 * P, 110 * P, "//anon");
	id = region_at(as, PID, 100 * P);
	unmap(as, 100 * P, 102 * P);                 /* at the start */
	unmap(as, 108 * P, 110 * P);                 /* at the end */
	unmap(as, 104 * P, 105 * P);                 /* in the middle */
	assert_int_equal(region_at(as, PID, 101 * P), -1);
	assert_int_equal(region_at(as, PID, 104 * P), -1);
	assert_int_equal(region_at(as, PID, 102 * P), id);
	assert_int_equal(region_at(as, PID, 107 * P), id);
	r = ms_aspace_region(as, (size_t)id);
	assert_true(r->alive);
	assert_int_equal(r->start, 102 * P);
	assert_int_equal(r->end, 108 * P);
	assert_int_equal(vmas_of(as, PID).n, 2);
	unmap(as, 100 * P, 110 * P);                 /* the rest: the region's life ends */
	assert_false(r->alive);
	assert_int_equal(r->ended_ns, now - 1);
	/* A new mapping at the same address is a new region. */
	map(as, 100 * P, 110 * P, "//anon");
	assert_int_not_equal(region_at(as, PID, 100 * P), id);
	ms_aspace_free(as);
}

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

static void brk(struct ms_aspace *as, uint64_t old, uint64_t new, uint64_t vs, uint64_t ve)
{
	struct ms_event b = ev(MS_EV_BRK);

	b.brk.old_brk = old;
	b.brk.new_brk = new;
	b.brk.vma_start = vs;
	b.brk.vma_end = ve;
	assert_int_equal(ms_aspace_apply(as, &b, NULL), 0);
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
	int parent_r, child_r;

	map(as, 10 * P, 20 * P, "//anon");
	f.fork.child_pid = f.fork.child_tid = 200;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	parent_r = region_at(as, PID, 10 * P);
	child_r = region_at(as, 200, 10 * P);
	assert_true(child_r >= 0);
	assert_int_not_equal(parent_r, child_r);       /* the child's copy is its own region */
	assert_int_equal(ms_aspace_region(as, (size_t)child_r)->pid, 200);
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

static int charged[8], nr_charged;

static void on_charge(void *ctx, const struct ms_event *s, const struct ms_region *r)
{
	charged[nr_charged++] = r ? (int)r->id : -1;
}

static void sample(struct ms_aspace *as, uint64_t addr)
{
	struct ms_event s = ev(MS_EV_SAMPLE);

	s.sample.addr = addr;
	s.sample.has_addr = true;
	assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
}

static void lock(struct ms_aspace *as, uint64_t s, uint64_t e, uint32_t lock, bool all, int32_t def)
{
	struct ms_event m = ev(MS_EV_MLOCK);

	m.mlock.start = s;
	m.mlock.end = e;
	m.mlock.lock = lock;
	m.mlock.all = all;
	m.mlock.def = def;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

/*
 * Eight pages with the second half DONTDUMP: two VMAs, one flag apart, so
 * that a fault in one gives it an anon_vma of its own (the other's is not
 * compatible). Which halves are faulted is `faults` (bit 0: the first).
 */
static struct ms_aspace *halves(uint64_t at, int faults)
{
	struct ms_aspace *as = ms_aspace_new();

	map(as, at, at + 8 * P, "//anon");
	advise(as, at + 4 * P, at + 8 * P, MADV_DONTDUMP);
	if (faults & 1)
		sample(as, at + P);
	if (faults & 2)
		sample(as, at + 5 * P);
	return as;
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

/* VM_ACCOUNT: mprotect adds it and never takes it away, so a RELRO-like piece never merges with read-only. */
static void accounting_keeps_apart(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event m = ev(MS_EV_MAP);

	m.map = (struct ms_event_map){ .start = 16 * P, .end = 20 * P, .vma_start = 16 * P, .vma_end = 20 * P,
				       .prot = PROT_READ, .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	map(as, 20 * P, 24 * P, "//anon");               /* writable: accounted */
	protect(as, 20 * P, 24 * P, PROT_READ);
	advise(as, 16 * P, 24 * P, MADV_DONTDUMP);
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

static void stack_fault_before_growth(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_aspace_listener l = { .charge = on_charge };
	struct ms_event g;
	enum ms_aspace_op op;
	int stack;

	ms_aspace_set_listener(as, &l, NULL);
	nr_charged = 0;
	g = ev(MS_EV_MAP);
	g.map.start = g.map.vma_start = 1000 * P;
	g.map.end = g.map.vma_end = 1032 * P;
	g.map.name = "[stack]";
	g.map.via = MS_VIA_KERNEL;
	ms_aspace_apply(as, &g, NULL);
	stack = region_at(as, PID, 1000 * P);
	sample(as, 999 * P + 8);                       /* the fault comes first ... */
	assert_int_equal(nr_charged, 0);               /* ... and waits */
	g = ev(MS_EV_MAP);                             /* ... then the growth record */
	g.map.start = g.map.vma_start = 999 * P;
	g.map.end = g.map.vma_end = 1032 * P;
	g.map.name = "[stack]";
	g.map.via = MS_VIA_KERNEL;
	assert_int_equal(ms_aspace_apply(as, &g, &op), 0);
	assert_int_equal(op, MS_OP_STACK_GROW);
	assert_int_equal(nr_charged, 1);
	assert_int_equal(charged[0], stack);
	assert_int_equal(region_at(as, PID, 999 * P), stack);
	/* A wild access below the stack that no growth follows is unmapped. */
	sample(as, 900 * P);
	sample(as, 1010 * P);
	assert_int_equal(nr_charged, 3);
	assert_int_equal(charged[1], -1);
	assert_int_equal(charged[2], stack);
	sample(as, 990 * P);
	ms_aspace_finish(as);
	assert_int_equal(charged[3], -1);
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

/* What a listener heard: (time, region id or -1), in order. */
struct heard { uint64_t time[8192]; int id[8192]; int n, runs; };

static void heard_one(void *ctx, const struct ms_event *s, const struct ms_region *r)
{
	struct heard *h = ctx;

	assert_true(h->n < 8192);
	h->time[h->n] = s->time;
	h->id[h->n++] = r ? (int)r->id : -1;
}

static void heard_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct heard *h = ctx;
	struct ms_event tmp;
	size_t i;

	h->runs++;
	assert_non_null(r);
	for (i = 0; i < run->n; i++)
		heard_one(ctx, ms_samples_event(run, i, &tmp), r);
}

static struct ms_event map_ev(uint32_t pid, uint64_t s, uint64_t e, const char *name)
{
	struct ms_event m = ev(MS_EV_MAP);

	m.pid = m.tid = pid;
	m.map.start = m.map.vma_start = s;
	m.map.end = m.map.vma_end = e;
	m.map.prot = RW;
	m.map.flags = MAP_PRIVATE;
	m.map.name = name;
	m.map.via = !strcmp(name, "[stack]") ? MS_VIA_KERNEL : MS_VIA_MMAP;
	return m;
}

static struct ms_event sample_ev(uint32_t pid, uint32_t tid, uint64_t addr)
{
	struct ms_event e = ev(MS_EV_SAMPLE);

	e.pid = pid;
	e.tid = tid;
	e.sample.addr = addr;
	e.sample.has_addr = true;
	return e;
}

/*
 * Runs of samples through ms_aspace_apply_run charge exactly what one call
 * per event does, in the same order: clustered samples, other processes,
 * thread stacks named by SP, unmapped addresses, a stack fault that waits
 * for its growth record, and maps and unmaps in the middle of runs.
 */
static void runs_charge_as_one_by_one(void **state)
{
	static struct ms_event evs[6000];
	static struct heard a, b, c2;
	struct ms_aspace *one = ms_aspace_new(), *run = ms_aspace_new(), *pairs = ms_aspace_new();
	struct ms_aspace_listener la = { .charge = heard_one };
	struct ms_aspace_listener lb = { .charge = heard_one, .charge_run = heard_run };
	const struct ms_region *ra, *rb;
	uint64_t stack_lo = 1000 * P;
	size_t n = 0, i, k, first;
	int c;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c2, 0, sizeof(c2));
	ms_aspace_set_listener(one, &la, &a);
	ms_aspace_set_listener(run, &lb, &b);
	ms_aspace_set_listener(pairs, &lb, &c2);
	evs[n++] = map_ev(PID, 100 * P, 200 * P, "//anon");
	evs[n++] = map_ev(PID, 300 * P, 400 * P, "/lib/x.so");
	evs[n++] = map_ev(PID, 500 * P, 600 * P, "//anon");       /* a thread's stack, named by SP */
	evs[n++] = map_ev(PID, 1000 * P, 1032 * P, "[stack]");
	evs[n++] = map_ev(PID + 1, 100 * P, 150 * P, "//anon");
	/*
	 * First, in one run: samples that make a piece the quick one, a change
	 * to that piece, and samples in it again; then a thread's first sample
	 * in a piece the main thread just used (the thread's stack gets named).
	 */
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
	first = n;
	srand(7);
	while (n < 5900) {
		c = rand() % 100;
		if (c < 2) {                     /* the model changes mid-run */
			evs[n] = ev(rand() % 2 ? MS_EV_UNMAP : MS_EV_MAP);
			if (evs[n].kind == MS_EV_UNMAP) {
				evs[n].unmap.start = 350 * P;
				evs[n].unmap.end = 400 * P;
			} else
				evs[n] = map_ev(PID, 350 * P, 400 * P, "//anon");
			n++;
			continue;
		}
		if (c < 4) {                     /* a stack fault, then the growth the kernel records */
			stack_lo -= P;
			evs[n] = ev(MS_EV_SAMPLE);
			evs[n].sample.addr = stack_lo + 8;
			evs[n++].sample.has_addr = true;
			evs[n++] = map_ev(PID, stack_lo, 1032 * P, "[stack]");
			continue;
		}
		for (k = 0; k < 1 + (size_t)(rand() % 150) && n < 5900; k++) {   /* a cluster */
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
	}
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
	assert_int_equal(b.n, a.n);
	assert_int_equal(c2.n, a.n);
	assert_true(b.runs > 0);
	for (i = 0; i < (size_t)a.n; i++) {
		assert_int_equal(b.time[i], a.time[i]);
		assert_int_equal(b.id[i], a.id[i]);
		assert_int_equal(c2.time[i], a.time[i]);
		assert_int_equal(c2.id[i], a.id[i]);
	}
	/* The same regions, named the same (the thread's stack among them). */
	assert_int_equal(ms_aspace_nr_regions(run), ms_aspace_nr_regions(one));
	assert_string_equal(ms_aspace_lookup(one, PID, 510 * P)->name, "[stack:107]");
	for (i = 0; i < ms_aspace_nr_regions(one); i++) {
		ra = ms_aspace_region(one, i);
		rb = ms_aspace_region(run, i);
		assert_string_equal(rb->name, ra->name);
		assert_int_equal(rb->kind, ra->kind);
		assert_int_equal(rb->start, ra->start);
		assert_int_equal(rb->end, ra->end);
	}
	ms_aspace_free(one);
	ms_aspace_free(run);
	ms_aspace_free(pairs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_and_merge),
		cmocka_unit_test(mprotect_to_same_protection),
		cmocka_unit_test(vm_flags_split_and_merge),
		cmocka_unit_test(mremap_grow_merges_next),
		cmocka_unit_test(partial_unmaps),
		cmocka_unit_test(mremap_shrink_grow_move),
		cmocka_unit_test(brk_grow_and_shrink_below_start),
		cmocka_unit_test(first_brk_after_attach),
		cmocka_unit_test(fork_then_diverge),
		cmocka_unit_test(anon_vma_both_ways),
		cmocka_unit_test(mlock_split_merge_populate),
		cmocka_unit_test(accounting_keeps_apart),
		cmocka_unit_test(stack_fault_before_growth),
		cmocka_unit_test(exec_resets_and_exit_ends),
		cmocka_unit_test(runs_charge_as_one_by_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
