/*
 * The process table: which pids lead to which address space, and which
 * threads keep one alive. The kernel's mm lives as long as a task uses
 * it, not as long as the process's first thread:
 *  - a leader that exits while its threads run drops only its own
 *    reference (exit_mm): the maps stay until the last thread exits;
 *  - an exec from a thread that does not lead kills the leader, which
 *    writes an EXIT for PID:PID, then takes over the pid (de_thread): the
 *    process goes on, with one thread, in the exec's new mm;
 *  - clone(CLONE_VM) without CLONE_THREAD, vfork included, gives two
 *    processes one mm (copy_mm): both pids lead to one struct proc, which
 *    counts them (users), until one execs or exits.
 * Threads are known from their creation (a FORK within the process) or
 * from a change they made; one that did neither cannot keep the maps.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"

struct group {
	uint32_t threads;        /* live threads known, the leader not counted */
	bool leader_gone;        /* the leader exited while they ran */
};

static uint32_t owner_of(const struct ms_aspace *as, uint32_t tid)
{
	return (uint32_t)(uintptr_t)ms_u32map_get(&as->threads, tid);
}

static struct group *group_of(struct ms_aspace *as, uint32_t pid, bool make)
{
	struct group *g = ms_u32map_get(&as->groups, pid);

	if (g || !make)
		return g;
	g = calloc(1, sizeof(*g));
	if (g && ms_u32map_put(&as->groups, pid, g)) {
		free(g);
		g = NULL;
	}
	return g;
}

/* Forgets thread tid (of pid's group g). */
static void forget_thread(struct ms_aspace *as, struct group *g, uint32_t tid)
{
	ms_u32map_del(&as->threads, tid);
	if (g && g->threads)
		g->threads--;
}

/* Forgets process pid's threads and its group: it has ended, or exec left it one thread. */
static void drop_group(struct ms_aspace *as, uint32_t pid)
{
	struct group *g = ms_u32map_del(&as->groups, pid);
	uint32_t tid, *gone = NULL;
	size_t pos = 0, n = 0;
	void *v;

	if (!g)
		return;
	if (g->threads && (gone = calloc(g->threads, sizeof(*gone))))
		while (n < g->threads && (v = ms_u32map_next(&as->threads, &pos, &tid)))
			if ((uint32_t)(uintptr_t)v == pid)
				gone[n++] = tid;
	while (n)
		ms_u32map_del(&as->threads, gone[--n]);
	free(gone);
	free(g);
}

void ms_tasks_note_thread(struct ms_aspace *as, uint32_t pid, uint32_t tid)
{
	uint32_t was = owner_of(as, tid);
	struct group *g;

	if (tid == pid || !pid || !tid || was == pid)     /* tid 0: not known (no sample_id_all) */
		return;
	if (was)                 /* a tid used again: the thread before went unseen */
		forget_thread(as, ms_u32map_get(&as->groups, was), tid);
	g = group_of(as, pid, true);
	if (g && !ms_u32map_put(&as->threads, tid, (void *)(uintptr_t)pid))
		g->threads++;
}

/* Another pid that leads to p, or 0. */
static uint32_t other_user(const struct ms_aspace *as, const struct proc *p, uint32_t pid)
{
	size_t pos = 0;
	uint32_t key;
	void *v;

	while ((v = ms_u32map_next(&as->procs, &pos, &key)))
		if (v == p && key != pid)
			return key;
	return 0;
}

/* pid leaves the address space it shares, for an empty one of its own (with its name). NULL on ENOMEM. */
static struct proc *unshare(struct ms_aspace *as, struct proc *shared, uint32_t pid)
{
	struct proc *own = calloc(1, sizeof(*own));

	if (!own)
		return NULL;
	own->pid = pid;
	own->heap = own->stack = -1;
	own->users = 1;
	memcpy(own->comm, shared->comm, sizeof(own->comm));
	ms_u32map_init(&own->named);
	if (ms_u32map_put(&as->procs, pid, own)) {
		free(own);
		return NULL;
	}
	if (shared->pid == pid)   /* the regions it makes from now on are another user's */
		shared->pid = other_user(as, shared, pid);
	shared->users--;
	as->last_proc = own;
	return own;
}

int ms_tasks_share(struct ms_aspace *as, struct proc *parent, const struct ms_event *ev)
{
	uint32_t child = ev->fork.child_pid;
	struct proc *copy = ms_u32map_get(&as->procs, child);

	if (copy == parent || child == ev->pid)
		return 0;
	if (ms_u32map_put(&as->procs, child, parent))
		return -ENOMEM;
	parent->users++;
	drop_group(as, child);
	if (copy) {              /* the copy the FORK record made: the child never had it */
		if (copy->users == 1)
			ms_pieces_clear(as, copy, ev->time);
		else if (copy->pid == child)
			copy->pid = other_user(as, copy, child);
		ms_aspace_proc_put(copy);
	}
	as->last_proc = parent;
	return 0;
}

struct proc *ms_tasks_new_process(struct ms_aspace *as, uint32_t pid)
{
	struct proc *p = ms_u32map_get(&as->procs, pid);

	drop_group(as, pid);     /* the pid's last holder, whose end went unseen */
	if (p && p->users > 1)
		return unshare(as, p, pid);
	return ms_aspace_proc_make(as, pid);
}

/* Whether an EXIT ends its process: it is the last thread known alive. */
static bool exit_ends(const struct ms_aspace *as, const struct ms_event *ev)
{
	const struct group *g = ms_u32map_get(&as->groups, ev->pid);

	if (ev->tid == ev->pid)
		return !g || !g->threads;
	return g && g->leader_gone && g->threads == 1 && owner_of(as, ev->tid) == ev->pid;
}

MS_EXPORT bool ms_aspace_exit_ends(const struct ms_aspace *as, const struct ms_event *ev)
{
	return ev->kind == MS_EV_EXIT && exit_ends(as, ev);
}

bool ms_tasks_exit(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	struct group *g = ms_u32map_get(&as->groups, ev->pid);
	bool ends = exit_ends(as, ev);

	if (ev->tid != ev->pid && owner_of(as, ev->tid) == ev->pid)
		forget_thread(as, g, ev->tid);
	else if (ev->tid == ev->pid && g && !ends)
		g->leader_gone = true;
	if (!ends)
		return false;
	drop_group(as, ev->pid);
	if (p->users > 1)
		unshare(as, p, ev->pid);       /* the others keep it; on ENOMEM, so does this pid */
	else
		ms_pieces_clear(as, p, ev->time);
	return true;
}

struct proc *ms_tasks_exec(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	drop_group(as, ev->pid);
	return p->users > 1 ? unshare(as, p, ev->pid) : p;
}

void ms_tasks_release(struct ms_aspace *as)
{
	size_t pos = 0;
	void *g;

	while ((g = ms_u32map_next(&as->groups, &pos, NULL)))
		free(g);
	ms_u32map_release(&as->groups);
	ms_u32map_release(&as->threads);
}
