/*
 * The model's objects and what it answers: the processes, the regions
 * (one mapping's life each), and lookups over the pieces. The jobs that
 * change them have files of their own: pieces.c (the sorted array),
 * vmarules.c (the kernel's VMA rules), apply.c (applying changes),
 * charge.c (charging samples), stacks.c (naming and growing stacks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include "aspace/internal.h"
#include "aspace/samples.h"
#include "util/grow.h"

MS_EXPORT struct ms_aspace *ms_aspace_new(void)
{
	struct ms_aspace *as = calloc(1, sizeof(*as));

	if (!as)
		return NULL;
	ms_u32map_init(&as->procs);
	ms_u32map_init(&as->pending);
	ms_u32map_init(&as->threads);
	ms_u32map_init(&as->groups);
	return as;
}

MS_EXPORT void ms_aspace_set_listener(struct ms_aspace *as, const struct ms_aspace_listener *l, void *ctx)
{
	as->listener = *l;
	as->ctx = ctx;
}

void ms_aspace_set_read_fault_page(struct ms_aspace *as, bool on)
{
	as->read_fault_page = on;
}

struct proc *ms_aspace_proc_make(struct ms_aspace *as, uint32_t pid)
{
	struct proc *p = ms_u32map_get(&as->procs, pid);

	if (p)
		return as->last_proc = p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->heap = p->stack = -1;
	p->users = 1;
	ms_u32map_init(&p->named);
	if (ms_u32map_put(&as->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return as->last_proc = p;
}

void ms_aspace_proc_put(struct proc *p)
{
	if (--p->users)
		return;
	ms_u32map_release(&p->named);
	ms_pieces_release(p);
	free(p);
}

MS_EXPORT const char *ms_aspace_op_name(enum ms_aspace_op op)
{
	static const char *const n[] = {
		[MS_OP_NONE] = "none", [MS_OP_MAP] = "map", [MS_OP_UNMAP] = "unmap",
		[MS_OP_REMAP] = "remap", [MS_OP_PROTECT] = "protect", [MS_OP_BRK] = "brk",
		[MS_OP_STACK_GROW] = "stack-grow", [MS_OP_MADVISE] = "madvise",
		[MS_OP_FORK] = "fork", [MS_OP_EXEC] = "exec", [MS_OP_EXIT] = "exit", [MS_OP_LOCK] = "lock",
	};

	return (size_t)op < sizeof(n) / sizeof(n[0]) ? n[op] : NULL;
}

MS_EXPORT const char *ms_region_kind_name(enum ms_region_kind k)
{
	static const char *const n[] = { "heap", "stack", "thread-stack", "anon", "file", "shm", "vdso", "other" };

	return (size_t)k < sizeof(n) / sizeof(n[0]) ? n[k] : "other";
}

/* Each name below starts with '[' or '/': most names, paths and "", are told apart at their first byte. */
static enum ms_region_kind kind_of(const char *name, uint32_t flags, bool has_file)
{
	if (name[0] == '[') {
		if (!strcmp(name, "[heap]"))
			return MS_KIND_HEAP;
		if (!strcmp(name, "[stack]"))
			return MS_KIND_STACK;
		if (!strcmp(name, "[vdso]") || !strncmp(name, "[vvar", 5) || !strcmp(name, "[vsyscall]"))
			return MS_KIND_VDSO;
		if (!has_file || !strncmp(name, "[anon:", 6))
			return MS_KIND_ANON;
		return MS_KIND_OTHER;
	}
	if (name[0] == '/' && (!strncmp(name, "/SYSV", 5) || !strncmp(name, "/dev/shm/", 9) ||
			       ((flags & MAP_SHARED) && (!strncmp(name, "/memfd:", 7) || !strncmp(name, "/dev/zero", 9)))))
		return MS_KIND_SHM;
	if (!has_file || (name[0] == '/' && !strcmp(name, "//anon")))
		return MS_KIND_ANON;
	if (name[0] == '/')
		return MS_KIND_FILE;
	return MS_KIND_OTHER;
}

static const struct ms_region *lookup_in(const struct ms_aspace *as, const struct proc *p, uint64_t addr)
{
	size_t i = lower_c(p, addr);

	if (i == p->n || p->p[i].start > addr)
		return NULL;
	return as->regions[p->p[i].region];
}

/*
 * A syscall's call chain without perf's context markers. A frame-pointer
 * walk skips the caller of a syscall wrapper, which builds no frame of its
 * own; that caller's return address is the first word near the top of the
 * stack that points into code, so it is put back in after the wrapper's
 * frame. out holds len + 1 entries; returns how many were written.
 */
