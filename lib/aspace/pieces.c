/*
 * A process's live mappings as a sorted array of pieces: an address range
 * with its protection, its region (identity) and whether it continues the
 * kernel VMA of the piece before it. Lookups are a binary search (lower(),
 * internal.h). The array has room at both ends, and a change moves the
 * shorter side of it: maps placed top down (the kernel's way) or bottom up,
 * and unmaps in either order, then cost the same for 100 mappings or
 * 262,144 (the mm selftest virtual_address_range).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"
#include "util/grow.h"

/* Moves p's n pieces to a new array of cap slots (or recentres them in place), with room split evenly. */
static int recentre(struct proc *p, size_t cap)
{
	struct piece *base = p->p ? p->p - p->head : NULL, *to = base;
	size_t head = (cap - p->n) / 2;

	if (cap != p->cap) {
		if (cap > SIZE_MAX / sizeof(*p->p) || !(to = malloc(cap * sizeof(*p->p))))
			return -ENOMEM;
	}
	if (p->n)
		memmove(to + head, p->p, p->n * sizeof(*p->p));
	if (to != base)
		free(base);
	p->p = to + head;
	p->head = head;
	p->cap = cap;
	return 0;
}

/* Widens [*lo, *hi) (none where lo >= hi) to hold [start, end). */
static void widen(uint64_t *lo, uint64_t *hi, uint64_t start, uint64_t end)
{
	if (*lo >= *hi) {
		*lo = start;
		*hi = end;
		return;
	}
	if (start < *lo)
		*lo = start;
	if (end > *hi)
		*hi = end;
}

/*
 * Notes that two pieces may meet at addr anew (a cut, a piece put in, a
 * join): the next settle joins them there where they are alike. Past
 * eight, not noted: joining is never needed for an answer.
 */
static void note_cut(struct proc *p, uint64_t addr)
{
	if (p->nr_cuts < sizeof(p->cuts) / sizeof(p->cuts[0]) && (!p->nr_cuts || p->cuts[p->nr_cuts - 1] != addr))
		p->cuts[p->nr_cuts++] = addr;
}

/* Notes that pieces were put in [start, end): the regions settled next may have pages there. */
static void note_moved(struct proc *p, uint64_t start, uint64_t end)
{
	widen(&p->moved_lo, &p->moved_hi, start, end);
}

/* Pieces from which an array full at the back grows in place (256 KiB): realloc then moves no page (mremap). */
#define GROW_IN_PLACE ((256 << 10) / sizeof(struct piece))

/*
 * Makes the array cap slots, all the new room after the pieces, where they
 * stay: realloc moves no page of a large array (mremap), and maps added
 * in address order never move one.
 */
static int grow_back(struct proc *p, size_t cap)
{
	struct piece *base = p->p ? p->p - p->head : NULL;

	if (cap > SIZE_MAX / sizeof(*p->p) || !(base = realloc(base, cap * sizeof(*p->p))))
		return -ENOMEM;
	p->p = base + p->head;
	p->cap = cap;
	return 0;
}

void ms_pieces_close_gap(struct proc *p, size_t from, size_t to)
{
	if (to <= from)
		return;
	if (from < p->n - to) {
		memmove(p->p + (to - from), p->p, from * sizeof(*p->p));
		p->p += to - from;
		p->head += to - from;
	} else if (to < p->n)
		memmove(p->p + from, p->p + to, (p->n - to) * sizeof(*p->p));
	p->n -= to - from;
}

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

static void big_drop_all(struct proc *p)
{
	while (p->nr_big)
		big_drop(p, &p->big[0]);
	free(p->big);
	p->big = NULL;
}

/* Piece pc was put in, or cut: its size goes to its region's heap, if it keeps one. */
static void big_note(struct proc *p, const struct piece *pc)
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

