/*
 * Unmaps that a syscall's exit does not place: a munmap or an mremap
 * that another thread's map overtook (done when the call let go of the
 * mmap lock, before it returned), and io_destroy's unmap of its AIO ring
 * (no munmap of its own).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stream/internal.h"
#include "util/grow.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

static bool unmapping(const struct thread *u)
{
	return u->sc == SC_MUNMAP || u->sc == SC_MREMAP;
}

/* Notes thread tid's open call t, where it is a munmap or an mremap. 0 or -ENOMEM. */
int stream_unmapping_open(struct ms_stream *s, const struct thread *t, uint32_t tid)
{
	const struct thread *u;
	size_t i, n = 0;

	if (!unmapping(t))
		return 0;
	if (s->nr_unmapping >= 64) {            /* stale entries (exits lost, or seen) go first */
		for (i = 0; i < s->nr_unmapping; i++)
			if ((u = ms_u32map_get(&s->threads, s->unmapping[i])) && unmapping(u))
				s->unmapping[n++] = s->unmapping[i];
		s->nr_unmapping = n;
	}
	if (MS_GROW(s->unmapping, s->nr_unmapping + 1, s->cap_unmapping, 8, SIZE_MAX, false))
		return -ENOMEM;
	s->unmapping[s->nr_unmapping++] = tid;
	return 0;
}

/* Thread tid's call closed: out of the list (the last entry of it, where a lost exit left one before). */
void stream_unmapping_closed(struct ms_stream *s, uint32_t tid)
{
	size_t i = s->nr_unmapping;

	while (i-- > 0)
		if (s->unmapping[i] == tid) {
			s->unmapping[i] = s->unmapping[--s->nr_unmapping];
			return;
		}
}

int stream_emit_unmap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint32_t tid)
{
	struct ms_event ev;

	base_event(&ev, MS_EV_UNMAP, smp);
	ev.tid = tid;
	ev.unmap.start = t->args[0];
	ev.unmap.end = t->args[0] + PAGE_ALIGN(t->args[1]);
	return stream_emit_with_chain(s, t, &ev);
}

int stream_emit_remap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint32_t tid, uint64_t to)
{
	struct ms_event ev;

	base_event(&ev, MS_EV_REMAP, smp);
	ev.tid = tid;
	ev.remap.old_start = t->args[0];
	ev.remap.old_end = t->args[0] + PAGE_ALIGN(t->args[1]);
	ev.remap.new_start = to;
	ev.remap.new_end = to + PAGE_ALIGN(t->args[2]);
	ev.remap.flags = (uint32_t)t->args[3];
	ev.remap.tree = s->has_tree;
	return stream_emit_with_chain(s, t, &ev);
}

/*
 * Where an mremap that moved [lo, hi) to a place the kernel picked put it,
 * by the VMA tree's writes it made so far: the first outside the old range
 * is copy_vma's, made before the old range is unmapped. One of another
 * length than len (merged with a neighbour there) does not say where in
 * it; with no writes (no tree), nothing does until the call's exit.
 */
static bool picked(const struct thread *u, uint64_t lo, uint64_t hi, uint64_t len, uint64_t *to)
{
	size_t i;

	for (i = 0; i < u->nr_vmas; i++)
		if (u->vmas[i][1] <= lo || u->vmas[i][0] >= hi) {
			*to = u->vmas[i][0];
			return u->vmas[i][1] - u->vmas[i][0] == len;
		}
	return false;
}

/*
 * What open call u frees, [*lo, *hi), where its arguments say all it
 * does: a munmap's range; a move to a fixed place, the old range; a
 * shrink, the tail. *to: where an mremap's memory is after. A move to a
 * place the kernel picks: the old range, where the tree's writes say
 * where it went (picked()). false for an mremap that grows in place (its
 * old range is not freed), one whose place is not known yet, or one that
 * keeps the old range (MREMAP_DONTUNMAP).
 */
