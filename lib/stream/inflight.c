/*
 * Syscalls in flight when a recording begins. Attaching to a running
 * process turns its threads' events on one by one, then reads its maps:
 * a thread can be inside munmap by then, its entry unrecorded, and remove
 * the VMA after /proc showed it. All that is left of that call is the VMA
 * tree's write of NULL over the range, and the exit. Such writes, in a
 * thread that has not yet shown a followed entry and outside any followed
 * call, are held: the exit of an unmapping call (munmap, mremap, brk,
 * shmdt) without its entry makes them unmaps, at the exit.
 *
 * Nothing else may turn them into unmaps. A fork writes NULL over each
 * VM_DONTCOPY VMA of the child's tree in the parent's context: the FORK
 * record drops what the parent held. An exec writes NULL into the new
 * image's tree after its COMM (the loader trims what it reserved, the
 * stack leaves its old place): the thread's next followed entry drops
 * those, as it drops whatever a thread held (it is then no longer in a
 * call in flight); the COMM drops what the old image's threads held. A
 * mapping made by another thread between the write and the exit, over the
 * range, is cut out of it: its own store into the tree says where.
 *
 * A write of NULL takes in the NULL ranges beside it (the maple tree
 * widens such a store within its node), so a hole can reach from the VMA
 * below to the VMA above: its unmap says so (unmap.tree), and the model
 * unmaps, and reports, only what was mapped in it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"
#include "util/grow.h"

/*
 * The most holes held at once: a few per thread in flight at the attach.
 * A damaged or crafted file that writes NULL without end would otherwise
 * make every later store walk them all; past this, a write is not held.
 */
#define HOLES_MAX 1024

/* Drops hole i, keeping the others in the order they came. */
static void drop_at(struct ms_stream *s, size_t i)
{
	memmove(&s->holes[i], &s->holes[i + 1], (s->nr_holes - i - 1) * sizeof(*s->holes));
	s->nr_holes--;
}

/*
 * A hole that overlaps or touches one of its thread's takes it in: they
 * unmap the same pages together or apart. A thread that never makes a
 * followed call can write NULL again and again (io_destroy unmaps its AIO
 * ring: io_setup's next ring cuts the top of the hole, io_destroy writes
 * NULL over it again), and every store walks the holes.
 */
int stream_hole_note(struct ms_stream *s, const struct ms_sample *smp, uint64_t start, uint64_t end)
{
	struct stream_hole *h;
	size_t i;

	for (i = 0; i < s->nr_holes; i++) {
		h = &s->holes[i];
		if (h->tid != smp->tid || h->pid != smp->pid || h->end < start || end < h->start)
			continue;
		start = h->start < start ? h->start : start;
		end = h->end > end ? h->end : end;
		drop_at(s, i--);
	}
	if (s->nr_holes >= HOLES_MAX)
		return 0;
	if (MS_GROW(s->holes, s->nr_holes + 1, s->cap_holes, 8, SIZE_MAX, false))
		return -ENOMEM;
	s->holes[s->nr_holes++] = (struct stream_hole){ smp->pid, smp->tid, start, end };
	return 0;
}

int stream_holes_cut(struct ms_stream *s, uint32_t pid, uint64_t start, uint64_t end)
{
	struct stream_hole *h;
	size_t i;

	for (i = 0; i < s->nr_holes; i++) {
		h = &s->holes[i];
		if (h->pid != pid || h->end <= start || end <= h->start)
			continue;
		if (h->start < start && end < h->end) {      /* the store splits it in two */
			if (MS_GROW(s->holes, s->nr_holes + 1, s->cap_holes, 8, SIZE_MAX, false))
				return -ENOMEM;
			h = &s->holes[i];
			memmove(h + 1, h, (s->nr_holes - i) * sizeof(*h));
			s->nr_holes++;
			h[0].end = start;
			h[1].start = end;
			i++;
		} else if (start <= h->start && h->end <= end) {
			drop_at(s, i--);
		} else if (start <= h->start) {
			h->start = end;
		} else {
			h->end = start;
		}
	}
	return 0;
}

void stream_holes_drop(struct ms_stream *s, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < s->nr_holes; i++)
		if (s->holes[i].pid == pid && (!tid || s->holes[i].tid == tid))
			drop_at(s, i--);
}

int stream_holes_unmap(struct ms_stream *s, const struct ms_sample *smp)
{
	struct ms_event ev;
	size_t i;
	int err = 0;

	for (i = 0; i < s->nr_holes && !err; i++) {
		if (s->holes[i].tid != smp->tid || s->holes[i].pid != smp->pid)
			continue;
		base_event(&ev, MS_EV_UNMAP, smp);
		ev.pid = s->holes[i].pid;
		ev.unmap.start = s->holes[i].start;
		ev.unmap.end = s->holes[i].end;
		ev.unmap.tree = true;    /* the write took in the gaps beside it */
		err = emit(s, &ev);
	}
	stream_holes_drop(s, smp->pid, smp->tid);
	return err;
}
