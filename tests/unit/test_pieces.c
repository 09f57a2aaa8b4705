/* The piece array: splits, partial unmaps, VMAs as the records report them. */
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

#include "aspace/internal.h"

#include "aspace_events.h"

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

/*
 * The array itself, through the internal calls: carving a range splits
 * pieces at its edges (the parts stay one VMA), a reported VMA sets where
 * VMAs begin, filling adds pages only where nothing is, and unmapping a
 * region's last pages ends it.
 */
static void carve_fill_and_vmas(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct proc *p = ms_aspace_proc_make(as, PID);
	const struct ms_region *r;
	size_t i, j, first, last;

	map(as, 16 * P, 32 * P, "//anon");
	r = ms_aspace_lookup(as, PID, 16 * P);
	assert_int_equal(p->n, 1);
	assert_int_equal(ms_pieces_carve(p, 20 * P, 24 * P, &i, &j), 0);
	assert_int_equal(p->n, 3);
	assert_int_equal(i, 1);
	assert_int_equal(j, 2);
	assert_int_equal(p->p[1].start, 20 * P);
	assert_int_equal(p->p[1].end, 24 * P);
	assert_true(p->p[1].join && p->p[2].join);           /* split by us, one VMA to the kernel */
	assert_int_equal(p->p[2].pgoff - p->p[1].pgoff, 4 * P);
	ms_pieces_vma(p, 1, &first, &last);
	assert_int_equal(first, 0);
	assert_int_equal(last, 2);
	assert_int_equal(lower(p, 24 * P), 2);
	assert_int_equal(lower(p, 24 * P - 1), 1);
	assert_int_equal(lower(p, 40 * P), 3);
	ms_pieces_set_vma(p, 16 * P, 20 * P);                 /* the kernel says [16, 20) is a VMA of its own */
	assert_false(p->p[1].join);
	ms_pieces_vma(p, 1, &first, &last);
	assert_int_equal(first, 1);
	assert_int_equal(last, 2);
	assert_int_equal(ms_pieces_fill(p, 8 * P, 40 * P, r, RW, MAP_PRIVATE, 0), 0);
	assert_int_equal(p->n, 5);                            /* [8, 16) and [32, 40) added, the rest kept */
	assert_int_equal(p->p[0].start, 8 * P);
	assert_int_equal(p->p[4].start, 32 * P);
	assert_int_equal(p->p[4].end, 40 * P);
	ms_pieces_touch(as, r->id);
	ms_pieces_settle(as, p, now);
	assert_int_equal(r->start, 8 * P);
	assert_int_equal(r->end, 40 * P);
	assert_int_equal(ms_pieces_unmap(as, p, 0, 64 * P, -1, now), 0);
	assert_int_equal(p->n, 0);
	assert_false(r->alive);
	ms_aspace_free(as);
}

/* The same change to two models; b forgets its known VMA before it, so that each VMA is walked whole. */
struct twin {
	struct ms_aspace *a, *b;
	struct proc *pa, *pb;
};

static void twin_check(const struct twin *t)
{
	size_t i;

	assert_int_equal(t->pa->n, t->pb->n);
	for (i = 0; i < t->pa->n; i++) {
		assert_int_equal(t->pa->p[i].start, t->pb->p[i].start);
		assert_int_equal(t->pa->p[i].end, t->pb->p[i].end);
		assert_int_equal(t->pa->p[i].join, t->pb->p[i].join);
		assert_int_equal(t->pa->p[i].anon, t->pb->p[i].anon);
		assert_int_equal(t->pa->p[i].region, t->pb->p[i].region);
	}
}

static uint64_t rnd(uint64_t *x, uint64_t n)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (*x >> 33) % n;
}

/* One random change (addresses in [0, 256) pages) to both models. */
static void twin_change(struct twin *t, uint64_t *x)
{
	uint64_t s = rnd(x, 250) * P, e = s + (1 + rnd(x, 6)) * P;
	uint64_t vs = s - rnd(x, 4) * P * (s >= 4 * P), ve = e + rnd(x, 4) * P;
	struct ms_aspace *as[2] = { t->a, t->b };
	struct ms_event v;
	uint64_t to = rnd(x, 250) * P;
	unsigned int k = (unsigned int)rnd(x, 6), i;
	uint32_t prot = rnd(x, 2) ? RW : PROT_READ;

	if (t->pa->vma_lo < t->pa->vma_hi && rnd(x, 2)) {   /* a report around the known VMA: passed over */
		vs = vs < t->pa->vma_lo ? vs : t->pa->vma_lo;
		ve = ve > t->pa->vma_hi ? ve : t->pa->vma_hi;
	}
	t->pb->vma_lo = t->pb->vma_hi = 0;
	for (i = 0; i < 2; i++) {
		if (k == 0)
			map_vma(as[i], s, e, vs, ve, "//anon");
		else if (k == 1)
			unmap(as[i], s, e);
		else if (k == 2)
			protect(as[i], s, e, prot);
		else if (k == 3) {
			v = ev(MS_EV_VMA);
			v.vma.start = vs;
			v.vma.end = ve;
			assert_int_equal(ms_aspace_apply(as[i], &v, NULL), 0);
		} else if (k == 4)
			sample(as[i], s);
		else
			remap(as[i], s, e, to, to + (e - s));
	}
}

