/*
 * Unmaps that a syscall's exit does not place: a munmap that another
 * thread's map overtook (done when the call let go of the mmap lock,
 * before it returned), and io_destroy's unmap of its AIO ring (no munmap
 * of its own).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stream/internal.h"
#include "util/grow.h"

/* Notes that thread tid has a munmap open. 0 or -ENOMEM. */
int stream_unmapping_open(struct ms_stream *s, uint32_t tid)
{
	const struct thread *u;
	size_t i, n = 0;

	if (s->nr_unmapping >= 64) {            /* stale entries (exits lost, or seen) go first */
		for (i = 0; i < s->nr_unmapping; i++)
			if ((u = ms_u32map_get(&s->threads, s->unmapping[i])) && u->sc == SC_MUNMAP)
				s->unmapping[n++] = s->unmapping[i];
		s->nr_unmapping = n;
	}
	if (MS_GROW(s->unmapping, s->nr_unmapping + 1, s->cap_unmapping, 8, SIZE_MAX, false))
		return -ENOMEM;
	s->unmapping[s->nr_unmapping++] = tid;
	return 0;
}

/* Thread tid's munmap closed: out of the list (the last entry of it, where a lost exit left one before). */
void stream_unmapping_closed(struct ms_stream *s, uint32_t tid)
{
	size_t i = s->nr_unmapping;

	while (i-- > 0)
		if (s->unmapping[i] == tid) {
			s->unmapping[i] = s->unmapping[--s->nr_unmapping];
			return;
		}
}

/*
 * An unmap is done when its call lets go of the mmap lock, before it
 * returns (vms_complete_munmap_vmas then frees the VMAs it took out and
 * waits for userfaultfd's unmap events). A map of another thread of the
 * process that the kernel placed in [start, end) itself (no MAP_FIXED)
 * proves that an open munmap over any of that range is done: it is
 * applied now, with the VMA tree's writes it made, and not at its exit,
 * where it would unmap the new map too.
 */
int stream_unmaps_overtaken(struct ms_stream *s, const struct ms_sample *smp, uint64_t start, uint64_t end)
{
	struct ms_event ev;
	struct thread *u;
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < s->nr_unmapping; i++) {
		u = ms_u32map_get(&s->threads, s->unmapping[i]);
		if (!u || u->sc != SC_MUNMAP || u->unmapped)
			continue;                    /* closed: dropped from the list */
		s->unmapping[n++] = s->unmapping[i];
		if (err || s->unmapping[i] == smp->tid || u->pid != smp->pid || u->args[0] >= end ||
		    u->args[0] + PAGE_ALIGN(u->args[1]) <= start)
			continue;
		base_event(&ev, MS_EV_UNMAP, smp);
		ev.tid = s->unmapping[i];
		ev.unmap.start = u->args[0];
		ev.unmap.end = u->args[0] + PAGE_ALIGN(u->args[1]);
		if (!(err = stream_emit_with_chain(s, u, &ev)))
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
