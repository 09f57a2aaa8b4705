/*
 * mremap applied as the kernel does it (mm/mremap.c): a shrink or a growth
 * in place, a move of one VMA (resized), a move of several VMAs and the
 * holes between them (Linux 6.17), and an old length of 0 that maps a
 * shared mapping's pages again. A VMA moved merges with its new
 * neighbours where they match.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace/internal.h"

/*
 * copy_vma: a VMA moved merges with a neighbour at its new place
 * (vma_merge_new_range), pieces k - 1 and k, where their page offsets run
 * on (vmarules.c). An anonymous one without an anon_vma takes the new
 * address's offsets, as a new map there would; with one it keeps its own
 * (an MMAP2 gives an anonymous VMA's as its address), which run on where
 * the two were side by side before (a VMA moved in parts to one place,
 * the parts meeting again).
 */
static void join_moved(struct ms_aspace *as, struct proc *p, size_t k)
{
	if (k > 0 && k < p->n)
		ms_vma_join_if_mergeable(as, p, k);
}

/*
 * A piece moved to start at its new start: an anonymous one (a private
 * map of /dev/zero too: vma_is_anonymous) without an anon_vma takes the
 * address's offsets (copy_vma).
 */
static void moved_offsets(const struct ms_aspace *as, struct piece *pc)
{
	if (!pc->anon && ms_vma_is_anonymous(as, pc))
		pc->pgoff = pc->start;
}

/*
 * An old length of 0 maps a shared mapping's pages again (mm/mremap.c): a
 * VMA of the new length at the new address, of the same object from the
 * old address's offset on, as a move copies it; the old VMA as it was.
 */
static int apply_dup(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	size_t i = lower(p, ev->remap.old_start);
	struct piece dup;
	int err;

	if (!piece_holds(p, i, ev->remap.old_start) || ev->remap.new_start >= ev->remap.new_end)
		return 0;                        /* we never saw what it maps again */
	dup = p->p[i];
	dup.pgoff += ev->remap.old_start - dup.start;
	dup.start = ev->remap.new_start;
	dup.end = ev->remap.new_end;
	dup.join = false;
	if ((err = ms_pieces_unmap(as, p, dup.start, dup.end, -1, ev->time)))
		return err;
	ms_pieces_touch(as, dup.region);
	if ((err = ms_pieces_insert(p, i = lower(p, dup.start), &dup)))
		return err;
	if (i + 1 < p->n)
		p->p[i + 1].join = false;
	if (!ev->remap.tree) {
		join_moved(as, p, i + 1);
		join_moved(as, p, i);
	}
	ms_pieces_settle(as, p, ev->time);
	return 0;
}

/*
 * One VMA moved (and resized): the target unmapped whole, the pieces put
 * there as one VMA, cut at the new end or grown to it, and merged with its
 * new neighbours where they match.
 */
static int move_one(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct piece *moved, size_t n)
{
	const uint64_t ns = ev->remap.new_start, ne = ev->remap.new_end;
	const int64_t delta = (int64_t)(ns - ev->remap.old_start);
	size_t k, at;
	int err;

	if ((err = ms_pieces_unmap(as, p, ns, ne, -1, ev->time)))
		return err;
	at = lower(p, ns);
	for (k = 0; k < n; k++) {
		moved[k].start += (uint64_t)delta;
		moved[k].end += (uint64_t)delta;
		moved_offsets(as, &moved[k]);
		if (moved[k].start >= ne)
			break;
		if (moved[k].end > ne || k == n - 1)
			moved[k].end = ne;        /* shrunk, or grown at its end */
		moved[k].join = k > 0;
		ms_pieces_touch(as, moved[k].region);
		if ((err = ms_pieces_insert(p, at++, &moved[k])))
			return err;
	}
	if (at < p->n)
		p->p[at].join = false;
	if (!ev->remap.tree) {
		join_moved(as, p, at);
		join_moved(as, p, lower(p, ns));
	}
	return 0;
}

/*
 * A move of the same length to a fixed place, which since Linux 6.17 may
 * span several VMAs and the holes between them (mm/mremap.c,
 * remap_move): each VMA moves on its own to its offset from the new
 * address, the target unmapped under it alone, so the holes keep what the
 * target had there; each keeps its own protection and flags, and merges
 * with its new neighbours where they match. A range of one VMA, with no
 * hole, comes out as move_one() would leave it.
 */