/*
 * A VMA that grows down a map at a time (the kernel's top-down placement,
 * each MMAP2 reporting the whole merged VMA) is passed over where known:
 * the pieces come out as a model that walks every VMA whole has them,
 * through that growth and then through random maps, unmaps, mremaps,
 * mprotects, VMA reports and faults (which give anon_vmas).
 */
static void known_vma_as_walked(void **state)
{
	struct twin t = { ms_aspace_new(), ms_aspace_new(), NULL, NULL };
	struct ms_event v;
	uint64_t x = 1, k;
	size_t i, j;

	t.pa = ms_aspace_proc_make(t.a, PID);
	t.pb = ms_aspace_proc_make(t.b, PID);
	for (k = 0; k < 64; k++) {             /* down from 256 pages: [256 - k - 1, 256) is one VMA */
		t.pb->vma_lo = t.pb->vma_hi = 0;
		map_vma(t.a, (255 - k) * P, (256 - k) * P, (255 - k) * P, 256 * P, "//anon");
		map_vma(t.b, (255 - k) * P, (256 - k) * P, (255 - k) * P, 256 * P, "//anon");
		if (k % 8 == 3) {
			sample(t.a, (255 - k) * P);
			sample(t.b, (255 - k) * P);
		}
		twin_check(&t);
	}
	assert_int_equal(vmas_of(t.a, PID).n, 1);
	assert_int_equal(t.pa->vma_lo, 192 * P);        /* known whole */
	/* A carve over all of it (a VMA tree write's, before the report) splits nothing in it: still known. */
	assert_int_equal(ms_pieces_carve(t.pa, 192 * P, 256 * P, &i, &j), 0);
	assert_int_equal(t.pa->vma_lo, 192 * P);
	assert_int_equal(t.pa->vma_hi, 256 * P);
	v = ev(MS_EV_VMA);
	v.vma.start = 192 * P;
	v.vma.end = 256 * P;
	assert_int_equal(ms_aspace_apply(t.a, &v, NULL), 0);
	assert_int_equal(ms_aspace_apply(t.b, &v, NULL), 0);
	twin_check(&t);
	/* Its top map unmapped: the rest stays known. */
	unmap(t.a, 255 * P, 256 * P);
	unmap(t.b, 255 * P, 256 * P);
	assert_int_equal(t.pa->vma_hi, 255 * P);
	twin_check(&t);
	for (k = 0; k < 2000; k++) {
		twin_change(&t, &x);
		twin_check(&t);
	}
	ms_aspace_free(t.a);
	ms_aspace_free(t.b);
}

struct range_in {
	uint64_t s, e;
	bool in;
};

static void range_in_vma(const struct ms_vma *v, void *ctx)
{
	struct range_in *q = ctx;

	q->in |= v->start <= q->s && q->e <= v->end;
}

/*
 * An mprotect undone, then the VMA the kernel merged back reported: the
 * three pieces are one again at the next settle, with the offsets of the
 * first (an anonymous map's address's, where the record says none). Pieces of another region, another anon_vma or another VMA beside
 * them stay apart.
 */
static void alike_pieces_joined(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct proc *p = ms_aspace_proc_make(as, PID);
	struct ms_event v = ev(MS_EV_VMA);

	(void)state;
	map(as, 16 * P, 32 * P, "//anon");
	protect(as, 20 * P, 24 * P, PROT_READ);
	assert_int_equal(p->n, 3);
	protect(as, 20 * P, 24 * P, RW);
	v.vma.start = 16 * P;
	v.vma.end = 32 * P;
	assert_int_equal(ms_aspace_apply(as, &v, NULL), 0);
	ms_pieces_settle(as, p, now);
	assert_int_equal(p->n, 1);
	assert_int_equal(p->p[0].start, 16 * P);
	assert_int_equal(p->p[0].end, 32 * P);
	assert_int_equal(p->p[0].pgoff, 16 * P);
	assert_int_equal(ms_aspace_region(as, 0)->prot, RW);
	/* A second region beside it, in the same VMA: two pieces still. */
	map_vma(as, 32 * P, 40 * P, 16 * P, 40 * P, "//anon");
	ms_pieces_settle(as, p, now);
	assert_int_equal(p->n, 2);
	/* A fault gives [16, 40)'s VMA one anon_vma; a split of the second region's VMA keeps its halves apart. */
	sample(as, 16 * P);
	protect(as, 36 * P, 40 * P, PROT_READ);
	assert_int_equal(p->n, 3);
	assert_false(p->p[2].join);
	ms_aspace_free(as);
}