static uint32_t repair_chain(const struct ms_aspace *as, const struct proc *p, const uint64_t *chain,
			     uint32_t len, const uint64_t *stack, uint32_t stack_len, uint64_t *out)
{
	const struct ms_region *code;
	uint64_t caller = 0;
	uint32_t i, n = 0;

	for (i = 0; i < stack_len && !caller; i++) {
		code = lookup_in(as, p, stack[i]);
		if (code && (code->prot & PROT_EXEC))
			caller = stack[i];
	}
	for (i = 0; i < len; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;                 /* PERF_CONTEXT_USER and the like */
		out[n++] = chain[i];
		if (n == 1 && caller && (i + 1 >= len || chain[i + 1] != caller))
			out[n++] = caller;
	}
	return n;
}

MS_EXPORT uint32_t ms_aspace_call_chain(const struct ms_aspace *as, const struct ms_event *ev, uint64_t *out)
{
	const struct proc *p = ms_u32map_get(&as->procs, ev->pid);

	return p ? repair_chain(as, p, ev->chain, ev->chain_len, ev->stack, ev->stack_len, out) : 0;
}

static void set_alloc_chain(struct ms_aspace *as, struct proc *p, struct ms_region *r,
			    const struct ms_event_map *m)
{
	r->alloc_chain = malloc((m->alloc_chain_len + 1) * sizeof(uint64_t));
	if (r->alloc_chain)
		r->alloc_chain_len = repair_chain(as, p, m->alloc_chain, m->alloc_chain_len,
						  m->alloc_stack, m->alloc_stack_len, r->alloc_chain);
}

/* p's comm as a string its regions share (a million maps, one string); NULL on ENOMEM. */
static const char *comm_of(struct ms_aspace *as, struct proc *p)
{
	char *c;

	if (p->comm_str && !strcmp(p->comm_str, p->comm))
		return p->comm_str;
	if (MS_GROW(as->comms, as->nr_comms + 1, as->cap_comms, 16, SIZE_MAX, false) || !(c = strdup(p->comm)))
		return NULL;
	as->comms[as->nr_comms++] = c;
	return p->comm_str = c;
}

const char ms_region_no_name[] = "";

/* Room for region as->nr, zeroed: its block made where it is the first of one. NULL on ENOMEM. */
static struct ms_region *region_room(struct ms_aspace *as)
{
	struct ms_region *b;

	if (MS_GROW(as->regions, as->nr + 1, as->cap, 256, SIZE_MAX, false))
		return NULL;
	if (as->nr / REGION_BLOCK >= as->nr_blocks) {
		if (MS_GROW(as->blocks, as->nr_blocks + 1, as->cap_blocks, 16, SIZE_MAX, false) ||
		    !(b = calloc(REGION_BLOCK, sizeof(*b))))
			return NULL;
		as->blocks[as->nr_blocks++] = b;
	}
	return &as->blocks[as->nr / REGION_BLOCK][as->nr % REGION_BLOCK];
}

int ms_region_new(struct ms_aspace *as, struct proc *p, const struct ms_event *ev,
		      const struct ms_event_map *m, const char *name)
{
	struct ms_region *r = region_room(as);
	bool has_file = m->maj || m->min || m->ino;

	if (!r)
		return -ENOMEM;
	r->id = (uint32_t)as->nr;
	r->pid = p->pid;
	r->comm = comm_of(as, p);
	if (!r->comm) {
		memset(r, 0, sizeof(*r));
		return -ENOMEM;
	}
	r->start = m->start;
	r->end = m->end;
	r->prot = m->prot;
	r->flags = m->flags;
	r->maj = m->maj;
	r->min = m->min;
	r->ino = m->ino;
	r->kind = kind_of(name, m->flags, has_file);
	r->name = !name[0] || !strcmp(name, "//anon") ? ms_region_no_name : strdup(name);
	r->proc_name = r->name;
	r->created_ns = ev->time;
	r->alive = true;
	r->uncertain = m->via == MS_VIA_UNKNOWN;
	r->via = m->via;
	if (m->alloc_chain_len)
		set_alloc_chain(as, p, r, m);
	if (!r->name) {
		free(r->alloc_chain);
		memset(r, 0, sizeof(*r));
		return -ENOMEM;
	}
	as->regions[as->nr++] = r;
	return (int)r->id;
}

void ms_region_rename(struct ms_region *r, const char *name, enum ms_region_kind kind)
{
	char *n = strdup(name);

	if (!n)
		return;
	if (r->name != r->proc_name)
		ms_region_name_free(r->name);
	r->name = n;
	r->kind = kind;
}

/* Process pid's state, the last one looked up tried first (samples and their lookups come in runs); NULL: none. */
static struct proc *proc_of(const struct ms_aspace *as, uint32_t pid)
{
	return as->last_proc && as->last_proc->pid == pid ? as->last_proc : ms_u32map_get(&as->procs, pid);
}

