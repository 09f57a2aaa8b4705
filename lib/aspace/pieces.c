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

/* Notes that pieces were put in [start, end): the regions settled next may have pages there. */
static void note_moved(struct proc *p, uint64_t start, uint64_t end)
{
	if (p->moved_lo >= p->moved_hi) {
		p->moved_lo = start;
		p->moved_hi = end;
		return;
	}
	if (start < p->moved_lo)
		p->moved_lo = start;
	if (end > p->moved_hi)
		p->moved_hi = end;
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

/* Inserts pc as piece i, with no look at the known VMA. */
static int insert(struct proc *p, size_t i, const struct piece *pc)
{
	const bool front = i < p->n / 2;
	size_t room = front ? p->head : p->cap - p->head - p->n, cap = (p->n + 1) * 2 < 32 ? 32 : (p->n + 1) * 2;
	int err;

	if (!room) {
		/*
		 * Recentred where over n / 2 slots are free, else made twice the
		 * size: amortised O(1). A large array full at the back grows
		 * there, in place; a small one is made anew, room at both ends,
		 * as a program that moves its own brk (regcache-test) needs of a
		 * model in its process: a realloc in place takes the heap's top.
		 */
		if (p->cap - p->n > p->n / 2 + 1)
			err = recentre(p, p->cap);
		else if (front || p->cap < GROW_IN_PLACE)
			err = recentre(p, cap);
		else
			err = grow_back(p, cap);
		if (err)
			return err;
	}
	if (front) {
		memmove(p->p - 1, p->p, i * sizeof(*p->p));
		p->p--;
		p->head--;
	} else if (i < p->n)
		memmove(p->p + i + 1, p->p + i, (p->n - i) * sizeof(*p->p));
	p->p[i] = *pc;
	p->n++;
	note_moved(p, pc->start, pc->end);
	return 0;
}

int ms_pieces_insert(struct proc *p, size_t i, const struct piece *pc)
{
	if (pc->start < p->vma_hi && pc->end > p->vma_lo)
		p->vma_lo = p->vma_hi = 0;   /* where the known VMA's pieces were: they went without a trace */
	return insert(p, i, pc);
}

void ms_pieces_release(struct proc *p)
{
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
	*at = i + 1;
	return insert(p, i + 1, &right);   /* within the known VMA, it stays one */
}

/*
 * Makes [start, end) a run of whole pieces, [*i, *j). An insert moves the
 * indices only of the pieces after it, so the end is looked for past *i,
 * and *i holds after the end's split: two binary searches, not four.
 */
int ms_pieces_carve(struct proc *p, uint64_t start, uint64_t end, size_t *i, size_t *j)
{
	int err;

	known_cut(p, start, end);        /* its caller changes [start, end) and the pieces at its ends */
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
	size_t i;

	if (p->moved_lo < p->moved_hi) {
		lo = lo < p->moved_lo ? lo : p->moved_lo;
		hi = hi > p->moved_hi ? hi : p->moved_hi;
	}
	for (i = lower(p, lo); i < p->n && p->p[i].start < hi; i++)
		if (p->p[i].region == r->id) {
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
}

/*
 * Recomputes the extents of the regions a change touched; ends those left
 * with no pages. A region's pieces lie within its extent as it was, or
 * where the change put pieces (p->moved_lo, moved_hi): only that is read.
 */
void ms_pieces_settle(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	size_t k;

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
	if (j > out && out < p->n - j) {     /* the shorter side moves: here, the pieces before */
		memmove(p->p + (j - out), p->p, out * sizeof(*p->p));
		p->p += j - out;
		p->head += j - out;
	} else if (j > out && j < p->n)
		memmove(p->p + out, p->p + j, (p->n - j) * sizeof(*p->p));
	p->n -= j - out;
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
	p->p[i].join = p->p[i].start != start && i > 0 && p->p[i - 1].end == p->p[i].start;
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
	p->vma_lo = p->vma_hi = 0;
	p->heap = p->stack = -1;
	p->def_vmflags = 0;          /* a new mm, or none: mlockall's MCL_FUTURE is not inherited */
}