/* Whether [s, e) lies in one VMA of PID. */
static bool in_one_vma(struct ms_aspace *as, uint64_t s, uint64_t e)
{
	struct range_in q = { s, e, false };

	assert_int_equal(ms_aspace_for_each_vma(as, PID, range_in_vma, &q), 0);
	return q.in;
}

/* Every region of PID as its pieces have it: alive where it has one, its extent theirs, its perms the biggest's. */
static void regions_as_pieces_say(struct ms_aspace *as, struct proc *p)
{
	uint64_t start, end, big;
	uint32_t prot;
	size_t id, i;

	for (id = 0; id < ms_aspace_nr_regions(as); id++) {
		const struct ms_region *r = ms_aspace_region(as, id);

		if (r->pid != PID)
			continue;
		start = UINT64_MAX;
		end = big = 0;
		prot = 0;
		for (i = 0; i < p->n; i++) {
			if (p->p[i].region != id)
				continue;
			start = p->p[i].start < start ? p->p[i].start : start;
			end = p->p[i].end > end ? p->p[i].end : end;
			if (p->p[i].end - p->p[i].start > big) {   /* the first of the biggest, by address */
				big = p->p[i].end - p->p[i].start;
				prot = p->p[i].prot;
			}
		}
		assert_int_equal(r->alive, end != 0);
		if (!end)
			continue;
		assert_int_equal(r->start, start);
		assert_int_equal(r->end, end);
		assert_int_equal(r->prot, prot);
	}
}

/*
 * A reservation of 8,192 pages cut in 64-page pieces of three perms (the
 * biggest tie: the first by address gives the region's perms), then
 * carved by thousands of mprotects into thousands of pieces, with maps
 * placed over it, unmaps and moves at random (its ends among them), as a
 * JIT's heap is: it is settled from a heap of its pieces' sizes
 * (p->nr_big), and after every change each region's extent, perms and
 * life are those its pieces give.
 */
static void many_pieces_settled_as_scanned(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct proc *p = ms_aspace_proc_make(as, PID);
	static const uint32_t prots[] = { PROT_NONE, PROT_READ, RW };
	const struct ms_region *r;
	uint64_t x = 7, s, e, k, op;
	bool heaped = false;

	(void)state;
	map(as, 1024 * P, 9216 * P, "//anon");
	for (k = 0; k < 128; k++)             /* 64-page pieces of three perms: the biggest are many */
		protect(as, (1024 + 64 * k) * P, (1088 + 64 * k) * P, prots[k % 3]);
	for (k = 0; k < 6000; k++) {
		s = (1000 + rnd(&x, 8240)) * P;
		e = s + (1 + rnd(&x, k % 997 ? 8 : 60)) * P;
		r = ms_aspace_region(as, 0);
		op = rnd(&x, 100);
		if (op < 2)
			map(as, s, s + P, "//anon");
		else if (op < 4)
			unmap(as, s, s + 2 * P);
		else if (op < 6 && in_one_vma(as, s, s + P))   /* mremap moves what lies in one VMA (else EFAULT) */
			remap(as, s, s + P, (20000 + rnd(&x, 4000)) * P, (20000 + rnd(&x, 4000)) * P + P);
		else if (op < 7 && r->alive && rnd(&x, 2))    /* the reservation's first page, or its last */
			unmap(as, r->start, r->start + P);
		else if (op < 7 && r->alive)
			unmap(as, r->end - P, r->end);
		else
			protect(as, s, e, prots[rnd(&x, 3)]);
		heaped |= p->nr_big > 0;
		regions_as_pieces_say(as, p);
	}
	assert_true(heaped);
	ms_aspace_free(as);
}

/*
 * A piece of the reservation's heap gone, with another region's piece of
 * its size put where it was (a MAP_FIXED map over it), is not the
 * reservation's biggest when it comes to the top: its entry is dropped
 * for the region's own next biggest, as the scan would have it.
 */