/* Inserts the k pieces pcs as pieces i..i+k-1, with no look at the known VMA. */
static int insert_n(struct proc *p, size_t i, const struct piece *pcs, size_t k)
{
	const bool front = i < p->n / 2;
	size_t room, cap = (p->n + k) * 2 < 32 ? 32 : (p->n + k) * 2, m;
	int err;

	while ((room = front ? p->head : p->cap - p->head - p->n) < k) {
		/*
		 * Recentred where over n / 2 slots are free, else made twice the
		 * size: amortised O(1). A large array full at the back grows
		 * there, in place; a small one is made anew, room at both ends,
		 * as a program that moves its own brk (regcache-test) needs of a
		 * model in its process: a realloc in place takes the heap's top.
		 */
		if (p->cap - p->n > p->n / 2 + k)
			err = recentre(p, p->cap);
		else if (front || p->cap < GROW_IN_PLACE)
			err = recentre(p, cap);
		else
			err = grow_back(p, cap);
		if (err)
			return err;
	}
	if (front) {
		memmove(p->p - k, p->p, i * sizeof(*p->p));
		p->p -= k;
		p->head -= k;
	} else if (i < p->n)
		memmove(p->p + i + k, p->p + i, (p->n - i) * sizeof(*p->p));
	for (m = 0; m < k; m++) {
		p->p[i + m] = pcs[m];
		note_moved(p, pcs[m].start, pcs[m].end);
		big_note(p, &pcs[m]);
	}
	note_cut(p, pcs[0].start);
	note_cut(p, pcs[k - 1].end);
	p->n += k;
	return 0;
}

static int insert(struct proc *p, size_t i, const struct piece *pc)
{
	return insert_n(p, i, pc, 1);
}

int ms_pieces_insert(struct proc *p, size_t i, const struct piece *pc)
{
	if (pc->start < p->vma_hi && pc->end > p->vma_lo)
		p->vma_lo = p->vma_hi = 0;   /* where the known VMA's pieces were: they went without a trace */
	return insert(p, i, pc);
}

void ms_pieces_release(struct proc *p)
{
	big_drop_all(p);
	if (p->p)
		free(p->p - p->head);
	p->p = NULL;
	p->n = p->cap = p->head = 0;
}

/* Forgets the known VMA where [start, end) overlaps it, or cuts it down to what lies outside at one end. */
static void known_drop(struct proc *p, uint64_t start, uint64_t end)
{
	if (start >= p->vma_hi || end <= p->vma_lo)
		return;
	if (start <= p->vma_lo)
		p->vma_lo = end;             /* its first pieces: what follows is still one VMA */
	else if (end >= p->vma_hi)
		p->vma_hi = start;           /* its last pieces */
	else
		p->vma_lo = p->vma_hi = 0;   /* a hole inside */
	if (p->vma_lo >= p->vma_hi)
		p->vma_lo = p->vma_hi = 0;
}

/*
 * A carve of [start, end): its caller changes the pieces in it and those
 * at its ends. One over the whole known VMA splits nothing in it and is
 * what a report of the VMA does (a VMA tree write): it stays known; the
 * pieces' removal, which drops it, comes through remove_pieces() or is
 * seen when others are put where they were (ms_pieces_insert()).
 */
static void known_cut(struct proc *p, uint64_t start, uint64_t end)
{
	if (start <= p->vma_lo && end >= p->vma_hi)
		return;
	known_drop(p, start, end);
}

/*
 * Splits the piece that holds addr strictly inside, so a boundary lies at
 * addr; no piece before from ends above addr. *at: lower(p, addr) after.
 */
static int split_at(struct proc *p, size_t from, uint64_t addr, size_t *at)
{
	size_t i = lower_from(p, from, addr);
	struct piece right;

	*at = i;
	if (i == p->n || p->p[i].start >= addr)
		return 0;
	right = p->p[i];
	right.start = addr;
	right.pgoff += addr - p->p[i].start;
	right.join = true;
	p->p[i].end = addr;
	big_note(p, &p->p[i]);
	*at = i + 1;
	return insert(p, i + 1, &right);   /* within the known VMA, it stays one */
}

/*
 * The carve of [start, end) strictly inside piece i: the piece cut in
 * three, the two new ones put in with one move of the array, not two (an
 * mprotect or a map inside a runtime's reservation of thousands of
 * pieces moved half of them twice).
 */
static int split_within(struct proc *p, size_t i, uint64_t start, uint64_t end)
{
	struct piece two[2];

	two[0] = two[1] = p->p[i];
	two[0].start = start;
	two[0].end = end;
	two[0].pgoff += start - p->p[i].start;
	two[1].start = end;
	two[1].pgoff += end - p->p[i].start;
	two[0].join = two[1].join = true;   /* within the known VMA, they stay one */
	if (insert_n(p, i + 1, two, 2))
		return -ENOMEM;
	p->p[i].end = start;
	big_note(p, &p->p[i]);
	return 0;
}

/*
 * Makes [start, end) a run of whole pieces, [*i, *j). An insert moves the
 * indices only of the pieces after it, so the end is looked for past *i,
 * and *i holds after the end's split: two binary searches, not four.
 */
