/*
 * Applying changes: each event that changes an address space, as the
 * kernel does it, on the pieces (pieces.c) under the VMA rules
 * (vmarules.c), and described for the timeline and the watch channel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace/internal.h"
#include "util/str.h"

/* What was in [start, end) is gone. */
static void set_release(struct ms_change *c, uint64_t start, uint64_t end)
{
	c->release_start = start;
	c->release_end = end;
}

/* A change to [start, end): it takes the name of the region that held start before it (none for 0). */
static const struct ms_region *set_range(struct ms_aspace *as, uint32_t pid, struct ms_change *c,
					 uint64_t start, uint64_t end)
{
	const struct ms_region *r = start ? ms_aspace_lookup(as, pid, start) : NULL;

	c->start = start;
	c->end = end;
	if (r)
		ms_str_copy(as->change_name, sizeof(as->change_name), r->name);
	return r;
}

static bool alive_overlaps(struct ms_aspace *as, int64_t id, uint64_t start, uint64_t end)
{
	const struct ms_region *r = id >= 0 ? as->regions[id] : NULL;

	return r && r->alive && start <= r->end && r->start <= end;
}

/* The main stack or the heap grows: the same region, more pages. */
static int grow(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, int64_t id)
{
	const struct ms_event_map *m = &ev->map;
	uint16_t vmflags = (uint16_t)(p->def_vmflags | VF_ACCOUNT | (p->merge_any ? VF_MERGEABLE : 0));
	size_t i;
	int err;

	/*
	 * Pages the VMA it joins grew by have its flags (any piece of the
	 * region in the VMA: the kernel's record of a stack grown covers the
	 * whole VMA); a VMA of their own (brk) has mlockall's, VM_ACCOUNT, and
	 * VM_MERGEABLE where PR_SET_MEMORY_MERGE asked (do_brk_flags,
	 * ksm_vma_flags).
	 */
	for (i = lower(p, m->vma_start); i < p->n && p->p[i].start < m->vma_end; i++)
		if (p->p[i].region == (uint64_t)id) {
			vmflags = p->p[i].vmflags;
			break;
		}
	if ((err = ms_pieces_fill(p, m->start, m->end, as->regions[id], m->prot, m->flags & ~(uint32_t)MAP_LOCKED,
				  vmflags)))
		return err;
	ms_pieces_set_vma(p, m->vma_start, m->vma_end);
	ms_pieces_touch(as, (uint32_t)id);
	ms_pieces_settle(as, p, ev->time);
	return 0;
}

/* Without brk records, the kernel's first heap map said //anon: the anonymous region where the heap starts is it. */
static void adopt_first_heap(struct ms_aspace *as, struct proc *p, const struct ms_event_map *m)
{
	const struct ms_region *first = ms_aspace_lookup(as, p->pid, m->start);
	struct ms_region *h;
	char *old;

	if (!first || first->kind != MS_KIND_ANON || first->start != m->start)
		return;
	h = as->regions[first->id];
	old = (char *)h->proc_name;          /* == h->name: anonymous, never renamed */
	p->heap = h->id;
	ms_region_rename(h, "[heap]", MS_KIND_HEAP);
	if (h->name != old) {
		h->proc_name = h->name;          /* /proc calls it [heap] too */
		ms_region_name_free(old);
	}
}

/* The stack grew by a map: the change covers the whole stack now. */
static int grow_stack(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	const struct ms_region *r;
	int err = grow(as, p, ev, p->stack);

	if (err || !c)
		return err;
	r = ms_aspace_lookup(as, ev->pid, ev->map.end - 1);
	c->region = r;
	if (r) {
		c->start = r->start;
		c->end = r->end;
	}
	ms_str_copy(as->change_name, sizeof(as->change_name), "[stack]");
	return 0;
}

/* The heap grew, by a map or a brk: the change is to the heap. */
static void describe_heap(struct ms_aspace *as, const struct ms_event *ev, struct ms_change *c)
{
	c->region = ms_aspace_heap(as, ev->pid);
	ms_str_copy(as->change_name, sizeof(as->change_name), "[heap]");
}