static void heap_top_of_another_region_passed_over(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct proc *p = ms_aspace_proc_make(as, PID);
	const struct ms_region *r;
	struct ms_event m;
	uint64_t base = 1024 * P, k;

	(void)state;
	map(as, base, base + 500 * P, "//anon");
	for (k = 0; k < 140; k += 2)          /* 140 pieces of a page: the region keeps a heap */
		protect(as, base + k * P, base + (k + 1) * P, PROT_READ);
	protect(as, base + 339 * P, base + 340 * P, PROT_NONE);   /* [139, 339): 200 pages, the biggest */
	protect(as, base + 499 * P, base + 500 * P, PROT_NONE);   /* [340, 499): 159 pages, the next */
	r = ms_aspace_region(as, (size_t)region_at(as, PID, base));
	assert_true(p->nr_big > 0);
	assert_int_equal(r->prot, RW);
	m = map_ev(PID, base + 340 * P, base + 499 * P, "//anon");
	m.map.prot = PROT_READ | PROT_EXEC;   /* over the 159 pages: its entry stays below the biggest's */
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
	protect(as, base + 239 * P, base + 240 * P, PROT_READ);   /* the biggest cut: 100, 1 and 99 pages */
	r = ms_aspace_region(as, (size_t)region_at(as, PID, base));
	assert_true(p->nr_big > 0);
	assert_int_equal(r->prot, RW);        /* the 100 pages at 139, not the other region's 159 */
	regions_as_pieces_say(as, p);
	ms_aspace_free(as);
}

/*
 * lower_from_c() against a scan, from every remembered piece (p->near, in
 * range or not), every lower bound and every address: its first tries, its
 * gallops either way and its binary search all give the one answer.
 */
static void lower_from_any_near(void **state)
{
	struct piece v[24];
	struct proc p = { .p = v };
	size_t n, i, near, lo, want;
	uint64_t addr;

	for (n = 0; n <= 24; n += 3) {
		for (i = 0; i < n; i++)                  /* gaps between some pieces */
			v[i] = (struct piece){ .start = 10 * i + (i % 3 == 0), .end = 10 * i + 8 };
		p.n = n;
		for (near = 0; near <= n + 2; near++)
			for (lo = 0; lo <= n; lo++)
				for (addr = 0; addr <= 10 * n + 2; addr++) {
					for (want = lo; want < n && v[want].end <= addr; want++)
						;
					p.near = near;
					assert_int_equal(lower_from_c(&p, lo, addr), want);
				}
	}
}

/* A copy of p's pieces and what the carve and the marking read, with room to insert. */
static struct proc proc_copy(const struct proc *p)
{
	struct proc c = *p;

	c.p = malloc((p->n + 16) * sizeof(*c.p));
	assert_non_null(c.p);
	memcpy(c.p, p->p, p->n * sizeof(*c.p));
	c.cap = p->n + 16;
	c.head = 0;
	c.big = NULL;
	c.nr_big = 0;
	return c;
}

static void proc_same(const struct proc *a, const struct proc *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->p[i].start, b->p[i].start);
		assert_int_equal(a->p[i].end, b->p[i].end);
		assert_int_equal(a->p[i].pgoff, b->p[i].pgoff);
		assert_int_equal(a->p[i].join, b->p[i].join);
		assert_int_equal(a->p[i].anon, b->p[i].anon);
		assert_int_equal(a->p[i].region, b->p[i].region);
	}
	assert_int_equal(a->vma_lo, b->vma_lo);
	assert_int_equal(a->vma_hi, b->vma_hi);
	assert_int_equal(a->vma_anon, b->vma_anon);
	assert_int_equal(a->nr_cuts, b->nr_cuts);
	assert_memory_equal(a->cuts, b->cuts, a->nr_cuts * sizeof(a->cuts[0]));
	assert_int_equal(a->cut_lo, b->cut_lo);
	assert_int_equal(a->cut_hi, b->cut_hi);
}

/* A fast path's share of the cases tried: more than min tried, and more than tenths in ten of them taken. */
static void taken_share(size_t taken, size_t tried, size_t min, size_t tenths)
{
	print_message("%zu of %zu\n", taken, tried);
	assert_true(tried > min && taken * 10 > tried * tenths);
}

static void twin_free(struct twin *t)
{
	ms_aspace_free(t->a);
	ms_aspace_free(t->b);
}

/*
 * The known VMA reported again: ms_pieces_vma_again() leaves the pieces,
 * the known VMA and the cuts as the carve and the marking it stands for
 * do, at every step of the random changes of known_vma_as_walked(), and
 * takes most of the reports of the VMA made there. A report of anything
 * else is refused.
 */