int ms_pieces_carve(struct proc *p, uint64_t start, uint64_t end, size_t *i, size_t *j)
{
	size_t k;
	int err;

	known_cut(p, start, end);        /* its caller changes [start, end) and the pieces at its ends */
	note_cut(p, start);
	note_cut(p, end);
	k = lower(p, start);
	if (start < end && k < p->n && p->p[k].start < start && end < p->p[k].end) {
		err = split_within(p, k, start, end);
		*i = err ? lower(p, start) : k + 1;
		*j = err ? lower(p, end) : k + 2;
		return err;
	}
	err = split_at(p, 0, start, i);
	if (!err)
		err = split_at(p, start <= end ? *i : 0, end, j);
	if (err || start > end) {
		*i = lower(p, start);
		*j = lower(p, end);
	}
	return err;
}

void ms_pieces_touch(struct ms_aspace *as, uint32_t region)
{
	size_t k;

	for (k = 0; k < as->nr_touched; k++)
		if (as->touched[k] == region)
			return;
	if (as->nr_touched == sizeof(as->touched) / sizeof(as->touched[0]))
		as->overflow = true;
	else
		as->touched[as->nr_touched++] = region;
}

static void end_region(struct ms_region *r, uint64_t time)
{
	if (!r->alive)
		return;
	r->alive = false;
	r->ended_ns = time;
}