static bool frees(const struct thread *u, uint64_t *lo, uint64_t *hi, uint64_t *to)
{
	const uint64_t old = PAGE_ALIGN(u->args[1]), len = PAGE_ALIGN(u->args[2]);

	*lo = u->args[0];
	*hi = u->args[0] + old;
	*to = u->args[0];
	if (u->sc == SC_MUNMAP)
		return true;
	if (u->args[3] & MREMAP_DONTUNMAP)
		return false;
	if (u->args[3] & MREMAP_FIXED) {
		*to = u->args[4];
		return true;
	}
	if (len < old) {
		*lo = u->args[0] + len;
		return true;
	}
	return (u->args[3] & MREMAP_MAYMOVE) && picked(u, *lo, *hi, len, to);
}

/*
 * An unmap is done when its call lets go of the mmap lock, before it
 * returns (vms_complete_munmap_vmas then frees the VMAs it took out and
 * waits for userfaultfd's unmap events; mremap waits for its remap event
 * the same way). A map of another thread of the process that the kernel
 * placed in [start, end) itself (no MAP_FIXED) proves that an open call
 * that frees any of that range is done: it is applied now, with the VMA
 * tree's writes it made, and not at its exit, where it would unmap (or
 * move) the new map too.
 */
int stream_unmaps_overtaken(struct ms_stream *s, const struct ms_sample *smp, uint64_t start, uint64_t end)
{
	uint64_t lo, hi, to;
	struct thread *u;
	size_t i, n = 0;
	uint32_t tid;
	int err = 0;

	for (i = 0; i < s->nr_unmapping; i++) {
		tid = s->unmapping[i];
		u = ms_u32map_get(&s->threads, tid);
		if (!u || !unmapping(u) || u->unmapped)
			continue;                    /* closed: dropped from the list */
		s->unmapping[n++] = tid;
		if (err || tid == smp->tid || u->pid != smp->pid || !frees(u, &lo, &hi, &to) || lo >= end || hi <= start)
			continue;
		err = u->sc == SC_MUNMAP ? stream_emit_unmap(s, smp, u, tid) : stream_emit_remap(s, smp, u, tid, to);
		if (!err)
			err = stream_emit_vma_writes(s, smp, u);
		u->unmapped = true;
		n--;
	}
	s->nr_unmapping = n;
	return err;
}

/*
 * An AIO ring that io_setup mapped ("/[aio] (deleted)", shared): its
 * context id is its address, and io_destroy of that id unmaps it whole
 * (fs/aio.c, kill_ioctx). Its length is kept until then. 0 or -ENOMEM.
 */
int stream_aio_note(struct ms_stream *s, const struct pending_map *pm)
{
	size_t i;

	if (strncmp(pm->name, "/[aio]", 6))
		return 0;
	for (i = 0; i < s->nr_aio; i++)
		if (s->aio[i].pid == pm->pid && s->aio[i].start == pm->m.start)
			break;
	if (i == s->nr_aio) {
		if (MS_GROW(s->aio, s->nr_aio + 1, s->cap_aio, 4, SIZE_MAX, false))
			return -ENOMEM;
		s->nr_aio++;
	}
	s->aio[i] = (struct stream_aio){ pm->pid, pm->m.start, pm->m.end };
	return 0;
}

/* io_destroy(ctx) returned 0: the ring at ctx, where its map was seen, is unmapped. */
int stream_aio_destroyed(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	struct ms_event ev;
	size_t i;

	for (i = 0; i < s->nr_aio; i++)
		if (s->aio[i].pid == smp->pid && s->aio[i].start == t->args[0])
			break;
	if (i == s->nr_aio)
		return 0;                /* mapped before the recording: its length is not known */
	base_event(&ev, MS_EV_UNMAP, smp);
	ev.unmap.start = s->aio[i].start;
	ev.unmap.end = s->aio[i].end;
	s->aio[i] = s->aio[--s->nr_aio];
	return stream_emit_with_chain(s, t, &ev);
}

void stream_unmaps_free(struct ms_stream *s)
{
	free(s->unmapping);
	s->unmapping = NULL;
	s->nr_unmapping = s->cap_unmapping = 0;
	free(s->aio);
	s->aio = NULL;
	s->nr_aio = s->cap_aio = 0;
}