static void vma_again_as_carved(void **state)
{
	struct twin t = { ms_aspace_new(), ms_aspace_new(), NULL, NULL };
	struct proc a, b;
	uint64_t x = 7, k, lo, hi;
	size_t i, j, taken = 0, tried = 0;

	t.pa = ms_aspace_proc_make(t.a, PID);
	t.pb = ms_aspace_proc_make(t.b, PID);
	for (k = 0; k < 48; k++) {
		map_vma(t.a, (255 - k) * P, (256 - k) * P, (255 - k) * P, 256 * P, "//anon");
		map_vma(t.b, (255 - k) * P, (256 - k) * P, (255 - k) * P, 256 * P, "//anon");
	}
	for (k = 0; k < 3000; k++) {
		twin_change(&t, &x);
		if ((lo = t.pa->vma_lo) >= (hi = t.pa->vma_hi))
			continue;
		tried++;
		a = proc_copy(t.pa);
		b = proc_copy(t.pa);
		a.nr_cuts = b.nr_cuts = (size_t)rnd(&x, 3);
		if (ms_pieces_vma_again(&a, lo, hi)) {
			taken++;
			assert_int_equal(ms_pieces_carve(&b, lo, hi, &i, &j), 0);
			ms_pieces_set_vma(&b, lo, hi);
			proc_same(&a, &b);
			/* Any one of its pieces' flags not as the VMA's should be: refused, nothing done. */
			a.nr_cuts = b.nr_cuts = 0;
			a.p[i].join = true;
			assert_false(ms_pieces_vma_again(&a, lo, hi));
			a.p[i].join = false;
			a.p[i].anon++;
			assert_false(ms_pieces_vma_again(&a, lo, hi));
			a.p[i].anon--;
			if (j > i + 1) {
				a.p[i + 1].join = false;
				assert_false(ms_pieces_vma_again(&a, lo, hi));
				a.p[i + 1].join = true;
			}
			if (j < a.n && a.p[j].start == hi) {
				a.p[j].join = true;
				assert_false(ms_pieces_vma_again(&a, lo, hi));
				a.p[j].join = false;
			}
			proc_same(&a, &b);
		}
		free(b.p);
		b = proc_copy(&a);                 /* not the known VMA: nothing done */
		assert_false(ms_pieces_vma_again(&a, lo, hi + P));
		assert_false(ms_pieces_vma_again(&a, lo + P, hi));
		assert_false(ms_pieces_vma_again(&a, lo - P, hi));
		proc_same(&a, &b);
		free(a.p);
		free(b.p);
	}
	taken_share(taken, tried, 1000, 9);
	twin_free(&t);
}

/*
 * ms_aspace_prot_at() from any hint (the piece of the last sample, in
 * range or not) and with the last process another: the protection of the
 * piece that holds the address, -1 in a hole.
 */
static void prot_at_from_any_hint(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct proc *p;
	uint64_t a;
	size_t h;
	int want, k;

	map(as, 16 * P, 48 * P, "//anon");
	for (k = 0; k < 6; k++)
		protect(as, (17 + 5 * (uint64_t)k) * P, (19 + 5 * (uint64_t)k) * P, k % 2 ? PROT_READ : PROT_NONE);
	map(as, 64 * P, 72 * P, "//anon");
	p = ms_aspace_proc_make(as, PID);
	assert_true(p->n > 10);
	for (h = 0; h <= p->n + 1; h++)
		for (a = 8 * P; a < 80 * P; a += P / 2) {
			for (want = -1, k = 0; k < (int)p->n; k++)
				if (p->p[k].start <= a && a < p->p[k].end)
					want = (int)p->p[k].prot;
			p->hint = h;
			assert_int_equal(ms_aspace_prot_at(as, PID, a), want);
			ms_aspace_proc_make(as, PID + 1);     /* the last process another: found by its pid */
			p->hint = h;
			assert_int_equal(ms_aspace_prot_at(as, PID, a), want);
			ms_aspace_proc_make(as, PID);
		}
	ms_aspace_free(as);
}

/*
 * A VMA other than the known one reported as it is: ms_pieces_vma_whole()
 * leaves the pieces, the known VMA and the cuts as the carve and the
 * marking do, for each VMA of the model at every step of random changes;
 * it refuses, with nothing done, a range that is not one VMA as its
 * pieces lie, one a piece's flags say otherwise of, and one over the
 * known VMA.
 */
