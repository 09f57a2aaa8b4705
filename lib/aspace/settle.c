/*
 * Regions settled after a change: each region the change touched takes
 * its extent and perms from its pieces, and ends where none is left
 * (ms_pieces_settle()); the pieces alike that the change left side by
 * side are joined first. A region of many pieces keeps a heap of their
 * sizes, so that it is settled without a scan of them all.
 */
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"
#include "util/grow.h"

/*
 * A region of many pieces (a runtime's reservation, carved by thousands
 * of mprotects) is settled, after each change, by its pieces: its extent
 * from the first and the last, its perms from the biggest. A scan of them
 * all was 11% of a timeline of a chromium page of 5,000 pieces. Such a
 * region keeps its pieces' sizes in a heap, the biggest on top (the
 * lowest address among equals, as the scan finds it): every piece put in
 * or cut since is pushed, and an entry whose piece is gone or cut is
 * dropped when it comes to the top (big_quick()).
 */
#define BIG_MIN 64                /* pieces of a region that make it keep a heap */
#define BIG_HEAPS 8               /* heaps a process keeps at most */

struct bigent {
	uint64_t size, start;
};

struct bigheap {
	uint32_t region;
	size_t n, cap;
	size_t live;                  /* its region's pieces when it was made: past 4x that + BIG_MIN entries, it goes */
	struct bigent *v;
};

static bool big_before(const struct bigent *a, const struct bigent *b)
{
	return a->size > b->size || (a->size == b->size && a->start < b->start);
}

static void big_swap(struct bigent *a, struct bigent *b)
{
	struct bigent t = *a;

	*a = *b;
	*b = t;
}

static void big_up(struct bigheap *h, size_t k)
{
	for (; k && big_before(&h->v[k], &h->v[(k - 1) / 2]); k = (k - 1) / 2)
		big_swap(&h->v[k], &h->v[(k - 1) / 2]);
}

static void big_down(struct bigheap *h, size_t k)
{
	size_t c;

	for (; (c = 2 * k + 1) < h->n; k = c) {
		if (c + 1 < h->n && big_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!big_before(&h->v[c], &h->v[k]))
			break;
		big_swap(&h->v[c], &h->v[k]);
	}
}

static struct bigheap *big_of(struct proc *p, uint32_t region)
{
	size_t i;

	for (i = 0; i < p->nr_big; i++)
		if (p->big[i].region == region)
			return &p->big[i];
	return NULL;
}

static void big_drop(struct proc *p, struct bigheap *h)
{
	free(h->v);
	*h = p->big[--p->nr_big];
}

void ms_big_drop_all(struct proc *p)
{
	while (p->nr_big)
		big_drop(p, &p->big[0]);
	free(p->big);
	p->big = NULL;
}

/* Piece pc was put in, or cut: its size goes to its region's heap, if it keeps one. */
void ms_big_note(struct proc *p, const struct piece *pc)
{
	struct bigheap *h;

	if (!p->nr_big || !(h = big_of(p, pc->region)))
		return;
	if (h->n >= 4 * h->live + BIG_MIN || MS_GROW(h->v, h->n + 1, h->cap, 64, SIZE_MAX, false)) {
		big_drop(p, h);              /* the next settle scans, and makes it anew */
		return;
	}
	h->v[h->n] = (struct bigent){ pc->end - pc->start, pc->start };
	big_up(h, h->n++);
}

/* A heap of region r's pieces in [r->start, r->end), where it has BIG_MIN or more and p room for one. */
static void big_make(struct proc *p, const struct ms_region *r, size_t pieces)
{
	struct bigheap *h = big_of(p, r->id);
	size_t i, k;

	if (!h && (p->nr_big == BIG_HEAPS || !(p->big || (p->big = calloc(BIG_HEAPS, sizeof(*p->big))))))
		return;
	if (!h) {
		h = &p->big[p->nr_big++];
		*h = (struct bigheap){ .region = r->id };
	}
	h->n = 0;
	h->live = pieces;
	if (MS_GROW(h->v, pieces, h->cap, 64, SIZE_MAX, false)) {
		big_drop(p, h);
		return;
	}
	for (i = lower(p, r->start); i < p->n && p->p[i].start < r->end && h->n < pieces; i++)
		if (p->p[i].region == r->id)
			h->v[h->n++] = (struct bigent){ p->p[i].end - p->p[i].start, p->p[i].start };
	for (k = h->n / 2; k-- > 0;)
		big_down(h, k);
}

/*
 * Region r settled from its heap: where the pieces put since the last
 * settle lie inside its extent, and its first and last pieces are still
 * where they were, the extent stands; its perms are the top entry's whose
 * piece is still whole. false where that cannot answer (a scan then).
 */
