/*
 * A process's live mappings as a sorted array of pieces: an address range
 * with its protection, its region (identity) and whether it continues the
 * kernel VMA of the piece before it. Changes split pieces at their edges
 * and move the array's tail, which is cheap at the sizes real processes
 * have (hundreds to a few thousand mappings); lookups are a binary search
 * (lower(), internal.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"
#include "util/grow.h"

int ms_pieces_insert(struct proc *p, size_t i, const struct piece *pc)
{
	if (MS_GROW(p->p, p->n + 1, p->cap, 32, SIZE_MAX, false))
		return -ENOMEM;
	if (i < p->n)
		memmove(p->p + i + 1, p->p + i, (p->n - i) * sizeof(*p->p));
	p->p[i] = *pc;
	p->n++;
	return 0;
}

/* Splits the piece that holds addr strictly inside, so a boundary lies at addr. */
static int split_at(struct proc *p, uint64_t addr)
{
	size_t i = lower(p, addr);
	struct piece right;

	if (i == p->n || p->p[i].start >= addr)
		return 0;
	right = p->p[i];
	right.start = addr;
	right.pgoff += addr - p->p[i].start;
	right.join = true;
	p->p[i].end = addr;
	return ms_pieces_insert(p, i + 1, &right);
}

/* Makes [start, end) a run of whole pieces, [*i, *j). */
int ms_pieces_carve(struct proc *p, uint64_t start, uint64_t end, size_t *i, size_t *j)
{
	int err = split_at(p, start);

	if (!err)
		err = split_at(p, end);
	*i = lower(p, start);
	*j = lower(p, end);
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

/* Recomputes the extents of the regions a change touched; ends those left with no pages. */
void ms_pieces_settle(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	size_t k, i;
	struct ms_region *r;
	uint64_t lo, hi, biggest;

	if (as->overflow) {            /* too many to list: settle every region of p */
		as->nr_touched = 0;
		for (i = 0; i < as->nr; i++)
			if (as->regions[i]->pid == p->pid && as->regions[i]->alive &&
			    as->nr_touched < sizeof(as->touched) / sizeof(as->touched[0]))
				as->touched[as->nr_touched++] = (uint32_t)i;
	}
	for (k = 0; k < as->nr_touched; k++) {
		r = as->regions[as->touched[k]];
		lo = UINT64_MAX;
		hi = 0;
		biggest = 0;
		for (i = 0; i < p->n; i++)
			if (p->p[i].region == r->id) {
				if (p->p[i].start < lo)
					lo = p->p[i].start;
				if (p->p[i].end > hi)
					hi = p->p[i].end;
				if (p->p[i].end - p->p[i].start > biggest) {
					/* A region's perms are those of most of it (not of a guard page). */
					biggest = p->p[i].end - p->p[i].start;
					r->prot = p->p[i].prot;
				}
			}
		if (hi) {
			r->start = lo;
			r->end = hi;
		} else
			end_region(r, time);
	}
	as->nr_touched = 0;
	as->overflow = false;
}

/* Removes pieces [i, j) (only those of region `only`, unless it is -1). */
static void remove_pieces(struct ms_aspace *as, struct proc *p, size_t i, size_t j, int64_t only)
{
	size_t k, out = i;

	for (k = i; k < j; k++) {
		if (only >= 0 && p->p[k].region != (uint32_t)only) {
			p->p[out++] = p->p[k];
			continue;
		}
		ms_pieces_touch(as, p->p[k].region);
	}
	if (j > out && j < p->n)
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

/* The kernel VMA that piece i belongs to: its first and last pieces. */
void ms_pieces_vma(const struct proc *p, size_t i, size_t *first, size_t *last)
{
	size_t a = i, z = i;

	while (a > 0 && p->p[a].join && p->p[a - 1].end == p->p[a].start)
		a--;
	while (z + 1 < p->n && p->p[z + 1].join && p->p[z].end == p->p[z + 1].start)
		z++;
	*first = a;
	*last = z;
}

/* Marks [start, end) as one kernel VMA, as an MMAP2 record reported it. */
void ms_pieces_set_vma(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i, first = lower(p, start);

	for (i = first; i < p->n && p->p[i].start < end; i++)
		p->p[i].join = p->p[i].start != start && i > 0 && p->p[i - 1].end == p->p[i].start;
	if (i < p->n && p->p[i].start == end)
		p->p[i].join = false;
	if (first < p->n)
		ms_vma_share_anon(p, first);
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
	p->heap = p->stack = -1;
	p->def_vmflags = 0;          /* a new mm, or none: mlockall's MCL_FUTURE is not inherited */
}