/* Whether anything is mapped in [start, end). */
static bool occupied(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i = lower(p, start);

	return i < p->n && p->p[i].start < end;
}

/*
 * The page offset of a new map's start. An anonymous VMA's are its
 * address's where it is made (do_mmap), which only mremap changes; the
 * record gives its VMA's (perf's mmap2 pgoff), for the VMA the map merged
 * into where it did. /proc shows none (0): then the address's.
 */
static uint64_t map_offsets(const struct ms_region *r, const struct ms_event_map *m)
{
	const uint64_t vma = m->vma_start && m->vma_start <= m->start ? m->vma_start : m->start;

	if (region_has_file(r))
		return m->pgoff;
	if (m->via == MS_VIA_SYNTH || !m->pgoff)
		return m->start;
	return m->pgoff + (m->start - vma);
}

/* A new map: replaces what was under it (MAP_FIXED does so silently) and makes a region. */
static int map_new(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	const struct ms_event_map *m = &ev->map;
	bool replaces = c && occupied(p, m->start, m->end);
	const struct ms_region *r;
	struct piece pc;
	uint16_t locks;
	int id, err;

	if ((err = ms_pieces_unmap(as, p, m->start, m->end, -1, ev->time)))
		return err;
	if ((id = ms_region_new(as, p, ev, m, m->name)) < 0)
		return id;
	/*
	 * Locked: what mlockall(MCL_FUTURE) asked for (mm->def_flags), and
	 * MAP_LOCKED, which the kernel's record says for VM_LOCKED (perf's
	 * mmap2 flags); what /proc showed is not known. The lock is a VMA
	 * flag, which munlock clears: not one of the flags a merge compares.
	 */
	locks = m->via == MS_VIA_SYNTH ? 0 : (uint16_t)(p->def_vmflags | (m->flags & MAP_LOCKED ? VF_LOCKED : 0));
	pc = (struct piece){ m->start, m->end, map_offsets(as->regions[id], m), m->prot,
			     m->flags & ~(uint32_t)MAP_LOCKED, (uint32_t)id, false,
			     (uint16_t)(locks | ms_vma_map_accounting(m)), 0, 0, 0 };
	/* PR_SET_MEMORY_MERGE: what mmap_region makes (ksm_vma_flags), not the stack an exec sets up. */
	if (p->merge_any && m->via != MS_VIA_SYNTH && strcmp(m->name, "[stack]") && ms_vma_ksm_may_merge(as, &pc))
		pc.vmflags |= VF_MERGEABLE;
	if ((err = ms_pieces_insert(p, lower(p, m->start), &pc)))
		return err;
	ms_pieces_set_vma(p, m->vma_start, m->vma_end);
	/* mm_populate: a VMA locked, not on fault (mlockall's MCL_FUTURE), or MAP_POPULATE. */
	if (pc.vmflags & VF_LOCKS)
		ms_vma_populate(as, p, m->start, m->end, VF_LOCKS, VF_LOCKED);
	else if (m->populate)
		ms_vma_populate(as, p, m->start, m->end, VF_LOCKONFAULT, 0);
	if (!strcmp(m->name, "[stack]"))
		p->stack = id;
	if (!strcmp(m->name, "[heap]"))
		p->heap = id;
	if (c) {
		c->prot = (int)m->prot;
		c->region = r = ms_aspace_lookup(as, ev->pid, m->start);
		ms_str_copy(as->change_name, sizeof(as->change_name), r ? r->name : m->name);
		if (replaces)
			set_release(c, m->start, m->end);
	}
	return 0;
}

/*
 * An MMAP2 record: a new map, or, made outside the calls we follow (by
 * the kernel), the main stack or the heap growing. c (may be NULL) is
 * filled as it applies.
 */