static void vma_whole_as_carved(void **state)
{
	struct twin t = { ms_aspace_new(), ms_aspace_new(), NULL, NULL };
	struct proc a, b;
	uint64_t x = 11, k, lo, hi;
	size_t i, j, f, z, taken = 0, tried = 0;
	bool over;

	t.pa = ms_aspace_proc_make(t.a, PID);
	t.pb = ms_aspace_proc_make(t.b, PID);
	for (k = 0; k < 2000; k++) {
		twin_change(&t, &x);
		if (!t.pa->n)
			continue;
		a = proc_copy(t.pa);
		ms_pieces_vma(&a, (size_t)rnd(&x, a.n), &f, &z);    /* a VMA of the model: pieces [f, z] */
		free(a.p);
		lo = t.pa->p[f].start;
		hi = t.pa->p[z].end;
		over = t.pa->vma_lo < t.pa->vma_hi && t.pa->vma_lo < hi && t.pa->vma_hi > lo;
		a = proc_copy(t.pa);
		b = proc_copy(t.pa);
		a.nr_cuts = b.nr_cuts = (size_t)rnd(&x, 3);
		tried += !over;
		if (ms_pieces_vma_whole(&a, lo, hi)) {
			assert_false(over);
			taken++;
			assert_int_equal(ms_pieces_carve(&b, lo, hi, &i, &j), 0);
			ms_pieces_set_vma(&b, lo, hi);
			proc_same(&a, &b);
			a.nr_cuts = b.nr_cuts = 0;
			a.vma_lo = b.vma_lo = a.vma_hi = b.vma_hi = 0;
			a.p[i].join = true;                  /* joined to the piece before: refused */
			assert_false(ms_pieces_vma_whole(&a, lo, hi));
			a.p[i].join = false;
			if (j > i + 1) {                     /* a piece inside not joined, or of another anon */
				a.p[j - 1].join = false;
				assert_false(ms_pieces_vma_whole(&a, lo, hi));
				a.p[j - 1].join = true;
				a.p[j - 1].anon++;
				assert_false(ms_pieces_vma_whole(&a, lo, hi));
				a.p[j - 1].anon--;
			}
			if (j < a.n && a.p[j].start == hi) { /* the piece after joined to it */
				a.p[j].join = true;
				assert_false(ms_pieces_vma_whole(&a, lo, hi));
				a.p[j].join = false;
			}
			for (f = i + 1; f < j; f++)         /* a gap before a joined piece */
				if (a.p[f].end - a.p[f].start > P) {
					a.p[f].start += P;
					assert_false(ms_pieces_vma_whole(&a, lo, hi));
					a.p[f].start -= P;
					break;
				}
			assert_false(ms_pieces_vma_whole(&a, lo, hi + P));
			if (hi - lo > P) {
				assert_false(ms_pieces_vma_whole(&a, lo + P, hi));
				assert_false(ms_pieces_vma_whole(&a, lo, hi - P));
			}
			a.vma_lo = lo + (hi - lo) / 2;       /* a known VMA over it */
			a.vma_hi = hi + P;
			b.vma_lo = a.vma_lo;
			b.vma_hi = a.vma_hi;
			assert_false(ms_pieces_vma_whole(&a, lo, hi));
			proc_same(&a, &b);
		}
		free(a.p);
		free(b.p);
	}
	taken_share(taken, tried, 500, 8);
	twin_free(&t);
}

/*
 * A map of no length where the known VMA ends, with the piece after it
 * joined to it (a report of the VMA and the next as one, then of the
 * first alone): the carve's and the marking's search for the VMA's end
 * passes over the piece of no length and parts the one after; so must a
 * report of the known VMA again, not leave it joined.
 */
static void vma_again_map_of_no_length_after(void **state)
{
	struct ms_aspace *as[2] = { ms_aspace_new(), ms_aspace_new() };
	struct proc *p[2];
	struct ms_event v = ev(MS_EV_VMA);
	struct piece z;
	size_t i, j;
	int k;

	for (k = 0; k < 2; k++) {
		map(as[k], 10 * P, 20 * P, "//anon");
		map(as[k], 20 * P, 30 * P, "//anon");
		v.vma.start = 10 * P;
		v.vma.end = 30 * P;
		assert_int_equal(ms_aspace_apply(as[k], &v, NULL), 0);
		p[k] = ms_aspace_proc_make(as[k], PID);
		z = p[k]->p[1];                          /* a piece of no length at 20 (no event makes one) */
		z.end = z.start;
		z.prot = PROT_READ;                      /* not alike the next: the settle of a report leaves it */
		assert_int_equal(ms_pieces_insert(p[k], 1, &z), 0);
		assert_int_equal(ms_aspace_apply(as[k], &v, NULL), 0);
		v.vma.end = 20 * P;
		assert_int_equal(ms_aspace_apply(as[k], &v, NULL), 0);
		p[k] = ms_aspace_proc_make(as[k], PID);
		assert_int_equal(p[k]->vma_lo, 10 * P);
		assert_int_equal(p[k]->vma_hi, 20 * P);
		assert_int_equal(p[k]->n, 3);
		assert_true(p[k]->p[2].join);
	}
	assert_int_equal(ms_aspace_apply(as[0], &v, NULL), 0);                  /* reported again */
	assert_int_equal(ms_pieces_carve(p[1], 10 * P, 20 * P, &i, &j), 0);   /* what that stands for */
	ms_pieces_set_vma(p[1], 10 * P, 20 * P);
	assert_false(p[1]->p[2].join);
	for (i = 0; i < p[1]->n; i++)
		assert_int_equal(p[0]->p[i].join, p[1]->p[i].join);
	assert_int_equal(vmas_of(as[0], PID).n, vmas_of(as[1], PID).n);
	ms_aspace_free(as[0]);
	ms_aspace_free(as[1]);
}