static bool big_quick(struct proc *p, struct ms_region *r)
{
	struct bigheap *h;
	size_t i;

	if (!p->nr_big || !r->alive || !(h = big_of(p, r->id)))
		return false;
	if (p->moved_lo < p->moved_hi && (p->moved_lo < r->start || p->moved_hi > r->end))
		return false;
	i = lower_c(p, r->start);
	if (i == p->n || p->p[i].start != r->start || p->p[i].region != r->id)
		return false;
	i = lower_c(p, r->end - 1);
	if (i == p->n || p->p[i].end != r->end || p->p[i].region != r->id)
		return false;
	while (h->n) {
		i = lower_c(p, h->v[0].start);
		if (i < p->n && p->p[i].start == h->v[0].start && p->p[i].end - p->p[i].start == h->v[0].size &&
		    p->p[i].region == r->id) {
			r->prot = p->p[i].prot;
			return true;
		}
		h->v[0] = h->v[--h->n];
		big_down(h, 0);
	}
	return false;
}

/*
 * A change touches few regions, each many times (once per piece): up to
 * TOUCHED_FEW, the list is kept without repeats as it is made. Past it (a
 * munmap over thousands of mappings) only the last few are looked at, and
 * the settle sorts the repeats out. The list was once 64 long, and a
 * change over more settled only 64 regions of the process: the rest kept
 * their old extents and perms, and those unmapped stayed alive.
 */
#define TOUCHED_FEW 64