MS_EXPORT const struct ms_region *ms_aspace_lookup(const struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	struct proc *p = proc_of(as, pid);

	return p ? find(as, p, addr) : NULL;
}

MS_EXPORT bool ms_aspace_holds(const struct ms_aspace *as, uint32_t pid, uint32_t region,
				uint64_t start, uint64_t end)
{
	const struct proc *p = ms_u32map_get(&as->procs, pid);
	uint64_t at = start;
	size_t i;

	if (!p)
		return false;
	for (i = lower_c(p, start); at < end; i++) {
		if (i == p->n || p->p[i].start > at || p->p[i].region != region)
			return false;
		at = p->p[i].end;
	}
	return true;
}

/*
 * An analysis asks this of each sample or run as it is charged (the
 * touched protections): the process of the last lookup and the piece of
 * the last sample (its hint) are tried first, as the charge found them.
 */
MS_EXPORT int ms_aspace_prot_at(const struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	const struct proc *p = proc_of(as, pid);
	size_t i;

	if (!p)
		return -1;
	i = piece_holds(p, p->hint, addr) ? p->hint : lower_c(p, addr);
	return i < p->n && p->p[i].start <= addr ? (int)p->p[i].prot : -1;
}

static const struct ms_region *live_region(const struct ms_aspace *as, int64_t id)
{
	return id >= 0 && as->regions[id]->alive ? as->regions[id] : NULL;
}

MS_EXPORT const struct ms_region *ms_aspace_stack(const struct ms_aspace *as, uint32_t pid)
{
	const struct proc *p = ms_u32map_get(&as->procs, pid);

	return p ? live_region(as, p->stack) : NULL;
}

MS_EXPORT bool ms_aspace_shares(const struct ms_aspace *as, uint32_t a, uint32_t b)
{
	const struct proc *p = ms_u32map_get(&as->procs, a);

	return p && p == ms_u32map_get(&as->procs, b);
}

MS_EXPORT const struct ms_region *ms_aspace_heap(const struct ms_aspace *as, uint32_t pid)
{
	const struct proc *p = ms_u32map_get(&as->procs, pid);

	return p ? live_region(as, p->heap) : NULL;
}

MS_EXPORT size_t ms_aspace_nr_regions(const struct ms_aspace *as)
{
	return as->nr;
}

MS_EXPORT const struct ms_region *ms_aspace_region(const struct ms_aspace *as, size_t id)
{
	return id < as->nr ? as->regions[id] : NULL;
}

MS_EXPORT int ms_aspace_for_each_vma(const struct ms_aspace *as, uint32_t pid,
				     void (*fn)(const struct ms_vma *v, void *ctx), void *ctx)
{
	const struct proc *p = ms_u32map_get(&as->procs, pid);
	const struct ms_region *r;
	struct ms_vma v;
	char name[96];
	size_t i = 0;

	if (!p)
		return -ESRCH;
	while (i < p->n) {
		r = as->regions[p->p[i].region];
		v.start = p->p[i].start;
		v.end = p->p[i].end;
		v.prot = p->p[i].prot;
		v.flags = p->p[i].flags;
		v.maj = r->maj;
		v.min = r->min;
		v.ino = r->ino;
		v.offset = (r->maj || r->min || r->ino) ? p->p[i].pgoff : 0;
		v.name = ms_names_vma(as, &p->p[i], name, sizeof(name));
		for (i++; i < p->n && p->p[i].join && p->p[i].start == v.end; i++)
			v.end = p->p[i].end;
		v.name = ms_heap_vma_name(p, r, v.start, v.end, ms_stack_vma_name(p, r, v.start, v.end, v.name));
		fn(&v, ctx);
	}
	return 0;
}

MS_EXPORT void ms_aspace_free(struct ms_aspace *as)
{
	struct proc *p;
	struct pending *pd;
	size_t i, pos = 0;

	if (!as)
		return;
	while ((p = ms_u32map_next(&as->procs, &pos, NULL)))
		ms_aspace_proc_put(p);
	pos = 0;
	while ((pd = ms_u32map_next(&as->pending, &pos, NULL))) {
		free(pd->chain);
		free(pd);
	}
	ms_u32map_release(&as->procs);
	ms_u32map_release(&as->pending);
	ms_tasks_release(as);
	ms_names_release(as);
	for (i = 0; i < as->nr; i++) {
		if (as->regions[i]->name != as->regions[i]->proc_name)
			ms_region_name_free(as->regions[i]->name);
		ms_region_name_free(as->regions[i]->proc_name);
		free(as->regions[i]->alloc_chain);
	}
	for (i = 0; i < as->nr_blocks; i++)
		free(as->blocks[i]);
	free(as->blocks);
	free(as->touched);
	free(as->regions);
	for (i = 0; i < as->nr_comms; i++)
		free(as->comms[i]);
	free(as->comms);
	free(as);
}