static int apply_map(struct ms_aspace *as, struct proc *p, const struct ms_event *ev,
		     enum ms_aspace_op *op, struct ms_change *c)
{
	const struct ms_event_map *m = &ev->map;
	bool outside = m->via != MS_VIA_MMAP && m->via != MS_VIA_SHMAT;
	int err;

	if (m->start >= m->end)
		return 0;                /* the kernel makes no VMA of no length: such a map changes nothing */
	if (c) {
		c->start = m->start;
		c->end = m->end;
	}
	if (outside && !strcmp(m->name, "[stack]") && alive_overlaps(as, p->stack, m->start, m->end)) {
		*op = MS_OP_STACK_GROW;
		return grow_stack(as, p, ev, c);
	}
	if (outside && !strcmp(m->name, "[heap]") && !alive_overlaps(as, p->heap, m->start, m->end))
		adopt_first_heap(as, p, m);
	if (outside && !strcmp(m->name, "[heap]") && alive_overlaps(as, p->heap, m->start, m->end)) {
		*op = MS_OP_BRK;
		if (!(err = grow(as, p, ev, p->heap)) && c)
			describe_heap(as, ev, c);
		return err;
	}
	*op = MS_OP_MAP;
	return map_new(as, p, ev, c);
}

/*
 * mprotect_fixup's VM_ACCOUNT: made writable, private and reserved, a VMA
 * is accounted from then on; made unwritable, an anonymous one that has no
 * anon_vma yet (never faulted) gives its charge back, and then merges with
 * unaccounted neighbours again. A file's (a RELRO segment) keeps it.
 */
static void protect_accounting(const struct ms_aspace *as, struct piece *pc, uint32_t prot)
{
	if (prot & PROT_WRITE) {
		if (!(pc->prot & PROT_WRITE) && !(pc->flags & MAP_SHARED) && !(pc->vmflags & VF_NORESERVE))
			pc->vmflags |= VF_ACCOUNT;
	} else if ((pc->vmflags & VF_ACCOUNT) && !pc->anon && ms_vma_is_anonymous(as, pc)) {
		pc->vmflags &= (uint16_t)~VF_ACCOUNT;
	}
}

/*
 * What an mprotect that succeeded changed (do_mprotect_pkey): the
 * protection as a VMA keeps it (calc_vm_prot_bits: PROT_SEM is no VMA
 * bit, nor are the grows bits), from *start on. With PROT_GROWSDOWN the
 * range runs down to the start of the VMA that holds its start, or of the
 * first above it (a VM_GROWSDOWN one: the call fails on any other).
 * glibc's _dl_make_stack_executable makes such a call on the stack.
 */
static uint32_t protect_effective(struct proc *p, const struct ms_event *ev, uint64_t *start)
{
	size_t i, first, last;

	*start = ev->protect.start;
	if ((ev->protect.prot & PROT_GROWSDOWN) && (i = lower(p, *start)) < p->n &&
	    p->p[i].start < ev->protect.end) {
		ms_pieces_vma(p, i, &first, &last);
		*start = p->p[first].start;
	}
	return ev->protect.prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
}

/*
 * mprotect of [start, ev's end) to prot (protect_effective()'s), VMA by
 * VMA as mprotect_fixup goes: a VMA that has the new protection already is
 * left whole (newflags == oldflags returns early, and no record is
 * written); the others are split at the range's ends and take it.
 */
static int apply_protect(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, uint64_t start,
			 uint32_t prot)
{
	uint64_t end = ev->protect.end, a, b;
	size_t i = lower(p, start), first, last, j, k;
	int err;

	while (i < p->n && p->p[i].start < end) {
		ms_pieces_vma(p, i, &first, &last);
		b = p->p[last].end < end ? p->p[last].end : end;
		if (p->p[i].prot == prot) {
			i = last + 1;
			continue;
		}
		a = p->p[first].start > start ? p->p[first].start : start;
		if ((err = ms_pieces_carve(p, a, b, &i, &j)))
			return err;
		for (k = i; k < j; k++) {
			protect_accounting(as, &p->p[k], prot);
			p->p[k].prot = prot;
			ms_pieces_touch(as, p->p[k].region);
		}
		if (i < p->n)
			p->p[i].join = false;
		if (j < p->n)
			p->p[j].join = false;
		i = j;
	}
	ms_pieces_settle(as, p, ev->time);
	/* A private VMA locked, not on fault, made writable is populated (mprotect_fixup): its COW breaks now. */
	if (prot & PROT_WRITE)
		ms_vma_populate(as, p, start, end, VF_LOCKS, VF_LOCKED);
	return 0;
}

