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
 * eight, the span of those not listed: the settle joins every pair alike
 * in it (one VMA tree write over a run of pieces one mprotect made alike).
 */
static void note_cut(struct proc *p, uint64_t addr)
{
	if (p->nr_cuts && p->cuts[p->nr_cuts - 1] == addr)
		return;
	if (p->nr_cuts < sizeof(p->cuts) / sizeof(p->cuts[0])) {
		p->cuts[p->nr_cuts++] = addr;
		return;
	}
	if (p->cut_lo >= p->cut_hi) {
		p->cut_lo = addr;
		p->cut_hi = addr + 1;
	}
	p->cut_lo = addr < p->cut_lo ? addr : p->cut_lo;
	p->cut_hi = addr >= p->cut_hi ? addr + 1 : p->cut_hi;
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
		ms_big_note(p, &pcs[m]);
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
	ms_big_drop_all(p);
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
	ms_big_note(p, &p->p[i]);
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
	ms_big_note(p, &p->p[i]);
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
		pc.pgoff = region_has_file(r) ? 0 : at;   /* a heap's offsets are its address's (do_brk_flags) */
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
		ms_region_end(as->regions[p->p[i].region], time);
	p->n = 0;
	p->nr_cuts = 0;
	p->cut_lo = p->cut_hi = 0;
	ms_big_drop_all(p);
	p->vma_lo = p->vma_hi = 0;
	p->heap = p->stack = -1;
	p->start_stack = 0;
	p->stack_new = false;
	p->start_brk = p->brk = 0;
	p->brk_known = p->brk_new = false;
	p->def_vmflags = 0;          /* a new mm, or none: mlockall's MCL_FUTURE is not inherited */
}