/*
 * Randomized: the same events to two models, one through ms_aspace_apply()
 * (which may take ms_pieces_vma_again()), the other with each VMA report
 * applied as ms_pieces_carve() and ms_pieces_set_vma() (apply_vma() before
 * the shortcut): every piece, the known VMA, the cuts and every region
 * alike after each event. Maps of no length, reports of the known VMA,
 * next to it and inverted, forks (some sharing the mm), exits and execs of
 * three pids.
 */
#define DIFF_PIDS 3
#define DIFF_SEEDS 200
#define DIFF_EVENTS 400

static void diff_procs(struct ms_aspace *a, struct ms_aspace *b)
{
	const struct proc *x, *y;
	const struct ms_region *ra, *rb;
	uint32_t pid;
	size_t i;

	for (pid = PID; pid < PID + DIFF_PIDS; pid++) {
		x = ms_u32map_get(&a->procs, pid);
		y = ms_u32map_get(&b->procs, pid);
		assert_true(!x == !y);
		if (!x)
			continue;
		proc_same(x, y);
		for (i = 0; i < x->n; i++) {
			assert_int_equal(x->p[i].prot, y->p[i].prot);
			assert_int_equal(x->p[i].vmflags, y->p[i].vmflags);
		}
		assert_int_equal(x->moved_lo, y->moved_lo);
		assert_int_equal(x->moved_hi, y->moved_hi);
		assert_int_equal(x->heap, y->heap);
		assert_int_equal(x->stack, y->stack);
	}
	assert_int_equal(a->nr, b->nr);
	for (i = 0; i < a->nr; i++) {
		ra = a->regions[i];
		rb = b->regions[i];
		assert_int_equal(ra->start, rb->start);
		assert_int_equal(ra->end, rb->end);
		assert_int_equal(ra->prot, rb->prot);
		assert_int_equal(ra->alive, rb->alive);
		assert_int_equal(ra->ended_ns, rb->ended_ns);
		assert_int_equal(ra->pid, rb->pid);
	}
}

/* A VMA of p as its pieces lie, around a random piece (p has one or more): its bounds. */
static void diff_some_vma(const struct proc *p, uint64_t *x, uint64_t *start, uint64_t *end)
{
	size_t f, z;

	f = z = (size_t)rnd(x, p->n);
	while (f > 0 && p->p[f].join && p->p[f - 1].end == p->p[f].start)
		f--;
	while (z + 1 < p->n && p->p[z + 1].join && p->p[z].end == p->p[z + 1].start)
		z++;
	*start = p->p[f].start;
	*end = p->p[z].end;
}

/* What apply_vma() does after the carve: marks [lo, hi) one VMA, and joins what that made alike. */
static void vma_marked(struct ms_aspace *as, struct proc *p, uint64_t lo, uint64_t hi, uint64_t time)
{
	ms_pieces_set_vma(p, lo, hi);
	if (p->nr_cuts || p->cut_lo < p->cut_hi)
		ms_pieces_settle(as, p, time);
}