/*
 * Whether a brk's window held its heap's VMA: one of no length (an MMAP2
 * of length 0, which no kernel writes) is as none, as such a map on its
 * own changes nothing.
 */
static bool brk_has_vma(const struct ms_event *ev)
{
	return ev->brk.vma_start < ev->brk.vma_end;
}

static int apply_brk(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	const struct ms_region *heap = p->heap >= 0 ? as->regions[p->heap] : NULL;
	struct ms_event grown;
	enum ms_aspace_op op;
	uint64_t from;
	int err;

	ms_heap_note_brk(p, ev);
	if (heap && !heap->alive)
		heap = NULL;
	/*
	 * old == new: the first brk seen of this process (attached to), whose
	 * break before is not known: the heap's end says where it was.
	 */
	if (ev->brk.new_brk == ev->brk.old_brk && heap && ev->brk.new_brk >= heap->start &&
	    PAGE_ALIGN(ev->brk.new_brk) < heap->end && !brk_has_vma(ev))
		return ms_pieces_unmap(as, p, PAGE_ALIGN(ev->brk.new_brk), heap->end, p->heap, ev->time);
	if (brk_has_vma(ev) && (ev->brk.new_brk > ev->brk.old_brk ||
				(ev->brk.new_brk == ev->brk.old_brk && (!heap || ev->brk.vma_end > heap->end)))) {
		grown = *ev;
		grown.kind = MS_EV_MAP;
		memset(&grown.map, 0, sizeof(grown.map));
		grown.map.start = grown.map.vma_start = ev->brk.vma_start;
		grown.map.end = grown.map.vma_end = ev->brk.vma_end;
		grown.map.prot = PROT_READ | PROT_WRITE;
		grown.map.flags = MAP_PRIVATE;
		grown.map.name = "[heap]";      /* the kernel's first record says //anon */
		grown.map.via = MS_VIA_KERNEL;
		if (!heap)
			return apply_map(as, p, &grown, &op, NULL);
		if ((err = grow(as, p, &grown, p->heap)))
			return err;
		/* Where mlockall(MCL_FUTURE) locks new maps, brk populates what it grew by (mm_populate). */
		if ((p->def_vmflags & VF_LOCKED) && ev->brk.new_brk > ev->brk.old_brk)
			ms_vma_populate(as, p, PAGE_ALIGN(ev->brk.old_brk), PAGE_ALIGN(ev->brk.new_brk), VF_LOCKONFAULT, 0);
		return 0;
	}
	if (ev->brk.new_brk < ev->brk.old_brk && heap) {
		/* The kernel never moves the break below where the heap starts. */
		from = PAGE_ALIGN(ev->brk.new_brk);
		if (from < heap->start)
			from = heap->start;
		return ms_pieces_unmap(as, p, from, PAGE_ALIGN(ev->brk.old_brk), p->heap, ev->time);
	}
	return 0;
}

/*
 * The child's last piece, a copy of its parent's, as dup_mmap leaves it:
 * locks are not inherited, nor userfaultfd's registration
 * (dup_userfaultfd, without EVENT_FORK). anon_vma_fork: each VMA that had
 * an anon_vma gets a new one of its own, in *anon, which a piece joined to
 * the one before (join is the parent's) shares; one under MADV_WIPEONFORK
 * gets none (its pages are not copied either).
 */