/* Region r's extent and perms from its pieces in [lo, hi), where all of them lie; ended where none is. */
static void settle_region(struct proc *p, struct ms_region *r, uint64_t time)
{
	uint64_t lo = r->start, hi = r->end, biggest = 0, start = UINT64_MAX, end = 0;
	size_t i, pieces = 0;
	struct bigheap *h;

	if (big_quick(p, r))
		return;
	if (p->moved_lo < p->moved_hi) {
		lo = lo < p->moved_lo ? lo : p->moved_lo;
		hi = hi > p->moved_hi ? hi : p->moved_hi;
	}
	for (i = lower(p, lo); i < p->n && p->p[i].start < hi; i++)
		if (p->p[i].region == r->id) {
			pieces++;
			if (p->p[i].start < start)
				start = p->p[i].start;
			if (p->p[i].end > end)
				end = p->p[i].end;
			if (p->p[i].end - p->p[i].start > biggest) {
				/* A region's perms are those of most of it (not of a guard page). */
				biggest = p->p[i].end - p->p[i].start;
				r->prot = p->p[i].prot;
			}
		}
	if (end) {
		r->start = start;
		r->end = end;
	} else
		end_region(r, time);
	if (end && pieces >= BIG_MIN)
		big_make(p, r, pieces);
	else if ((h = big_of(p, r->id)))
		big_drop(p, h);
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

/* Joins piece i to piece i - 1 (alike): one move of the array. */
static void join_into_before(struct proc *p, size_t i)
{
	p->p[i - 1].end = p->p[i].end;
	big_note(p, &p->p[i - 1]);
	ms_pieces_close_gap(p, i, i + 1);
}

/*
 * Joins the pieces alike that meet where changes since the last settle
 * cut or put pieces, or joined them (p->cuts). A region's perms are then
 * those of its biggest run of pages alike, not of the biggest of the
 * pieces its history cut it into.
 */
static void coalesce(struct proc *p)
{
	size_t k, i;

	for (k = 0; k < p->nr_cuts; k++) {
		i = lower(p, p->cuts[k]);
		if (i > 0 && i < p->n && p->p[i].start == p->cuts[k] && alike(&p->p[i - 1], &p->p[i]))
			join_into_before(p, i);
	}
	p->nr_cuts = 0;
}

/*
 * Recomputes the extents of the regions a change touched; ends those left
 * with no pages. A region's pieces lie within its extent as it was, or
 * where the change put pieces (p->moved_lo, moved_hi): only that is read.
 */
void ms_pieces_settle(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	size_t k;

	coalesce(p);

	if (as->overflow) {            /* too many to list: settle every region of p */
		as->nr_touched = 0;
		for (k = 0; k < as->nr; k++)
			if (as->regions[k]->pid == p->pid && as->regions[k]->alive &&
			    as->nr_touched < sizeof(as->touched) / sizeof(as->touched[0]))
				as->touched[as->nr_touched++] = (uint32_t)k;
	}
	for (k = 0; k < as->nr_touched; k++)
		settle_region(p, as->regions[as->touched[k]], time);
	as->nr_touched = 0;
	as->overflow = false;
	p->moved_lo = p->moved_hi = 0;
}

/* Removes pieces [i, j) (only those of region `only`, unless it is -1). */
static void remove_pieces(struct ms_aspace *as, struct proc *p, size_t i, size_t j, int64_t only)
{
	size_t k, out = i;

	if (i < j)
		known_drop(p, p->p[i].start, p->p[j - 1].end);

	for (k = i; k < j; k++) {
		if (only >= 0 && p->p[k].region != (uint32_t)only) {
			p->p[out++] = p->p[k];
			continue;
		}
		ms_pieces_touch(as, p->p[k].region);
	}
	ms_pieces_close_gap(p, out, j);
	if (out < p->n)
		p->p[out].join = false;          /* a hole ends a VMA */
}

int ms_pieces_unmap(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end,
		       int64_t only, uint64_t time)
{
	size_t i, j;
	int err;

	if (start >= end)
		return 0;
	err = ms_pieces_carve(p, start, end, &i, &j);
	if (err)
		return err;
	remove_pieces(as, p, i, j, only);
	ms_pieces_settle(as, p, time);
	return 0;
}

/* The kernel VMA that piece i belongs to: its first and last pieces. Its caller may change it: forgotten if known. */
void ms_pieces_vma(struct proc *p, size_t i, size_t *first, size_t *last)
{
	size_t a = i, z = i;

	while (a > 0 && p->p[a].join && p->p[a - 1].end == p->p[a].start)
		a--;
	while (z + 1 < p->n && p->p[z + 1].join && p->p[z].end == p->p[z + 1].start)
		z++;
	*first = a;
	*last = z;
	if (p->p[a].start < p->vma_hi && p->p[z].end > p->vma_lo)
		p->vma_lo = p->vma_hi = 0;
}

/*
 * The known VMA's pieces, [*ci, *cj), where it lies within [start, end)
 * and its pieces are where it says; first is lower(p, start).
 */
static bool known_within(struct proc *p, size_t first, uint64_t start, uint64_t end, size_t *ci, size_t *cj)
{
	if (p->vma_lo >= p->vma_hi || p->vma_lo < start || p->vma_hi > end)
		return false;
	*ci = lower_from(p, first, p->vma_lo);
	*cj = lower_from(p, *ci, p->vma_hi);
	return *ci < *cj && p->p[*ci].start == p->vma_lo && p->p[*cj - 1].end == p->vma_hi;
}

/*
 * ms_vma_share_anon(p, first) where the known VMA's pieces [ci, cj) lie in
 * it: they are passed over (all joined, one anon) unless the anon they
 * get is another. The VMA found is the known one after.
 */
static void share_anon_known(struct proc *p, size_t first, size_t ci, size_t cj)
{
	size_t a = first, z = first, k;
	uint32_t anon = 0;

	while (a > 0 && p->p[a].join && p->p[a - 1].end == p->p[a].start)
		a--;
	while (z + 1 < p->n && p->p[z + 1].join && p->p[z].end == p->p[z + 1].start)
		z = z == ci && cj - 1 > ci ? cj - 1 : z + 1;   /* the known VMA's pieces: all joined */
	for (k = a; k <= z && !anon; k = k == ci ? cj : k + 1)
		anon = k == ci ? p->vma_anon : p->p[k].anon;
	for (k = a; k <= z; k = k == ci && anon == p->vma_anon ? cj : k + 1)
		p->p[k].anon = anon;
	p->vma_lo = p->p[a].start;
	p->vma_hi = p->p[z].end;
	p->vma_anon = anon;
}

/* The join of piece i when [start, ...) is one VMA: all but its first piece, where the one before ends. */
static void set_join(struct proc *p, size_t i, uint64_t start)
{
	const bool join = p->p[i].start != start && i > 0 && p->p[i - 1].end == p->p[i].start;

	if (join && !p->p[i].join)
		note_cut(p, p->p[i].start);
	p->p[i].join = join;
}

/*
 * Marks [start, end) as one kernel VMA, as an MMAP2 record or the VMA
 * tree reported it. A VMA that grows by a map at a time (merged with the
 * one before) is reported whole each time: the pieces of the VMA known
 * from the time before are passed over, so that this stays O(1) and a
 * VMA of 131,072 maps costs no more than one of two.
 */
void ms_pieces_set_vma(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i, first = lower(p, start), ci = SIZE_MAX, cj = 0, a, z;
	const bool known = first < p->n && p->p[first].start == start && known_within(p, first, start, end, &ci, &cj);

	for (i = first; i < p->n && p->p[i].start < end; i = known && i == ci ? cj : i + 1)
		set_join(p, i, start);
	if (i < p->n && p->p[i].start == end)
		p->p[i].join = false;
	if (first >= p->n)
		return;
	if (known) {
		share_anon_known(p, first, ci, cj);
		return;
	}
	ms_vma_share_anon(p, first);
	ms_pieces_vma(p, first, &a, &z);
	p->vma_lo = p->p[a].start;
	p->vma_hi = p->p[z].end;
	p->vma_anon = p->p[a].anon;
}

/*
 * Whether the piece after piece k, the last of a VMA ending at end, is as
 * the carve and the marking of the VMA leave it: none, or one that begins
 * at or past end and ends past it (the carve's and the marking's search
 * for end finds it: one of no length there would be passed over to
 * another, one that began before end split), not joined where it meets
 * the VMA.
 */
static bool apart_after(const struct proc *p, size_t k, uint64_t end)
{
	const struct piece *a = k + 1 < p->n ? &p->p[k + 1] : NULL;

	return !a || (a->start >= end && a->end > end && !(a->join && a->start == end));
}

/*
 * The known VMA reported again, unchanged: 13,300 of the 29,300 VMA tree
 * writes of chromium's page load. The carve splits nothing where its
 * pieces begin at start and end at end, and the marking changes nothing
 * where they are as the known VMA's should be: the first not joined to
 * the piece before, with the VMA's anon, the others joined (it passes
 * over them), the piece after not joined where they meet. Then only the
 * two cuts the carve notes are left to do. false, with nothing done,
 * where the pieces are not so.
 */
bool ms_pieces_vma_again(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i, k;

	if (start >= end || p->vma_lo != start || p->vma_hi != end)
		return false;
	i = lower(p, start);
	if (i >= p->n || p->p[i].start != start || p->p[i].join || p->p[i].anon != p->vma_anon)
		return false;
	k = lower_from(p, i, end - 1);
	if (k >= p->n || p->p[k].end != end || (k > i && !(p->p[i + 1].join && p->p[i].end == p->p[i + 1].start)) ||
	    !apart_after(p, k, end))
		return false;
	note_cut(p, start);
	note_cut(p, end);
	return true;
}

/*
 * A VMA other than the known one reported as its pieces already are: its
 * first piece begins at start, not joined to the one before; each next
 * is joined to it, with the same anon; the last ends at end, and the one
 * after is not joined to it. The carve then splits nothing, and the
 * marking changes nothing but which VMA is known: this one (12,400 of the
 * page load's VMA tree writes are of another VMA than the known one). That
 * is done here, with the carve's two cuts. false, with nothing done, where
 * the pieces are not so or [start, end) overlaps the known VMA.
 */
bool ms_pieces_vma_whole(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i, k;

	if (start >= end || (p->vma_lo < p->vma_hi && p->vma_lo < end && p->vma_hi > start))
		return false;
	i = lower(p, start);
	if (i >= p->n || p->p[i].start != start || p->p[i].join)
		return false;
	for (k = i; p->p[k].end < end; k++)
		if (k + 1 >= p->n || !p->p[k + 1].join || p->p[k + 1].start != p->p[k].end ||
		    p->p[k + 1].anon != p->p[i].anon)
			return false;
	if (p->p[k].end != end || !apart_after(p, k, end))
		return false;
	note_cut(p, start);
	note_cut(p, end);
	p->vma_lo = start;
	p->vma_hi = end;
	p->vma_anon = p->p[i].anon;
	return true;
}

/* Adds region r's pages in [start, end) where nothing is mapped (growth). */
int ms_pieces_fill(struct proc *p, uint64_t start, uint64_t end, const struct ms_region *r,
		uint32_t prot, uint32_t flags, uint16_t vmflags)
{
	size_t i = lower(p, start);
	struct piece pc = { .prot = prot, .flags = flags, .region = r->id, .join = true, .vmflags = vmflags };
	uint64_t at = start;
	int err;

	while (at < end) {
		if (i < p->n && p->p[i].start <= at) {
			at = p->p[i].end;
			i++;
			continue;
		}
		pc.start = at;
		pc.end = i < p->n && p->p[i].start < end ? p->p[i].start : end;
		err = ms_pieces_insert(p, i, &pc);
		if (err)
			return err;
		at = pc.end;
		i++;
	}
	return 0;
}

void ms_pieces_clear(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		end_region(as->regions[p->p[i].region], time);
	p->n = 0;
	p->nr_cuts = 0;
	big_drop_all(p);
	p->vma_lo = p->vma_hi = 0;
	p->heap = p->stack = -1;
	p->def_vmflags = 0;          /* a new mm, or none: mlockall's MCL_FUTURE is not inherited */
}
