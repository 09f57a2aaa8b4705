/*
 * Whose VMA tree a write is in. maple_tree:ma_write names no address
 * space, and the writer is nearly always in its own; but the writer holds
 * the write lock of the mm it writes, and mmap_lock:mmap_lock_acquire_returned
 * and mmap_lock_released (recorded for write locks only) name that mm. A
 * process's own mm is learnt from the locks it takes in its own
 * address-space syscalls. A write under the lock of another process's mm
 * is that process's change: userfaultfd's release, for one, merges the
 * VMAs of the context's mm in whichever task drops the last reference (a
 * child at its exit, in its parent's mm; a parent closing the uffd of a
 * child it had from UFFD_EVENT_FORK, in the child's). A write in an mm
 * not known yet waits until a process is seen to own it; an mm seen made
 * (a fork's copy, an exec's new one) drops what waited for its address,
 * a freed mm's. A fork copies its VMAs into the child's tree under both
 * locks, the child's nested in its own: the child's mm is learnt at its
 * FORK record, and those writes stay the writer's, as without the locks
 * (the FORK record copies the layout).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"
#include "util/grow.h"

static uint64_t mm_of(const struct ms_stream *s, uint32_t pid)
{
	return (uint64_t)(uintptr_t)ms_u32map_get(&s->mms, pid);
}

/* The process seen to own mm (0: none), other than pid. */
static uint32_t owner_of(const struct ms_stream *s, uint64_t mm, uint32_t pid)
{
	size_t pos = 0;
	uint32_t q;
	void *v;

	while ((v = ms_u32map_next(&s->mms, &pos, &q)))
		if ((uint64_t)(uintptr_t)v == mm && q != pid)
			return q;
	return 0;
}

/* The VMA [start, end) as the kernel stored it in process pid's tree, told at smp's time. */
static int emit_for(struct ms_stream *s, const struct ms_sample *smp, uint32_t pid, uint64_t start, uint64_t end)
{
	struct ms_event ev;

	base_event(&ev, MS_EV_VMA, smp);
	ev.pid = ev.tid = pid;
	ev.vma.start = start;
	ev.vma.end = end;
	return emit(s, &ev);
}

/*
 * The writes that waited for mm's owner: to pid, in the order they came,
 * at smp's time; or, smp NULL, dropped (mm is new: they were a freed
 * one's). 0 or what the emit returned.
 */
static int take_waiting(struct ms_stream *s, const struct ms_sample *smp, uint32_t pid, uint64_t mm)
{
	size_t i, kept = 0;
	int err = 0;

	for (i = 0; i < s->nr_foreign; i++)
		if (s->foreign[i].mm != mm)
			s->foreign[kept++] = s->foreign[i];
		else if (smp && !err)
			err = emit_for(s, smp, pid, s->foreign[i].start, s->foreign[i].end);
	s->nr_foreign = kept;
	return err;
}

/* No process but pid (0: none) owns mm any more. */
static void disown(struct ms_stream *s, uint64_t mm, uint32_t pid)
{
	uint32_t q;

	while ((q = owner_of(s, mm, pid)))
		ms_u32map_del(&s->mms, q);
}

/* mm is seen made anew: what waited for its address, and whoever had it, were a freed mm's. */
static void made_anew(struct ms_stream *s, uint64_t mm)
{
	take_waiting(s, NULL, 0, mm);
	disown(s, mm, 0);
}

/* pid owns mm from now on, and no other process does (one left for dead kept it). */
static int learn(struct ms_stream *s, const struct ms_sample *smp, uint32_t pid, uint64_t mm)
{
	if (mm_of(s, pid) == mm)
		return 0;
	disown(s, mm, pid);
	if (ms_u32map_put(&s->mms, pid, (void *)(uintptr_t)mm))
		return -ENOMEM;
	return take_waiting(s, smp, pid, mm);
}