static void forked_piece(struct ms_aspace *as, struct proc *child, uint32_t *anon)
{
	struct piece *pc = &child->p[child->n - 1];

	pc->vmflags &= (uint16_t)~(VF_LOCKS | VF_UFFD);
	if (!pc->anon || (pc->vmflags & VF_WIPEONFORK)) {
		pc->anon = 0;
		return;
	}
	if (!(child->n > 1 && pc->join))
		*anon = (++as->last_anon & ~ANON_FORKED) | ANON_FORKED;
	pc->anon = *anon;
}

static int apply_fork(struct ms_aspace *as, struct proc *parent, const struct ms_event *ev)
{
	struct proc *child;
	uint32_t *map, anon = 0;
	size_t i;
	int id;
	struct ms_event_map m;
	const struct ms_region *r;

	if (ev->fork.child_pid == ev->pid) {
		ms_tasks_note_thread(as, ev->pid, ev->fork.child_tid);
		return 0;                        /* a thread: same address space */
	}
	if (ev->fork.share_vm)
		return ms_tasks_share(as, parent, ev);
	child = ms_tasks_new_process(as, ev->fork.child_pid);
	if (!child)
		return -ENOMEM;
	ms_pieces_clear(as, child, ev->time);
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->merge_any = parent->merge_any;          /* MMF_VM_MERGE_ANY: in MMF_INIT_MASK */
	child->start_brk = parent->start_brk;          /* the break is the mm's: copied */
	child->brk = parent->brk;
	child->brk_known = parent->brk_known;
	map = calloc(as->nr ? as->nr : 1, sizeof(*map));   /* parent region -> child region + 1 */
	if (!map)
		return -ENOMEM;
	for (i = 0; i < parent->n; i++) {
		if (parent->p[i].vmflags & VF_DONTFORK)
			continue;            /* MADV_DONTFORK: the child has no such VMA */
		r = as->regions[parent->p[i].region];
		if (!map[r->id]) {
			memset(&m, 0, sizeof(m));
			m.start = r->start;
			m.end = r->end;
			m.prot = r->prot;
			m.flags = r->flags;
			m.maj = r->maj;
			m.min = r->min;
			m.ino = r->ino;
			m.via = r->via;
			m.alloc_chain = r->alloc_chain;
			m.alloc_chain_len = r->alloc_chain_len;
			id = ms_region_new(as, child, ev, &m, r->proc_name);
			if (id < 0) {
				free(map);
				return id;
			}
			/* Its name as the parent's: the /proc name unless given one of its own. */
			if (r->name != r->proc_name)
				ms_region_rename(as->regions[id], r->name, r->kind);
			else
				as->regions[id]->kind = r->kind;
			map[r->id] = (uint32_t)id + 1;
			r = as->regions[parent->p[i].region];   /* regions may have moved */
			if ((int64_t)r->id == parent->heap)
				child->heap = id;
			if ((int64_t)r->id == parent->stack) {
				child->stack = id;
				child->start_stack = parent->start_stack;
			}
		}
		if (ms_pieces_insert(child, child->n, &parent->p[i])) {
			free(map);
			return -ENOMEM;
		}
		child->p[child->n - 1].region = map[r->id] - 1;
		forked_piece(as, child, &anon);
	}
	free(map);
	return 0;
}

/*
 * A LOST record names the task that wrote the next record once the ring
 * had room, not the one whose records were dropped, and a CPU's ring is
 * shared by every process traced: any process's maps may have changed
 * unseen. Every region alive now is marked; those made before the last
 * LOST record and alive then were marked then, and none comes back.
 */
static void mark_lost(struct ms_aspace *as)
{
	size_t i;

	for (i = as->lost_from; i < as->nr; i++)
		if (as->regions[i]->alive)
			as->regions[i]->records_lost = true;
	as->lost_from = as->nr;
}


/*
 * The changes, each applied and (where c is not NULL) described as it is
 * applied: what the timeline and the watch channel show. c comes zeroed,
 * with its prot, advice and lock -1.
 */