static int move_each(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct piece *moved,
		     size_t n)
{
	const int64_t delta = (int64_t)(ev->remap.new_start - ev->remap.old_start);
	size_t k, run, at = 0;
	int err;

	for (k = 0; k < n; k++) {
		moved[k].start += (uint64_t)delta;
		moved[k].end += (uint64_t)delta;
		moved_offsets(as, &moved[k]);
		moved[k].join = moved[k].join && k > 0 && moved[k - 1].end == moved[k].start;
	}
	for (run = 0; run < n; run = k) {       /* the target under each run of VMAs without a hole */
		for (k = run + 1; k < n && moved[k].start == moved[k - 1].end; k++)
			;
		if ((err = ms_pieces_unmap(as, p, moved[run].start, moved[k - 1].end, -1, ev->time)))
			return err;
	}
	for (k = 0; k < n; k++) {
		at = k && moved[k].start == moved[k - 1].end ? at : lower(p, moved[k].start);
		ms_pieces_touch(as, moved[k].region);
		if ((err = ms_pieces_insert(p, at, &moved[k])))
			return err;
		if (!ev->remap.tree && !moved[k].join)
			join_moved(as, p, at);              /* with the piece before it */
		at++;
		if (at < p->n && (k + 1 == n || moved[k + 1].start != moved[k].end)) {
			p->p[at].join = false;              /* what follows a run: its own VMA, or merged */
			if (!ev->remap.tree)
				join_moved(as, p, at);
		}
	}
	return 0;
}

/*
 * MREMAP_DONTUNMAP leaves the old VMA where it was, unlocked: the kernel
 * clears VM_LOCKED and VM_LOCKONFAULT on the whole of it, where only part
 * moved too, in place, so that nothing merges of it (dontunmap_complete).
 * Its accounting stays (smaps: ac).
 */
static void dontunmap_unlock(struct proc *p, size_t i)
{
	size_t first, last, k;

	ms_pieces_vma(p, i, &first, &last);
	for (k = first; k <= last; k++)
		p->p[k].vmflags &= (uint16_t)~VF_LOCKS;
}

int ms_remap_apply(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint64_t os = ev->remap.old_start, oe = ev->remap.old_end;
	uint64_t ns = ev->remap.new_start, ne = ev->remap.new_end;
	struct piece *moved, last;
	size_t i, j, k, n;
	int err;

	if (os == oe && ns != os)
		return apply_dup(as, p, ev);
	if (ns == os) {                          /* in place */
		if (ne < oe)
			return ms_pieces_unmap(as, p, ne, oe, -1, ev->time);
		i = lower(p, oe - 1);
		if (ne == oe || i == p->n || p->p[i].end != oe || p->p[i].start >= oe)
			return 0;
		last = p->p[i];
		last.pgoff += oe - last.start;
		last.start = oe;
		last.end = ne;
		last.join = true;
		if ((err = ms_pieces_unmap(as, p, oe, ne, -1, ev->time)))
			return err;
		ms_pieces_touch(as, last.region);
		err = ms_pieces_insert(p, lower(p, oe), &last);
		/* Grown up to the next VMA: the kernel merges the two where they match (vma_merge_extend). */
		k = lower(p, ne);
		if (!err && k > 0 && k < p->n && p->p[k].start == ne && !ev->remap.tree)
			ms_vma_join_if_mergeable(as, p, k);
		ms_pieces_settle(as, p, ev->time);
		return err;
	}
	if ((err = ms_pieces_carve(p, os, oe, &i, &j)))
		return err;
	n = j - i;
	if (!n)
		return 0;                        /* we never saw what moved */
	moved = malloc(n * sizeof(*moved));
	if (!moved)
		return -ENOMEM;
	memcpy(moved, p->p + i, n * sizeof(*moved));
	if (!(ev->remap.flags & MREMAP_DONTUNMAP)) {
		ms_pieces_close_gap(p, i, j);
		if (i < p->n)
			p->p[i].join = false;
	} else
		dontunmap_unlock(p, i);
	if (oe - os == ne - ns && (ev->remap.flags & MREMAP_FIXED))
		err = move_each(as, p, ev, moved, n);
	else
		err = move_one(as, p, ev, moved, n);
	if (!err)
		ms_pieces_settle(as, p, ev->time);
	free(moved);
	return err;
}