/* One random event, applied to both; b's VMA reports by the carve and the marking. */
static void diff_event(struct ms_aspace *a, struct ms_aspace *b, uint64_t *x)
{
	const uint32_t pid = PID + (uint32_t)rnd(x, DIFF_PIDS);
	struct proc *pa = ms_u32map_get(&a->procs, pid), *pb;
	uint64_t s = rnd(x, 64) * P, e = s + rnd(x, 5) * P, lo, hi;
	struct ms_event v;
	unsigned int k = (unsigned int)rnd(x, 100);
	size_t i, j;
	int ea, eb;

	v = ev(MS_EV_VMA);
	v.pid = v.tid = pid;
	if (k < 30) {                               /* a VMA report: the known one, near it, another as it lies, or any */
		lo = pa ? pa->vma_lo : 0;
		hi = pa ? pa->vma_hi : 0;
		switch (rnd(x, 8)) {
		case 0: case 1: case 2: v.vma.start = lo; v.vma.end = hi; break;
		case 3: v.vma.start = lo - P * rnd(x, 2); v.vma.end = hi + P * rnd(x, 2); break;
		case 4: v.vma.start = hi; v.vma.end = lo; break;
		case 5: case 6:                         /* another VMA as it lies (ms_pieces_vma_whole()) */
			if (pa && pa->n) {
				diff_some_vma(pa, x, &v.vma.start, &v.vma.end);
				break;
			}
			/* fall through */
		default: v.vma.start = s; v.vma.end = rnd(x, 4) ? e : s - P * rnd(x, 2); break;
		}
		ea = ms_aspace_apply(a, &v, NULL);
		pb = proc_get(b, pid);
		/* One of no length or inverted changes nothing: the tree holds no such VMA. */
		eb = 0;
		if (v.vma.start < v.vma.end && !(eb = ms_pieces_carve(pb, v.vma.start, v.vma.end, &i, &j)))
			vma_marked(b, pb, v.vma.start, v.vma.end, v.time);
		assert_int_equal(ea, eb);
		return;
	}
	if (k < 50) {
		v = ev(MS_EV_MAP);
		v.map.start = s;
		v.map.end = rnd(x, 5) ? e : s;          /* some of no length */
		v.map.vma_start = s - P * rnd(x, 3) * (s >= 3 * P);
		v.map.vma_end = v.map.end + P * rnd(x, 3);
		v.map.prot = rnd(x, 3) ? RW : PROT_READ;
		v.map.flags = MAP_PRIVATE;
		v.map.name = rnd(x, 8) ? "//anon" : "/lib/x.so";
		v.map.ino = v.map.name[0] == '/';
		v.map.via = rnd(x, 4) ? MS_VIA_MMAP : MS_VIA_KERNEL;
	} else if (k < 58) {
		v = ev(MS_EV_UNMAP);
		v.unmap.start = s;
		v.unmap.end = rnd(x, 6) ? e : s - P;
	} else if (k < 70) {
		v = ev(MS_EV_PROTECT);
		v.protect.start = s;
		v.protect.end = rnd(x, 6) ? e : s - P;
		v.protect.prot = rnd(x, 2) ? RW : PROT_READ;
	} else if (k < 80) {
		v = ev(MS_EV_SAMPLE);
		v.sample.addr = s + rnd(x, 2) * P;
		v.sample.has_addr = true;
		v.sample.fault = true;
	} else if (k < 85) {
		v = ev(MS_EV_REMAP);
		v.remap.old_start = s;
		v.remap.old_end = e + P;
		v.remap.new_start = rnd(x, 3) ? rnd(x, 64) * P : s;
		v.remap.new_end = v.remap.new_start + (1 + rnd(x, 5)) * P;
		v.remap.tree = rnd(x, 2);
	} else if (k < 90) {
		v = ev(MS_EV_MADVISE);
		v.madvise.start = s;
		v.madvise.end = e;
		v.madvise.advice = rnd(x, 2) ? MADV_DONTFORK : MADV_HUGEPAGE;
		v.madvise.tree = rnd(x, 2);
	} else if (k < 95) {
		v = ev(MS_EV_FORK);
		v.fork.child_pid = v.fork.child_tid = PID + (uint32_t)rnd(x, DIFF_PIDS);
		v.fork.share_vm = !rnd(x, 4);
	} else if (k < 98) {
		v = ev(MS_EV_EXIT);
	} else {
		v = ev(MS_EV_EXEC);
		v.comm.comm = "x";
	}
	v.pid = v.tid = pid;
	assert_int_equal(ms_aspace_apply(a, &v, NULL), ms_aspace_apply(b, &v, NULL));
}

static void vma_again_differential(void **state)
{
	struct ms_aspace *a, *b;
	uint64_t seed, x, k;

	for (seed = 1; seed <= DIFF_SEEDS; seed++) {
		a = ms_aspace_new();
		b = ms_aspace_new();
		x = seed;
		for (k = 0; k < DIFF_EVENTS; k++) {
			diff_event(a, b, &x);
			diff_procs(a, b);
		}
		ms_aspace_free(a);
		ms_aspace_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_and_merge),
		cmocka_unit_test(partial_unmaps),
		cmocka_unit_test(carve_fill_and_vmas),
		cmocka_unit_test(known_vma_as_walked),
		cmocka_unit_test(alike_pieces_joined),
		cmocka_unit_test(many_pieces_settled_as_scanned),
		cmocka_unit_test(heap_top_of_another_region_passed_over),
		cmocka_unit_test(lower_from_any_near),
		cmocka_unit_test(vma_again_as_carved),
		cmocka_unit_test(vma_whole_as_carved),
		cmocka_unit_test(prot_at_from_any_hint),
		cmocka_unit_test(vma_again_map_of_no_length_after),
		cmocka_unit_test(vma_again_differential),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