/* [*start, *end) cut to what p has mapped in it, its first piece to its last: false where nothing is. */
static bool mapped_span(struct proc *p, uint64_t *start, uint64_t *end)
{
	size_t i = lower(p, *start), j = i;

	if (i == p->n || p->p[i].start >= *end)
		return false;
	while (j + 1 < p->n && p->p[j + 1].start < *end)
		j++;
	if (p->p[i].start > *start)
		*start = p->p[i].start;
	if (p->p[j].end < *end)
		*end = p->p[j].end;
	return true;
}

/*
 * munmap. The VMA tree's write of NULL (unmap.tree) takes in the gaps
 * beside what the call removed, as far as the VMA either side: the change
 * is the part that was mapped, and none where nothing was.
 */
static int change_unmap(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, enum ms_aspace_op *op,
			struct ms_change *c)
{
	uint64_t start = ev->unmap.start, end = ev->unmap.end;

	*op = MS_OP_UNMAP;
	if (ev->unmap.tree && !mapped_span(p, &start, &end)) {
		*op = MS_OP_NONE;
		return 0;
	}
	if (c) {
		c->region = set_range(as, ev->pid, c, start, end);   /* which may end now */
		set_release(c, start, end);
	}
	return ms_pieces_unmap(as, p, start, end, -1, ev->time);
}

static int change_remap(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	int err;

	if (c) {
		set_range(as, ev->pid, c, ev->remap.old_start, ev->remap.old_end);
		c->new_start = ev->remap.new_start;
		c->new_end = ev->remap.new_end;
		set_release(c, ev->remap.old_start, ev->remap.old_end);
	}
	if ((err = ms_remap_apply(as, p, ev)) || !c)
		return err;
	c->prot = ms_aspace_prot_at(as, ev->pid, ev->remap.new_start);
	c->region = ms_aspace_lookup(as, ev->pid, ev->remap.new_start);
	return 0;
}

static int change_protect(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	uint64_t start;
	const uint32_t prot = protect_effective(p, ev, &start);
	int err;

	if (c) {
		c->prot = (int)prot;
		set_range(as, ev->pid, c, start, ev->protect.end);
	}
	if ((err = apply_protect(as, p, ev, start, prot)) || !c)
		return err;
	c->region = c->start ? ms_aspace_lookup(as, ev->pid, c->start) : NULL;
	return 0;
}

/* madvise: advice that frees pages (DONTNEED, FREE, REMOVE, DONTNEED_LOCKED) releases the range. */
static int change_madvise(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	uint32_t advice = ev->madvise.advice;
	int err;

	if (c) {
		set_range(as, ev->pid, c, ev->madvise.start, ev->madvise.end);
		c->advice = (int)advice;
		if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE || advice == 24)
			set_release(c, ev->madvise.start, ev->madvise.end);
	}
	if ((err = ms_vma_advise(as, p, ev)) || !c)
		return err;
	c->region = ms_aspace_lookup(as, ev->pid, c->start);
	return 0;
}

static int change_mlock(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	int err;

	if (c) {
		if (!ev->mlock.all)
			set_range(as, ev->pid, c, ev->mlock.start, ev->mlock.end);
		/* mlockall(MCL_FUTURE) alone changes no VMA: what maps to come get is the change. */
		c->lock = !ev->mlock.all && ev->mlock.def >= 0 ? ev->mlock.def : (int)ev->mlock.lock;
		if (ev->mlock.all)
			snprintf(as->change_name, sizeof(as->change_name), "every VMA%s", ev->mlock.def > 0 ? ", and maps to come" : "");
		else if (ev->mlock.def > 0)
			snprintf(as->change_name, sizeof(as->change_name), "maps to come");
	}
	if ((err = ms_vma_lock(as, p, ev)) || !c)
		return err;
	c->region = c->start ? ms_aspace_lookup(as, ev->pid, c->start) : NULL;
	return 0;
}

/* brk: a first one that only told the break (old == new) and changed nothing is no change. */
static int change_brk(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, enum ms_aspace_op *op,
		      struct ms_change *c)
{
	const struct ms_region *heap = p->heap >= 0 && as->regions[p->heap]->alive ? as->regions[p->heap] : NULL;
	uint64_t heap_end = heap ? heap->end : 0;
	int err = apply_brk(as, p, ev);