int stream_on_mmlock(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint64_t mm = stream_field(ei, smp, 0);
	/* acquire_returned: mm, write, success; released: mm, write. */
	bool acquired = ei->nr_fields == 3 && stream_field(ei, smp, 2);
	struct thread *t;

	if (!mm || !stream_field(ei, smp, 1))
		return 0;                /* a read lock: nothing is written under it */
	if (!(t = stream_thread_get(s, smp->tid)))
		return -ENOMEM;
	if (ei->nr_fields == 2) {
		if (t->locked_mm == mm) {
			t->locked_mm = t->outer_mm;
			t->outer_mm = 0;
		} else if (t->outer_mm == mm) {
			t->outer_mm = 0;
		}
		return 0;
	}
	if (!acquired)
		return 0;
	/*
	 * Nested in the lock it holds, with no write since: a fork's child's
	 * mm, new (dup_mmap). A lock it wrote under and then downgraded (a
	 * stack grown by a fault) is held no more, though no release says so.
	 */
	if (t->locked_mm && t->locked_mm != mm && !t->wrote_tree) {
		t->outer_mm = t->locked_mm;
		t->new_mm = mm;
		made_anew(s, mm);
	} else {
		t->outer_mm = t->new_mm = 0;
	}
	t->wrote_tree = false;
	t->locked_mm = mm;
	if (t->in_exec) {            /* the new program's mm, made in the execve */
		made_anew(s, mm);
		return 0;
	}
	/*
	 * In one of its own address-space calls, a process locks its own mm:
	 * not in an ioctl (a uffd's context may be another's).
	 */
	if (t->sc >= 0 && t->sc != SC_IOCTL)
		return learn(s, smp, smp->pid, mm);
	return 0;
}

/*
 * Thread ptid of process ppid made process child (a thread where child is
 * ppid): the child's mm is the one ptid locked nested in its own, if any.
 */
void stream_mm_forked(struct ms_stream *s, uint32_t ptid, uint32_t ppid, uint32_t child)
{
	struct thread *t = ms_u32map_get(&s->threads, ptid);

	if (t && t->new_mm && child != ppid)
		learn(s, NULL, child, t->new_mm);   /* nothing waits for a new mm; no memory: learnt later */
	if (t)
		t->new_mm = 0;
}

/* No lock is held: at each followed call's entry and exit, none is. */
void stream_mm_unlock(struct thread *t)
{
	t->locked_mm = t->outer_mm = t->new_mm = 0;
	t->wrote_tree = false;
}

/* Records were lost: a release among them would leave a lock held that is not. */
void stream_mm_lost(struct ms_stream *s)
{
	struct thread *t;
	size_t pos = 0;

	while ((t = ms_u32map_next(&s->threads, &pos, NULL)))
		stream_mm_unlock(t);
}

/*
 * Where a VMA tree write by thread t (sample smp) over [start, end) goes:
 * 0 where it is its own process's (the caller goes on with it), 1 where it
 * went to the process whose mm t held locked, or waits for that mm's
 * owner; a negative errno.
 */
int stream_tree_owner(struct ms_stream *s, struct thread *t, const struct ms_sample *smp, uint64_t start,
		      uint64_t end)
{
	uint64_t mm = t->locked_mm, own;
	uint32_t q;
	int err;

	t->wrote_tree = true;
	/* A fork's copy into its child's tree stays the writer's, as without the locks. */
	if (!mm || t->outer_mm || (own = mm_of(s, smp->pid)) == mm)
		return 0;
	if ((q = owner_of(s, mm, smp->pid))) {
		err = emit_for(s, smp, q, start, end);
		return err ? err : 1;
	}
	if (!own)
		return 0;                /* neither mm known: the writer's own, as without the locks */
	if (MS_ALLOC_GROW(s->foreign, s->nr_foreign + 1, s->cap_foreign))
		return -ENOMEM;
	s->foreign[s->nr_foreign++] = (struct stream_foreign){ .mm = mm, .start = start, .end = end };
	return 1;
}

/* Process pid's mm is gone (its exit) or replaced (its exec): no write is its under it any more. */
void stream_mm_forget(struct ms_stream *s, uint32_t pid)
{
	ms_u32map_del(&s->mms, pid);
}

void stream_mm_free(struct ms_stream *s)
{
	ms_u32map_release(&s->mms);
	free(s->foreign);
	s->foreign = NULL;
	s->nr_foreign = s->cap_foreign = 0;
}
