/*
 * Stacks: a thread's stack named from its stack pointer, and a fault just
 * below the main stack held until the record of the growth it causes.
 * The names /proc gives by place: [stack] to the VMA where the main stack
 * began, [heap] to those over the break's range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"

/* A thread's stack is the anonymous region its stack pointer lies in. */
void __attribute__((noinline)) ms_stack_name_thread(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	const struct ms_region *r;
	char name[32];

	if (ev->tid == ev->pid || ev->tid == p->last_named)
		return;
	if (ms_u32map_get(&p->named, ev->tid)) {
		p->last_named = ev->tid;
		return;
	}
	r = find(as, p, ev->sample.sp);
	if (!r || r->kind != MS_KIND_ANON)
		return;
	snprintf(name, sizeof(name), "[stack:%u]", ev->tid);
	ms_region_rename(as->regions[r->id], name, MS_KIND_THREAD_STACK);
	if (!ms_u32map_put(&p->named, ev->tid, (void *)1))
		p->last_named = ev->tid;
}

/* The main thread's stack pointer sp: the first in its stack marks where the stack began. */
void ms_stack_note_start(struct ms_aspace *as, struct proc *p, uint64_t sp)
{
	const struct ms_region *s = p->stack >= 0 ? as->regions[p->stack] : NULL;

	if (s && s->alive && s->start <= sp && sp < s->end)
		p->start_stack = sp;
	p->stack_new = false;
}

/*
 * The name /proc gives the VMA [start, end) of region r: [stack] only for
 * the VMA that holds where the main stack began (vma_is_initial_stack, its
 * ends included); the other pieces of the stack region have none.
 */
const char *ms_stack_vma_name(const struct proc *p, const struct ms_region *r, uint64_t start, uint64_t end,
			      const char *name)
{
	if ((int64_t)r->id != p->stack || !p->start_stack || (start <= p->start_stack && p->start_stack <= end) ||
	    strcmp(name, "[stack]"))
		return name;
	return "";
}

void ms_heap_note_brk(struct proc *p, const struct ms_event *ev)
{
	if (!p->brk_known && p->brk_new && ev->brk.old_brk == ev->brk.new_brk) {
		p->start_brk = ev->brk.new_brk;       /* brk(0) before the break moved */
		p->brk_known = true;
	}
	p->brk_new = false;
	if (p->brk_known)
		p->brk = ev->brk.new_brk;              /* the break now, moved or not */
}

/*
 * vma_is_initial_heap: an anonymous VMA (none of a file, nor the kernel's
 * [vdso] and the like, which are named first) over [start_brk, brk) is
 * [heap], whatever region it is of (one that merged across start_brk); one
 * of the heap region that the break no longer covers (moved away) is not.
 */
const char *ms_heap_vma_name(const struct proc *p, const struct ms_region *r, uint64_t start, uint64_t end,
			     const char *name)
{
	const bool anon = !region_has_file(r) && (!name[0] || !strcmp(name, "[heap]") ||
							    !strcmp(name, "[stack]") || !strncmp(name, "[anon:", 6));

	if (!p->brk_known || !anon)
		return name;
	if (start < p->brk && end > p->start_brk)
		return "[heap]";
	return strcmp(name, "[heap]") ? name : "";
}

void ms_stack_resolve_pending(struct ms_aspace *as, uint32_t tid)
{
	struct pending *pd = ms_u32map_del(&as->pending, tid);

	if (!pd)
		return;
	charge(as, &pd->ev, ms_aspace_lookup(as, pd->ev.pid, pd->ev.sample.addr));
	free(pd->chain);
	free(pd);
}

/* A fault just below [stack] comes before the record of the growth it causes. */
bool __attribute__((noinline)) ms_stack_defer_fault(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	const struct ms_region *s = p->stack >= 0 ? as->regions[p->stack] : NULL;
	struct pending *pd;

	if (!s || !s->alive || ev->sample.addr >= s->start || s->start - ev->sample.addr > STACK_REACH)
		return false;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return false;
	pd->ev = *ev;
	if (ev->sample.chain_len && (pd->chain = malloc(ev->sample.chain_len * 8))) {
		memcpy(pd->chain, ev->sample.chain, ev->sample.chain_len * 8);
		pd->ev.sample.chain = pd->chain;
	} else {
		pd->ev.sample.chain = NULL;
		pd->ev.sample.chain_len = 0;
	}
	if (ms_u32map_put(&as->pending, ev->tid, pd)) {
		free(pd->chain);
		free(pd);
		return false;
	}
	return true;
}

MS_EXPORT void ms_aspace_finish(struct ms_aspace *as)
{
	struct pending *pd;
	size_t pos;
	uint32_t tid;

	for (;;) {
		pos = 0;
		pd = ms_u32map_next(&as->pending, &pos, &tid);
		if (!pd)
			break;
		resolve_pending(as, tid);
	}
}