	heap = p->heap >= 0 && as->regions[p->heap]->alive ? as->regions[p->heap] : NULL;
	*op = MS_OP_BRK;
	if (!err && ev->brk.old_brk == ev->brk.new_brk && !brk_has_vma(ev) && heap_end == (heap ? heap->end : 0))
		*op = MS_OP_NONE;
	if (err || !c || *op == MS_OP_NONE)
		return err;
	c->start = ev->brk.old_brk;
	c->end = ev->brk.new_brk;
	describe_heap(as, ev, c);
	if (ev->brk.new_brk < ev->brk.old_brk)
		set_release(c, PAGE_ALIGN(ev->brk.new_brk), PAGE_ALIGN(ev->brk.old_brk));
	return 0;
}

static int change_fork(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	if (c) {
		c->child_pid = ev->fork.child_pid;
		c->child_tid = ev->fork.child_tid;
		snprintf(as->change_name, sizeof(as->change_name), "child %u/%u", c->child_pid, c->child_tid);
	}
	return apply_fork(as, p, ev);
}

/* exec and exit release everything (exit: when the last thread goes, and no other process shares the maps). */
static int change_task(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	bool all = true, merge_any = p->merge_any;

	if (ev->kind == MS_EV_EXIT)
		all = ms_tasks_exit(as, p, ev);
	else if ((p = ms_tasks_exec(as, p, ev))) {
		ms_pieces_clear(as, p, ev->time);
		p->merge_any = merge_any;               /* the new mm keeps MMF_VM_MERGE_ANY (MMF_INIT_MASK) */
		/* A new program: where its stack begins and its break starts come with its first calls. */
		p->stack_new = p->brk_new = true;
	} else
		return -ENOMEM;
	if (ev->kind == MS_EV_EXEC)
		ms_str_copy(p->comm, sizeof(p->comm), ev->comm.comm);
	if (!c)
		return 0;
	c->release_all = all;
	if (ev->kind == MS_EV_EXEC)
		ms_str_copy(as->change_name, sizeof(as->change_name), ev->comm.comm);
	return 0;
}

/*
 * The VMA tree's write of one VMA: [start, end) is one VMA now, exactly,
 * whatever call made it (mseal, mbind, userfaultfd, a failed mprotect
 * among them): pieces are split at its ends, then joined. The writes come
 * after the change that caused them has settled: the pieces they join
 * that are alike (one mprotect over many VMAs, which the kernel merged)
 * are made one, and their regions settled, now.
 */
static int apply_vma(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	size_t i, j;
	int err;

	if (ev->vma.start >= ev->vma.end)
		return 0;                        /* the VMA tree holds no VMA of no length: a damaged record */
	if (!ms_pieces_vma_again(p, ev->vma.start, ev->vma.end) && !ms_pieces_vma_whole(p, ev->vma.start, ev->vma.end)) {
		if ((err = ms_pieces_carve(p, ev->vma.start, ev->vma.end, &i, &j)))
			return err;
		ms_pieces_set_vma(p, ev->vma.start, ev->vma.end);
	}
	if (p->nr_cuts || p->cut_lo < p->cut_hi)
		ms_pieces_settle(as, p, ev->time);
	return 0;
}

/* Events that change no mapping: a new comm, a thread's stack pointer. */
static void apply_other(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	switch (ev->kind) {
	case MS_EV_COMM:
		if (ev->tid == ev->pid || !p->comm[0])
			ms_str_copy(p->comm, sizeof(p->comm), ev->comm.comm);
		break;
	case MS_EV_THREAD_SP:
		if (ev->tid != ev->pid && ev->tid != p->last_named)
			ms_stack_name_thread(as, p, ev);
		else if (ev->tid == ev->pid && p->stack_new)
			ms_stack_note_start(as, p, ev->sample.sp);
		break;
	default:
		break;
	}
}