void ms_pieces_touch(struct ms_aspace *as, uint32_t region)
{
	size_t k = as->nr_touched > TOUCHED_FEW ? as->nr_touched - 8 : 0;

	for (; k < as->nr_touched; k++)
		if (as->touched[k] == region)
			return;
	if (MS_GROW(as->touched, as->nr_touched + 1, as->cap_touched, TOUCHED_FEW, UINT32_MAX, false))
		as->overflow = true;
	else
		as->touched[as->nr_touched++] = region;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The list past TOUCHED_FEW: sorted, each region once. */
static void touched_once(struct ms_aspace *as)
{
	size_t i, n = 0;

	qsort(as->touched, as->nr_touched, sizeof(*as->touched), cmp_u32);
	for (i = 0; i < as->nr_touched; i++)
		if (!n || as->touched[n - 1] != as->touched[i])
			as->touched[n++] = as->touched[i];
	as->nr_touched = n;
}

void ms_region_end(struct ms_region *r, uint64_t time)
{
	if (!r->alive)
		return;
	r->alive = false;
	r->ended_ns = time;
}

/* r's new extent [start, end) from its pieces (pieces of them), or its end where it has none left. */
static void settle_finish(struct proc *p, struct ms_region *r, uint64_t time, uint64_t start, uint64_t end,
			  size_t pieces)
{
	struct bigheap *h;

	if (end) {
		r->start = start;
		r->end = end;
	} else
		ms_region_end(r, time);
	if (end && pieces >= BIG_MIN)
		big_make(p, r, pieces);
	else if ((h = big_of(p, r->id)))
		big_drop(p, h);
}

/* What a scan of a region's pieces finds: its extent, its pieces, its largest (whose perms it takes). */
struct found {
	uint64_t start, end, biggest;
	size_t pieces;
};

/* Piece pc of region r, in the scan of its pieces in address order. */
static inline void found_piece(struct found *f, struct ms_region *r, const struct piece *pc)
{
	f->pieces++;
	if (pc->start < f->start)
		f->start = pc->start;
	if (pc->end > f->end)
		f->end = pc->end;
	if (pc->end - pc->start > f->biggest) {
		/* A region's perms are those of most of it (not of a guard page). */
		f->biggest = pc->end - pc->start;
		r->prot = pc->prot;
	}
}

/* Region r's extent and perms from its pieces in [lo, hi), where all of them lie; ended where none is. */
static void settle_region(struct proc *p, struct ms_region *r, uint64_t time)
{
	uint64_t lo = r->start, hi = r->end;
	struct found f = { .start = UINT64_MAX };
	size_t i;

	if (big_quick(p, r))
		return;
	if (p->moved_lo < p->moved_hi) {
		lo = lo < p->moved_lo ? lo : p->moved_lo;
		hi = hi > p->moved_hi ? hi : p->moved_hi;
	}
	for (i = lower(p, lo); i < p->n && p->p[i].start < hi; i++)
		if (p->p[i].region == r->id)
			found_piece(&f, r, &p->p[i]);
	settle_finish(p, r, time, f.start, f.end, f.pieces);
}

/*
 * The regions of a change over many (the list sorted, each once), as
 * settle_region() settles each, in one pass over the pieces any of them
 * can have rather than one each: a change over 20,000 one-page mappings
 * scanned the pieces it put 20,000 times. false where there is no memory
 * for it.
 */
static bool settle_many(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	const size_t n = as->nr_touched;
	struct found *f = malloc(n * sizeof(*f));
	uint64_t lo = p->moved_lo < p->moved_hi ? p->moved_lo : UINT64_MAX, hi = p->moved_hi;
	const uint32_t *at;
	struct ms_region *r;
	size_t i, k;

	if (!f)
		return false;
	for (k = 0; k < n; k++) {
		r = as->regions[as->touched[k]];
		/* pieces == SIZE_MAX: settled from its heap. */
		f[k] = (struct found){ .start = UINT64_MAX, .pieces = big_quick(p, r) ? SIZE_MAX : 0 };
		if (f[k].pieces)
			continue;
		lo = r->start < lo ? r->start : lo;
		hi = r->end > hi ? r->end : hi;
	}
	for (i = lo < hi ? lower(p, lo) : p->n; i < p->n && p->p[i].start < hi; i++)
		if ((at = bsearch(&p->p[i].region, as->touched, n, sizeof(*at), cmp_u32)) &&
		    f[k = (size_t)(at - as->touched)].pieces != SIZE_MAX)
			found_piece(&f[k], as->regions[*at], &p->p[i]);
	for (k = 0; k < n; k++)
		if (f[k].pieces != SIZE_MAX)
			settle_finish(p, as->regions[as->touched[k]], time, f[k].start, f[k].end, f[k].pieces);
	free(f);
	return true;
}

/*
 * Pieces a and b (after it) are one: the same VMA, region, perms, flags,
 * anon_vma, policy and name, at contiguous offsets. A runtime's mprotects
 * that undo each other leave such pieces behind (1,016 of chromium's
 * 1,885 in one renderer), and every move, search and settle paid for them.
 */
static bool alike(const struct piece *a, const struct piece *b)
{
	return b->join && a->end == b->start && a->region == b->region && a->prot == b->prot && a->flags == b->flags &&
	       a->vmflags == b->vmflags && a->anon == b->anon && a->mpol == b->mpol && a->name == b->name &&
	       a->pgoff + (a->end - a->start) == b->pgoff;
}

/* Joins piece i to piece i - 1 (alike): one move of the array. Its region is settled anew. */
static void join_into_before(struct ms_aspace *as, struct proc *p, size_t i)
{
	p->p[i - 1].end = p->p[i].end;
	ms_big_note(p, &p->p[i - 1]);
	ms_pieces_touch(as, p->p[i].region);
	ms_pieces_close_gap(p, i, i + 1);
}

/*
 * Joins every pair of pieces alike that meet in [lo, hi), in one pass
 * and one move of the array (a join at a time moves it each time: an
 * mprotect over 20,000 pieces).
 */
static void join_span(struct ms_aspace *as, struct proc *p, uint64_t lo, uint64_t hi)
{
	size_t i = lower(p, lo), out;
	bool joined = false;

	i = i ? i : 1;
	for (out = i; i < p->n && p->p[i].start < hi; i++) {
		if (alike(&p->p[out - 1], &p->p[i])) {
			p->p[out - 1].end = p->p[i].end;
			joined = true;
			continue;
		}
		if (joined) {
			ms_big_note(p, &p->p[out - 1]);
			ms_pieces_touch(as, p->p[out - 1].region);
			joined = false;
		}
		p->p[out++] = p->p[i];
	}
	if (joined) {
		ms_big_note(p, &p->p[out - 1]);
		ms_pieces_touch(as, p->p[out - 1].region);
	}
	if (out < i)
		memmove(p->p + out, p->p + i, (p->n - i) * sizeof(*p->p));
	p->n -= i - out;
}

/*
 * Joins the pieces alike that meet where changes since the last settle
 * cut or put pieces, or joined them (p->cuts, and the span of those past
 * them). A region's perms are then those of its biggest run of pages
 * alike, not of the biggest of the pieces its history cut it into: each
 * region a join changes is settled.
 */
static void coalesce(struct ms_aspace *as, struct proc *p)
{
	size_t k, i;

	for (k = 0; k < p->nr_cuts; k++) {
		i = lower(p, p->cuts[k]);
		if (i > 0 && i < p->n && p->p[i].start == p->cuts[k] && alike(&p->p[i - 1], &p->p[i]))
			join_into_before(as, p, i);
	}
	p->nr_cuts = 0;
	if (p->cut_lo < p->cut_hi)
		join_span(as, p, p->cut_lo, p->cut_hi);
	p->cut_lo = p->cut_hi = 0;
}

/*
 * Recomputes the extents of the regions a change touched; ends those left
 * with no pages. A region's pieces lie within its extent as it was, or
 * where the change put pieces (p->moved_lo, moved_hi): only that is read.
 */
void ms_pieces_settle(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	size_t k;

	coalesce(as, p);

	if (as->overflow) {            /* no memory to list them: every region of p, the listed among them */
		for (k = 0; k < as->nr; k++)
			if (as->regions[k]->pid == p->pid && as->regions[k]->alive)
				settle_region(p, as->regions[k], time);
	} else {
		if (as->nr_touched > TOUCHED_FEW)
			touched_once(as);
		if (as->nr_touched <= TOUCHED_FEW || !settle_many(as, p, time))
			for (k = 0; k < as->nr_touched; k++)
				settle_region(p, as->regions[as->touched[k]], time);
	}
	if (as->cap_touched > 16 * TOUCHED_FEW)        /* a change over thousands: its room given back */
		MS_SHRINK(as->touched, TOUCHED_FEW, as->cap_touched);
	as->nr_touched = 0;
	as->overflow = false;
	p->moved_lo = p->moved_hi = 0;
}