int __attribute__((noinline)) ms_aspace_apply_event(struct ms_aspace *as, const struct ms_event *ev,
						    enum ms_aspace_op *opp, struct ms_change *c)
{
	enum ms_aspace_op op = MS_OP_NONE;
	struct proc *p;
	int err = 0;

	/*
	 * A fault waits for the growth it causes: its VMA tree write, then its
	 * MMAP2. An access sample (written by the recorder, not the thread)
	 * may fall between the two.
	 */
	if (ev->kind != MS_EV_MAP && ev->kind != MS_EV_LOST && ev->kind != MS_EV_VMA &&
	    ev->kind != MS_EV_THREAD_SP && ev->kind != MS_EV_ACCESS)
		resolve_pending(as, ev->tid);
	if (ev->kind == MS_EV_LOST) {
		mark_lost(as);
		goto out;
	}
	if (!(p = proc_get(as, ev->pid)))
		return -ENOMEM;
	if (ev->tid != ev->pid && ev->kind != MS_EV_FORK && ev->kind != MS_EV_EXIT && ev->kind != MS_EV_ACCESS)
		ms_tasks_note_thread(as, ev->pid, ev->tid);   /* a thread that acts is alive */
	switch (ev->kind) {
	case MS_EV_MAP:
		err = apply_map(as, p, ev, &op, c);
		resolve_pending(as, ev->tid);
		break;
	case MS_EV_UNMAP: err = change_unmap(as, p, ev, &op, c); break;
	case MS_EV_SHMDT: op = MS_OP_UNMAP; err = ms_vma_shmdt(as, p, ev, c); break;
	case MS_EV_REMAP:
		if (ev->remap.old_end < ev->remap.old_start || ev->remap.new_end < ev->remap.new_start)
			break;                       /* a move no kernel made (a range that ends before it starts) */
		op = MS_OP_REMAP;
		err = change_remap(as, p, ev, c);
		break;
	case MS_EV_PROTECT: op = MS_OP_PROTECT; err = change_protect(as, p, ev, c); break;
	case MS_EV_BRK: err = change_brk(as, p, ev, &op, c); break;
	case MS_EV_MADVISE: op = MS_OP_MADVISE; err = change_madvise(as, p, ev, c); break;
	case MS_EV_MLOCK: op = MS_OP_LOCK; err = change_mlock(as, p, ev, c); break;
	case MS_EV_FORK: op = ev->fork.share_vm ? MS_OP_NONE : MS_OP_FORK; err = change_fork(as, p, ev, c); break;
	case MS_EV_EXEC: op = MS_OP_EXEC; err = change_task(as, p, ev, c); break;
	case MS_EV_EXIT: op = MS_OP_EXIT; err = change_task(as, p, ev, c); break;
	case MS_EV_UNLINK: ms_names_unlink(as, ev); break;
	case MS_EV_RENAME: ms_names_rename(as, ev); break;
	case MS_EV_ACCESS: ms_aspace_charge_access(as, p, ev); break;
	case MS_EV_VMA: err = apply_vma(as, p, ev); break;
	case MS_EV_VMA_ATTR: err = ms_vma_set_attr(as, p, ev); break;
	default: apply_other(as, p, ev); break;
	}
out:
	if (opp)
		*opp = op;
	if (c)
		c->op = op;
	return err;
}

MS_EXPORT int ms_aspace_apply_change(struct ms_aspace *as, const struct ms_event *ev, struct ms_change *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	as->change_name[0] = '\0';
	c->name = as->change_name;       /* filled, if at all, as the event is applied */
	c->prot = c->advice = c->lock = -1;
	c->time_ns = ev->time;
	c->pid = ev->pid;
	c->tid = ev->tid;
	if (ev->kind == MS_EV_SAMPLE)
		return ms_aspace_apply(as, ev, NULL);     /* a sample changes no mapping */
	err = ms_aspace_apply_event(as, ev, NULL, c);
	return err ? err : c->op != MS_OP_NONE;
}
