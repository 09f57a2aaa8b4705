/*
 * Per process, the live mappings are a sorted array of pieces: an address
 * range with its protection, its region (identity) and whether it continues
 * the previous piece's kernel VMA. Lookups are a binary search; changes
 * split pieces at their edges and move the array's tail, which is cheap at
 * the sizes real processes have (hundreds to a few thousand mappings).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include <mapscope/aspace.h>

#include "aspace/samples.h"

#include "util/log.h"
#include "util/u32map.h"

#define PAGE_ALIGN(x) (((x) + 4095) & ~4095ULL)
#define STACK_REACH (1ULL << 30)   /* how far below [stack] a fault may grow it */
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

struct piece {
	uint64_t start, end;
	uint64_t pgoff;          /* file offset of start */
	uint32_t prot, flags;
	uint32_t region;
	bool join;               /* same kernel VMA as the piece before it */
	uint16_t vmflags;        /* VF_*: VMA flags no record shows, which split and merge VMAs */
	uint32_t anon;           /* its VMA's anon_vma: 0 none yet, else an id (ANON_FORKED: a fork's copy) */
};

/*
 * anon_vma: a private writable VMA gets one at its first fault (anon_vma_prepare),
 * taking a compatible neighbour's where that one is not shared with a fork
 * (find_mergeable_anon_vma). Two VMAs with different ones never merge, nor
 * does a fork's copy with one that has none (mm/vma.c, is_mergeable_anon_vma).
 * Only faults show when one is made: a sampled fault makes it here, so a
 * read fault (the zero page, no anon_vma) or one not sampled (-c above 1)
 * is not told apart.
 */
#define ANON_FORKED 0x80000000u

/*
 * The VMA flags that madvise advice sets and clears (mm/madvise.c,
 * madvise_update_vma), and those of mlock (mm/mlock.c, mlock_fixup).
 */
enum { VF_DONTFORK = 1, VF_MERGEABLE = 2, VF_HUGEPAGE = 4, VF_NOHUGEPAGE = 8, VF_DONTDUMP = 16,
       VF_WIPEONFORK = 32, VF_LOCKED = 64, VF_LOCKONFAULT = 128,
       /*
        * Accounting: VM_NORESERVE from MAP_NORESERVE, and VM_ACCOUNT, which a
        * private writable map has unless NORESERVE (accountable_mapping),
        * and which mprotect adds but never takes away: a RELRO segment made
        * read-only keeps it, and never merges with the read-only one before it.
        */
       VF_NORESERVE = 256, VF_ACCOUNT = 512 };
#define VF_LOCKS (VF_LOCKED | VF_LOCKONFAULT)

struct proc {
	uint32_t pid;
	struct piece *p;
	size_t n, cap;
	size_t hint;             /* the piece the last lookup found: samples cluster */
	char comm[16];
	int64_t heap, stack;     /* region ids, or -1 */
	uint16_t def_vmflags;    /* VF_LOCKS that new maps get: mlockall(MCL_FUTURE) */
	struct ms_u32map named;  /* tids whose stack has been named */
	uint32_t last_named;     /* the tid named (or found named) last: samples come in runs */
};

struct pending {
	struct ms_event ev;
	uint64_t *chain;
};

struct ms_aspace {
	struct ms_u32map procs;
	struct proc *last_proc;      /* samples come in runs from one process */
	struct ms_region **regions;
	size_t nr, cap;
	struct ms_u32map pending;    /* tid -> struct pending */
	struct ms_aspace_listener listener;
	void *ctx;
	uint32_t last_anon;          /* the last anon_vma id given */
	uint32_t touched[64];        /* regions a change touched, for their extents */
	size_t nr_touched;
	bool overflow;
};

MS_EXPORT struct ms_aspace *ms_aspace_new(void)
{
	struct ms_aspace *as = calloc(1, sizeof(*as));

	if (!as)
		return NULL;
	ms_u32map_init(&as->procs);
	ms_u32map_init(&as->pending);
	return as;
}

MS_EXPORT void ms_aspace_set_listener(struct ms_aspace *as, const struct ms_aspace_listener *l, void *ctx)
{
	as->listener = *l;
	as->ctx = ctx;
}

static struct proc *proc_find_or_make(struct ms_aspace *as, uint32_t pid)
{
	struct proc *p = ms_u32map_get(&as->procs, pid);

	if (p)
		return as->last_proc = p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->heap = p->stack = -1;
	ms_u32map_init(&p->named);
	if (ms_u32map_put(&as->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return as->last_proc = p;
}

static inline struct proc *proc_get(struct ms_aspace *as, uint32_t pid)
{
	return as->last_proc && as->last_proc->pid == pid ? as->last_proc : proc_find_or_make(as, pid);
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

static enum ms_region_kind kind_of(const char *name, uint32_t flags, bool has_file)
{
	if (!strcmp(name, "[heap]"))
		return MS_KIND_HEAP;
	if (!strcmp(name, "[stack]"))
		return MS_KIND_STACK;
	if (!strcmp(name, "[vdso]") || !strncmp(name, "[vvar", 5) || !strcmp(name, "[vsyscall]"))
		return MS_KIND_VDSO;
	if (!strncmp(name, "/SYSV", 5) || !strncmp(name, "/dev/shm/", 9) ||
	    ((flags & MAP_SHARED) && (!strncmp(name, "/memfd:", 7) || !strncmp(name, "/dev/zero", 9))))
		return MS_KIND_SHM;
	if (!has_file || !strcmp(name, "//anon") || !strncmp(name, "[anon:", 6))
		return MS_KIND_ANON;
	if (name[0] == '/')
		return MS_KIND_FILE;
	return MS_KIND_OTHER;
}

static const struct ms_region *lookup_in(const struct ms_aspace *as, const struct proc *p, uint64_t addr);
static inline bool wants_anon(const struct piece *pc);
static void make_anon(struct ms_aspace *as, struct proc *p, size_t i);
static void populate(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end);

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

static int region_new(struct ms_aspace *as, struct proc *p, const struct ms_event *ev,
		      const struct ms_event_map *m, const char *name)
{
	struct ms_region *r, **grown;
	bool has_file = m->maj || m->min || m->ino;

	if (as->nr == as->cap) {
		grown = realloc(as->regions, (as->cap ? 2 * as->cap : 256) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		as->regions = grown;
		as->cap = as->cap ? 2 * as->cap : 256;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->id = (uint32_t)as->nr;
	r->pid = p->pid;
	memcpy(r->comm, p->comm, sizeof(r->comm));
	r->start = m->start;
	r->end = m->end;
	r->prot = m->prot;
	r->flags = m->flags;
	r->maj = m->maj;
	r->min = m->min;
	r->ino = m->ino;
	r->kind = kind_of(name, m->flags, has_file);
	r->name = strdup(!strcmp(name, "//anon") ? "" : name);
	r->proc_name = r->name;
	r->created_ns = ev->time;
	r->alive = true;
	r->uncertain = m->via == MS_VIA_UNKNOWN;
	r->via = m->via;
	if (m->alloc_chain_len)
		set_alloc_chain(as, p, r, m);
	if (!r->name) {
		free(r->alloc_chain);
		free(r);
		return -ENOMEM;
	}
	as->regions[as->nr++] = r;
	return (int)r->id;
}

static void region_rename(struct ms_region *r, const char *name, enum ms_region_kind kind)
{
	char *n = strdup(name);

	if (!n)
		return;
	if (r->name != r->proc_name)
		free((char *)r->name);
	r->name = n;
	r->kind = kind;
}

/* --- pieces ---------------------------------------------------------------- */

/* The first piece whose end lies above addr. */
static size_t lower(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (p->p[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_at(struct proc *p, size_t i, const struct piece *pc)
{
	struct piece *grown;

	if (p->n == p->cap) {
		grown = realloc(p->p, (p->cap ? 2 * p->cap : 32) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		p->p = grown;
		p->cap = p->cap ? 2 * p->cap : 32;
	}
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
	return insert_at(p, i + 1, &right);
}

/* Makes [start, end) a run of whole pieces, [*i, *j). */
static int carve(struct proc *p, uint64_t start, uint64_t end, size_t *i, size_t *j)
{
	int err = split_at(p, start);

	if (!err)
		err = split_at(p, end);
	*i = lower(p, start);
	*j = lower(p, end);
	return err;
}

static void touch(struct ms_aspace *as, uint32_t region)
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
static void settle(struct ms_aspace *as, struct proc *p, uint64_t time)
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
		touch(as, p->p[k].region);
	}
	if (j > out && j < p->n)
		memmove(p->p + out, p->p + j, (p->n - j) * sizeof(*p->p));
	p->n -= j - out;
	if (out < p->n)
		p->p[out].join = false;          /* a hole ends a VMA */
}

static int unmap_range(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end,
		       int64_t only, uint64_t time)
{
	size_t i, j;
	int err;

	if (start >= end)
		return 0;
	err = carve(p, start, end, &i, &j);
	if (err)
		return err;
	remove_pieces(as, p, i, j, only);
	settle(as, p, time);
	return 0;
}

/* The kernel VMA that piece i belongs to: its first and last pieces. */
static void vma_of(const struct proc *p, size_t i, size_t *first, size_t *last)
{
	size_t a = i, z = i;

	while (a > 0 && p->p[a].join && p->p[a - 1].end == p->p[a].start)
		a--;
	while (z + 1 < p->n && p->p[z + 1].join && p->p[z].end == p->p[z + 1].start)
		z++;
	*first = a;
	*last = z;
}

/* One VMA has one anon_vma: after a merge, the one that had it gives it to the rest. */
static void share_anon(struct proc *p, size_t i)
{
	size_t first, last, k;
	uint32_t anon = 0;

	vma_of(p, i, &first, &last);
	for (k = first; k <= last && !anon; k++)
		anon = p->p[k].anon;
	for (k = first; k <= last; k++)
		p->p[k].anon = anon;
}

/* Marks [start, end) as one kernel VMA, as an MMAP2 record reported it. */
static void set_vma(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i, first = lower(p, start);

	for (i = first; i < p->n && p->p[i].start < end; i++)
		p->p[i].join = p->p[i].start != start && i > 0 && p->p[i - 1].end == p->p[i].start;
	if (i < p->n && p->p[i].start == end)
		p->p[i].join = false;
	if (first < p->n)
		share_anon(p, first);
}

/* Adds region r's pages in [start, end) where nothing is mapped (growth). */
static int fill(struct proc *p, uint64_t start, uint64_t end, const struct ms_region *r,
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
		err = insert_at(p, i, &pc);
		if (err)
			return err;
		at = pc.end;
		i++;
	}
	return 0;
}

static void clear_proc(struct ms_aspace *as, struct proc *p, uint64_t time)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		end_region(as->regions[p->p[i].region], time);
	p->n = 0;
	p->heap = p->stack = -1;
	p->def_vmflags = 0;          /* a new mm, or none: mlockall's MCL_FUTURE is not inherited */
}

/* --- changes --------------------------------------------------------------- */

static bool alive_overlaps(struct ms_aspace *as, int64_t id, uint64_t start, uint64_t end)
{
	const struct ms_region *r = id >= 0 ? as->regions[id] : NULL;

	return r && r->alive && start <= r->end && r->start <= end;
}

/* The main stack or the heap grows: the same region, more pages. */
static int grow(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, int64_t id)
{
	const struct ms_event_map *m = &ev->map;
	uint16_t vmflags = (uint16_t)(p->def_vmflags | VF_ACCOUNT);
	size_t i;
	int err;

	/* Pages the VMA it joins grew by have its flags; a VMA of their own (brk) has mlockall's, and VM_ACCOUNT. */
	for (i = lower(p, m->vma_start); i < p->n && p->p[i].start < m->vma_end; i++)
		if (p->p[i].region == (uint64_t)id && (p->p[i].end <= m->start || p->p[i].start >= m->end)) {
			vmflags = p->p[i].vmflags;
			break;
		}
	if ((err = fill(p, m->start, m->end, as->regions[id], m->prot, m->flags, vmflags)))
		return err;
	set_vma(p, m->vma_start, m->vma_end);
	touch(as, (uint32_t)id);
	settle(as, p, ev->time);
	return 0;
}

/* VM_NORESERVE and VM_ACCOUNT of a new map (mm/mmap.c, do_mmap and accountable_mapping). */
static uint16_t map_accounting(const struct ms_event_map *m)
{
	if (m->noreserve)
		return VF_NORESERVE;
	return (m->prot & PROT_WRITE) && !(m->flags & MAP_SHARED) ? VF_ACCOUNT : 0;
}

static int apply_map(struct ms_aspace *as, struct proc *p, const struct ms_event *ev,
		     enum ms_aspace_op *op)
{
	const struct ms_event_map *m = &ev->map;
	bool outside = m->via != MS_VIA_MMAP && m->via != MS_VIA_SHMAT;
	struct piece pc;
	size_t i;
	int id, err;

	if (outside && !strcmp(m->name, "[stack]") && alive_overlaps(as, p->stack, m->start, m->end)) {
		*op = MS_OP_STACK_GROW;
		return grow(as, p, ev, p->stack);
	}
	if (outside && !strcmp(m->name, "[heap]") && !alive_overlaps(as, p->heap, m->start, m->end)) {
		/* Without brk records, the kernel's first heap map said //anon: it is this heap. */
		const struct ms_region *first = ms_aspace_lookup(as, p->pid, m->start);

		if (first && first->kind == MS_KIND_ANON && first->start == m->start) {
			struct ms_region *h = as->regions[first->id];
			char *old = (char *)h->proc_name;   /* == h->name: anonymous, never renamed */

			p->heap = h->id;
			region_rename(h, "[heap]", MS_KIND_HEAP);
			if (h->name != old) {
				h->proc_name = h->name;         /* /proc calls it [heap] too */
				free(old);
			}
		}
	}
	if (outside && !strcmp(m->name, "[heap]") && alive_overlaps(as, p->heap, m->start, m->end)) {
		*op = MS_OP_BRK;
		return grow(as, p, ev, p->heap);
	}
	*op = MS_OP_MAP;
	err = unmap_range(as, p, m->start, m->end, -1, ev->time);   /* MAP_FIXED replaces silently */
	if (err)
		return err;
	id = region_new(as, p, ev, m, m->name);
	if (id < 0)
		return id;
	/* What mlockall(MCL_FUTURE) asked for (mm->def_flags); what /proc showed is not known. */
	pc = (struct piece){ m->start, m->end, m->pgoff, m->prot, m->flags, (uint32_t)id, false,
			     (uint16_t)((m->via == MS_VIA_SYNTH ? 0 : p->def_vmflags) | map_accounting(m)), 0 };
	i = lower(p, m->start);
	if ((err = insert_at(p, i, &pc)))
		return err;
	set_vma(p, m->vma_start, m->vma_end);
	if (pc.vmflags & VF_LOCKS)
		populate(as, p, m->start, m->end);
	if (!strcmp(m->name, "[stack]"))
		p->stack = id;
	if (!strcmp(m->name, "[heap]"))
		p->heap = id;
	return 0;
}

static bool mergeable(const struct ms_aspace *as, const struct piece *a, const struct piece *b);

/* Piece k joins the VMA before it where the kernel would merge the two; they then share one anon_vma. */
static void join_if_mergeable(struct ms_aspace *as, struct proc *p, size_t k)
{
	p->p[k].join = k > 0 && mergeable(as, &p->p[k - 1], &p->p[k]);
	if (p->p[k].join)
		share_anon(p, k);
}

static int apply_remap(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint64_t os = ev->remap.old_start, oe = ev->remap.old_end;
	uint64_t ns = ev->remap.new_start, ne = ev->remap.new_end;
	struct piece *moved, last;
	size_t i, j, k, n, at;
	int64_t delta;
	int err;

	if (ns == os) {                          /* in place */
		if (ne < oe)
			return unmap_range(as, p, ne, oe, -1, ev->time);
		i = lower(p, oe - 1);
		if (ne == oe || i == p->n || p->p[i].end != oe || p->p[i].start >= oe)
			return 0;
		last = p->p[i];
		last.pgoff += oe - last.start;
		last.start = oe;
		last.end = ne;
		last.join = true;
		if ((err = unmap_range(as, p, oe, ne, -1, ev->time)))
			return err;
		touch(as, last.region);
		err = insert_at(p, lower(p, oe), &last);
		/* Grown up to the next VMA: the kernel merges the two where they match (vma_merge_extend). */
		k = lower(p, ne);
		if (!err && k > 0 && k < p->n && p->p[k].start == ne && !ev->remap.tree)
			join_if_mergeable(as, p, k);
		settle(as, p, ev->time);
		return err;
	}
	if ((err = carve(p, os, oe, &i, &j)))
		return err;
	n = j - i;
	if (!n)
		return 0;                        /* we never saw what moved */
	moved = malloc(n * sizeof(*moved));
	if (!moved)
		return -ENOMEM;
	memcpy(moved, p->p + i, n * sizeof(*moved));
	if (!(ev->remap.flags & MREMAP_DONTUNMAP)) {
		if (j < p->n)
			memmove(p->p + i, p->p + j, (p->n - j) * sizeof(*p->p));
		p->n -= n;
		if (i < p->n)
			p->p[i].join = false;
	}
	if ((err = unmap_range(as, p, ns, ne, -1, ev->time)))
		goto out;
	delta = (int64_t)(ns - os);
	at = lower(p, ns);
	for (k = 0; k < n; k++) {
		moved[k].start += (uint64_t)delta;
		moved[k].end += (uint64_t)delta;
		if (moved[k].start >= ne)
			break;
		if (moved[k].end > ne || k == n - 1)
			moved[k].end = ne;        /* shrunk, or grown at its end */
		moved[k].join = k > 0;
		touch(as, moved[k].region);
		if ((err = insert_at(p, at++, &moved[k])))
			goto out;
	}
	if (at < p->n)
		p->p[at].join = false;
	settle(as, p, ev->time);
out:
	free(moved);
	return err;
}

/*
 * mprotect, VMA by VMA as mprotect_fixup goes: a VMA that has the new
 * protection already is left whole (newflags == oldflags returns early,
 * and no record is written); the others are split at the range's ends
 * and take it.
 */
static int apply_protect(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint64_t start = ev->protect.start, end = ev->protect.end, a, b;
	size_t i = lower(p, start), first, last, j, k;
	int err;

	while (i < p->n && p->p[i].start < end) {
		vma_of(p, i, &first, &last);
		b = p->p[last].end < end ? p->p[last].end : end;
		if (p->p[i].prot == ev->protect.prot) {
			i = last + 1;
			continue;
		}
		a = p->p[first].start > start ? p->p[first].start : start;
		if ((err = carve(p, a, b, &i, &j)))
			return err;
		for (k = i; k < j; k++) {
			/* mprotect_fixup: made writable, private and reserved, it is accounted from now on. */
			if ((ev->protect.prot & PROT_WRITE) && !(p->p[k].prot & PROT_WRITE) &&
			    !(p->p[k].flags & MAP_SHARED) && !(p->p[k].vmflags & VF_NORESERVE))
				p->p[k].vmflags |= VF_ACCOUNT;
			p->p[k].prot = ev->protect.prot;
			touch(as, p->p[k].region);
		}
		if (i < p->n)
			p->p[i].join = false;
		if (j < p->n)
			p->p[j].join = false;
		i = j;
	}
	settle(as, p, ev->time);
	return 0;
}

/* What an advice does to a VMA's flags: the flags it sets and those it clears; false for other advice. */
static bool advice_flags(uint32_t advice, uint16_t *set, uint16_t *clear)
{
	*set = *clear = 0;
	switch (advice) {
	case MADV_DONTFORK: *set = VF_DONTFORK; break;
	case MADV_DOFORK: *clear = VF_DONTFORK; break;
	case MADV_MERGEABLE: *set = VF_MERGEABLE; break;
	case MADV_UNMERGEABLE: *clear = VF_MERGEABLE; break;
	case MADV_HUGEPAGE: *set = VF_HUGEPAGE; *clear = VF_NOHUGEPAGE; break;
	case MADV_NOHUGEPAGE: *set = VF_NOHUGEPAGE; *clear = VF_HUGEPAGE; break;
	case MADV_DONTDUMP: *set = VF_DONTDUMP; break;
	case MADV_DODUMP: *clear = VF_DONTDUMP; break;
	case MADV_WIPEONFORK: *set = VF_WIPEONFORK; break;
	case MADV_KEEPONFORK: *clear = VF_WIPEONFORK; break;
	default: return false;
	}
	return true;
}

/*
 * Whether the VMA ending with piece a and the one starting with piece b
 * (next to it) are one VMA to the kernel's merge rules (mm/vma.c,
 * is_mergeable_vma): the same protection, sharing and flags, and for a
 * file the same file at contiguous offsets, and anon_vmas that allow it
 * (is_mergeable_anon_vma): the same one, or none on one side while the
 * other's is not a fork's copy.
 */
static bool mergeable(const struct ms_aspace *as, const struct piece *a, const struct piece *b)
{
	const struct ms_region *ra = as->regions[a->region], *rb = as->regions[b->region];
	bool fa = ra->ino || ra->maj || ra->min, fb = rb->ino || rb->maj || rb->min;

	if (a->end != b->start || a->prot != b->prot || a->flags != b->flags || a->vmflags != b->vmflags)
		return false;
	if (a->anon != b->anon && (a->anon ? b->anon || (a->anon & ANON_FORKED) : (b->anon & ANON_FORKED)))
		return false;
	if (fa != fb)
		return false;
	if (!fa)
		return ra->kind != MS_KIND_STACK && rb->kind != MS_KIND_STACK;   /* VM_GROWSDOWN */
	return ra->ino == rb->ino && ra->maj == rb->maj && ra->min == rb->min &&
	       a->pgoff + (a->end - a->start) == b->pgoff;
}

/*
 * madvise advice that changes VMA flags: VMA by VMA, one whose flags would
 * not change is left whole; the others are split at the range's ends, take
 * the flags, and merge with their neighbours where those now match. The
 * kernel writes no record of any of it.
 */
/*
 * tree: the VMA tree's writes follow and set the VMAs; pieces are split to
 * hold their flags, and nothing is merged or parted here.
 */
static int change_vmflags(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end,
			  uint16_t set, uint16_t clear, bool tree)
{
	size_t i = lower(p, start), first, last, j, k;
	uint16_t now;
	uint64_t a, b;
	int err;

	while (i < p->n && p->p[i].start < end) {
		vma_of(p, i, &first, &last);
		b = p->p[last].end < end ? p->p[last].end : end;
		now = (uint16_t)((p->p[i].vmflags | set) & ~clear);
		/* [vdso], [vvar]: VM_SPECIAL, which neither mlock nor this advice changes. */
		if (now == p->p[i].vmflags || as->regions[p->p[i].region]->kind == MS_KIND_VDSO) {
			i = last + 1;
			continue;
		}
		a = p->p[first].start > start ? p->p[first].start : start;
		if ((err = carve(p, a, b, &i, &j)))
			return err;
		for (k = i; k < j; k++)
			p->p[k].vmflags = now;
		if (i < p->n && !tree)
			join_if_mergeable(as, p, i);
		if (j < p->n && !tree)
			join_if_mergeable(as, p, j);
		i = j;
	}
	return 0;
}

static int apply_vmflags(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint16_t set, clear;

	if (!advice_flags(ev->madvise.advice, &set, &clear))
		return 0;
	return change_vmflags(as, p, ev->madvise.start, ev->madvise.end, set, clear, ev->madvise.tree);
}

static uint16_t lock_vmflags(uint32_t lock)
{
	return (uint16_t)((lock & MS_LOCK_LOCKED ? VF_LOCKED : 0) | (lock & MS_LOCK_ONFAULT ? VF_LOCKONFAULT : 0));
}

/* A VMA locked, not on fault, is populated at once (mm_populate): its first write fault makes its anon_vma. */
static void populate(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = lower(p, start); i < p->n && p->p[i].start < end; i++)
		if (wants_anon(&p->p[i]) && (p->p[i].vmflags & VF_LOCKS) == VF_LOCKED &&
		    as->regions[p->p[i].region]->kind != MS_KIND_VDSO)
			make_anon(as, p, i);
}

/* mlock, munlock (a range), mlockall and munlockall (every VMA, and what new maps get). */
static int apply_mlock(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint64_t start = ev->mlock.all ? 0 : ev->mlock.start, end = ev->mlock.all ? UINT64_MAX : ev->mlock.end;
	uint16_t set = lock_vmflags(ev->mlock.lock);
	int err;

	if (ev->mlock.def >= 0)
		p->def_vmflags = lock_vmflags((uint32_t)ev->mlock.def);
	if (ev->mlock.def >= 0 && !ev->mlock.all)
		return 0;                        /* MCL_FUTURE alone */
	if ((err = change_vmflags(as, p, start, end, set, (uint16_t)(VF_LOCKS & ~set), ev->mlock.tree)))
		return err;
	populate(as, p, start, end);
	return 0;
}

static int apply_brk(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	const struct ms_region *heap = p->heap >= 0 ? as->regions[p->heap] : NULL;
	struct ms_event grown;
	enum ms_aspace_op op;
	uint64_t from;

	if (heap && !heap->alive)
		heap = NULL;
	/*
	 * old == new: the first brk seen of this process (attached to), whose
	 * break before is not known: the heap's end says where it was.
	 */
	if (ev->brk.new_brk == ev->brk.old_brk && heap && ev->brk.new_brk >= heap->start &&
	    PAGE_ALIGN(ev->brk.new_brk) < heap->end && !ev->brk.vma_end)
		return unmap_range(as, p, PAGE_ALIGN(ev->brk.new_brk), heap->end, p->heap, ev->time);
	if (ev->brk.vma_end && (ev->brk.new_brk > ev->brk.old_brk ||
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
		if (heap)
			return grow(as, p, &grown, p->heap);
		return apply_map(as, p, &grown, &op);
	}
	if (ev->brk.new_brk < ev->brk.old_brk && heap) {
		/* The kernel never moves the break below where the heap starts. */
		from = PAGE_ALIGN(ev->brk.new_brk);
		if (from < heap->start)
			from = heap->start;
		return unmap_range(as, p, from, PAGE_ALIGN(ev->brk.old_brk), p->heap, ev->time);
	}
	return 0;
}

static int apply_fork(struct ms_aspace *as, struct proc *parent, const struct ms_event *ev)
{
	struct proc *child;
	uint32_t *map, anon = 0;
	size_t i;
	int id;
	struct ms_event_map m;
	const struct ms_region *r;

	if (ev->fork.child_pid == ev->pid)
		return 0;                        /* a thread: same address space */
	child = proc_get(as, ev->fork.child_pid);
	if (!child)
		return -ENOMEM;
	clear_proc(as, child, ev->time);
	memcpy(child->comm, parent->comm, sizeof(child->comm));
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
			id = region_new(as, child, ev, &m, r->proc_name);
			if (id < 0) {
				free(map);
				return id;
			}
			region_rename(as->regions[id], r->name, r->kind);
			map[r->id] = (uint32_t)id + 1;
			r = as->regions[parent->p[i].region];   /* regions may have moved */
			if ((int64_t)r->id == parent->heap)
				child->heap = id;
			if ((int64_t)r->id == parent->stack)
				child->stack = id;
		}
		if (insert_at(child, child->n, &parent->p[i])) {
			free(map);
			return -ENOMEM;
		}
		child->p[child->n - 1].region = map[r->id] - 1;
		child->p[child->n - 1].vmflags &= (uint16_t)~VF_LOCKS;   /* dup_mmap: locks are not inherited */
		/*
		 * anon_vma_fork: each VMA of the child that had one gets a new one of
		 * its own; a piece joined to the one before (join is the parent's) shares it.
		 */
		if (parent->p[i].anon && !(child->n > 1 && child->p[child->n - 1].join))
			anon = (++as->last_anon & ~ANON_FORKED) | ANON_FORKED;
		if (parent->p[i].anon)
			child->p[child->n - 1].anon = anon;
	}
	free(map);
	return 0;
}

/* --- samples --------------------------------------------------------------- */

static void charge(struct ms_aspace *as, const struct ms_event *ev, const struct ms_region *r)
{
	if (as->listener.charge)
		as->listener.charge(as->ctx, ev, r);
}

/* The region at addr in p: the piece found last first, as samples cluster. */
static inline const struct ms_region *find(const struct ms_aspace *as, struct proc *p, uint64_t addr)
{
	size_t i = p->hint;

	if (i >= p->n || p->p[i].start > addr || p->p[i].end <= addr) {
		i = lower(p, addr);
		if (i == p->n || p->p[i].start > addr)
			return NULL;
		p->hint = i;
	}
	return as->regions[p->p[i].region];
}

MS_EXPORT const struct ms_region *ms_aspace_lookup(const struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	struct proc *p = as->last_proc && as->last_proc->pid == pid ? as->last_proc :
			 ms_u32map_get(&as->procs, pid);

	return p ? find(as, p, addr) : NULL;
}

static const struct ms_region *lookup_in(const struct ms_aspace *as, const struct proc *p, uint64_t addr)
{
	size_t i = lower(p, addr);

	if (i == p->n || p->p[i].start > addr)
		return NULL;
	return as->regions[p->p[i].region];
}

/* A thread's stack is the anonymous region its stack pointer lies in. */
static void __attribute__((noinline)) name_thread_stack(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
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
	region_rename(as->regions[r->id], name, MS_KIND_THREAD_STACK);
	if (!ms_u32map_put(&p->named, ev->tid, (void *)1))
		p->last_named = ev->tid;
}

static void resolve_pending_slow(struct ms_aspace *as, uint32_t tid)
{
	struct pending *pd = ms_u32map_del(&as->pending, tid);

	if (!pd)
		return;
	charge(as, &pd->ev, ms_aspace_lookup(as, pd->ev.pid, pd->ev.sample.addr));
	free(pd->chain);
	free(pd);
}

static inline void resolve_pending(struct ms_aspace *as, uint32_t tid)
{
	if (as->pending.len)              /* rare: the usual case is that nothing waits */
		resolve_pending_slow(as, tid);
}

/* A fault just below [stack] comes before the record of the growth it causes. */
static bool __attribute__((noinline)) defer_stack_fault(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
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

/* Whether a fault in this piece makes its VMA's anon_vma: private, writable, none yet. */
static inline bool wants_anon(const struct piece *pc)
{
	return !pc->anon && (pc->prot & PROT_WRITE) && !(pc->flags & MAP_SHARED);
}

/* Whether VMAs a and b (next to it) could share an anon_vma: anon_vma_compatible. */
static bool anon_compatible(const struct ms_aspace *as, const struct piece *a, const struct piece *b)
{
	const struct ms_region *ra = as->regions[a->region], *rb = as->regions[b->region];

	/* The protection may differ (VM_ACCESS_FLAGS); nothing else may. */
	return a->end == b->start && a->flags == b->flags && a->vmflags == b->vmflags &&
	       ra->ino == rb->ino && ra->maj == rb->maj && ra->min == rb->min &&
	       (ra->kind == MS_KIND_STACK) == (rb->kind == MS_KIND_STACK) &&
	       (!ra->ino || a->pgoff + (a->end - a->start) == b->pgoff);
}

/* The first fault in piece i's VMA: it takes the next VMA's anon_vma, or the previous one's, or a new one. */
static void __attribute__((noinline)) make_anon(struct ms_aspace *as, struct proc *p, size_t i)
{
	size_t first, last, k;
	uint32_t anon = 0, next;

	vma_of(p, i, &first, &last);
	if (last + 1 < p->n && (next = p->p[last + 1].anon) && !(next & ANON_FORKED) &&
	    anon_compatible(as, &p->p[last], &p->p[last + 1]))
		anon = next;
	else if (first > 0 && (next = p->p[first - 1].anon) && !(next & ANON_FORKED) &&
		 anon_compatible(as, &p->p[first - 1], &p->p[first]))
		anon = next;
	if (!anon)
		anon = ++as->last_anon & ~ANON_FORKED;
	for (k = first; k <= last; k++)
		p->p[k].anon = anon;
}

static inline void apply_sample(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	const struct ms_region *r;

	if (ev->sample.has_sp && ev->tid != ev->pid && ev->tid != p->last_named)
		name_thread_stack(as, p, ev);
	r = find(as, p, ev->sample.addr);
	if (!r && defer_stack_fault(as, p, ev))
		return;
	if (r && wants_anon(&p->p[p->hint]))
		make_anon(as, p, p->hint);     /* find() left the hint at the sample's piece */
	charge(as, ev, r);
}

static void mark_lost(struct ms_aspace *as, struct proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		as->regions[p->p[i].region]->records_lost = true;
}

static int __attribute__((noinline)) apply_event(struct ms_aspace *as, const struct ms_event *ev,
						       enum ms_aspace_op *opp)
{
	enum ms_aspace_op op = MS_OP_NONE;
	uint64_t heap_end;
	struct proc *p;
	int err = 0;

	/* A fault waits for the growth it causes: its VMA tree write, then its MMAP2. */
	if (ev->kind != MS_EV_MAP && ev->kind != MS_EV_LOST && ev->kind != MS_EV_VMA &&
	    ev->kind != MS_EV_THREAD_SP)
		resolve_pending(as, ev->tid);
	if (ev->kind == MS_EV_LOST) {
		/* What its process had then may have changed unseen. */
		if ((p = ms_u32map_get(&as->procs, ev->pid)))
			mark_lost(as, p);
		goto out;
	}
	p = proc_get(as, ev->pid);
	if (!p)
		return -ENOMEM;
	switch (ev->kind) {
	case MS_EV_MAP:
		err = apply_map(as, p, ev, &op);
		resolve_pending(as, ev->tid);
		break;
	case MS_EV_UNMAP:
		op = MS_OP_UNMAP;
		err = unmap_range(as, p, ev->unmap.start, ev->unmap.end, -1, ev->time);
		break;
	case MS_EV_SHMDT: {
		const struct ms_region *r = ms_aspace_lookup(as, ev->pid, ev->shmdt.addr);

		op = MS_OP_UNMAP;
		if (r)
			err = unmap_range(as, p, r->start, r->end, r->id, ev->time);
		break;
	}
	case MS_EV_REMAP:
		op = MS_OP_REMAP;
		err = apply_remap(as, p, ev);
		break;
	case MS_EV_PROTECT:
		op = MS_OP_PROTECT;
		err = apply_protect(as, p, ev);
		break;
	case MS_EV_VMA:
		set_vma(p, ev->vma.start, ev->vma.end);
		break;
	case MS_EV_BRK:
		op = MS_OP_BRK;
		heap_end = p->heap >= 0 && as->regions[p->heap]->alive ? as->regions[p->heap]->end : 0;
		err = apply_brk(as, p, ev);
		/* A first brk that only told the break (old == new) and changed nothing is no change. */
		if (!err && ev->brk.old_brk == ev->brk.new_brk && !ev->brk.vma_end &&
		    heap_end == (p->heap >= 0 && as->regions[p->heap]->alive ? as->regions[p->heap]->end : 0))
			op = MS_OP_NONE;
		break;
	case MS_EV_MADVISE:
		op = MS_OP_MADVISE;
		err = apply_vmflags(as, p, ev);
		break;
	case MS_EV_MLOCK:
		op = MS_OP_LOCK;
		err = apply_mlock(as, p, ev);
		break;
	case MS_EV_FORK:
		op = MS_OP_FORK;
		err = apply_fork(as, p, ev);
		break;
	case MS_EV_EXEC:
		op = MS_OP_EXEC;
		clear_proc(as, p, ev->time);
		snprintf(p->comm, sizeof(p->comm), "%s", ev->comm.comm);
		break;
	case MS_EV_COMM:
		if (ev->tid == ev->pid || !p->comm[0])
			snprintf(p->comm, sizeof(p->comm), "%s", ev->comm.comm);
		break;
	case MS_EV_EXIT:
		op = MS_OP_EXIT;
		if (ev->tid == ev->pid)
			clear_proc(as, p, ev->time);
		break;
	case MS_EV_SAMPLE:
		apply_sample(as, p, ev);
		break;
	case MS_EV_THREAD_SP:
		if (ev->tid != ev->pid && ev->tid != p->last_named)
			name_thread_stack(as, p, ev);
		break;
	default:
		break;
	}
out:
	if (opp)
		*opp = op;
	return err;
}

/* A sample, the whole way: waiting faults, a new process, a thread's first sample, no region. */
static int __attribute__((noinline)) apply_sample_slow(struct ms_aspace *as, const struct ms_event *ev)
{
	struct proc *p;

	resolve_pending(as, ev->tid);
	if (!(p = proc_get(as, ev->pid)))
		return -ENOMEM;
	apply_sample(as, p, ev);
	return 0;
}

/*
 * The region of a sample on the usual path, with no calls: the process of
 * the sample before, nothing waiting, a thread already looked at, and the
 * piece of the sample before (samples cluster). NULL: take the whole way.
 */
static inline const struct ms_region *quick_region(const struct ms_aspace *as, const struct ms_event *ev)
{
	const struct proc *p = as->last_proc;
	size_t i;

	if (as->pending.len || !p || p->pid != ev->pid ||
	    (ev->sample.has_sp && ev->tid != ev->pid && ev->tid != p->last_named))
		return NULL;
	i = p->hint;
	if (i >= p->n || p->p[i].start > ev->sample.addr || p->p[i].end <= ev->sample.addr ||
	    wants_anon(&p->p[i]))
		return NULL;
	return as->regions[p->p[i].region];
}

MS_EXPORT int ms_aspace_apply(struct ms_aspace *as, const struct ms_event *ev, enum ms_aspace_op *opp)
{
	const struct ms_region *r;

	if (ev->kind != MS_EV_SAMPLE)
		return apply_event(as, ev, opp);
	if (opp)
		*opp = MS_OP_NONE;
	if (!(r = quick_region(as, ev)))
		return apply_sample_slow(as, ev);
	charge(as, ev, r);
	return 0;
}

/* Charges run's samples [from, from + n) to r: in one call where the listener takes runs. */
static void charge_run(struct ms_aspace *as, const struct ms_samples *run, size_t from, size_t n,
		       const struct ms_region *r)
{
	struct ms_samples sub;
	struct ms_event tmp;
	size_t i;

	if (!n || (!as->listener.charge_run && !as->listener.charge))
		return;
	sub = ms_samples_sub(run, from, n);
	if (as->listener.charge_run) {
		as->listener.charge_run(as->ctx, &sub, r);
		return;
	}
	samples_begin(&sub, &tmp);
	for (i = 0; i < n; i++)
		charge(as, samples_at(&sub, i, &tmp), r);
}

/*
 * ms_aspace_apply_run() over a run; plain: every event is a sample without
 * a stack pointer (the stream's runs of one layout, which may lie over the
 * recording's bytes), so the quick loop reads only address and process;
 * otherwise run is over events (run->evs). Inlined both ways.
 */
static inline __attribute__((always_inline)) int apply_run(struct ms_aspace *as, const struct ms_samples *run,
							   bool plain)
{
	const struct ms_region *r = NULL;
	const struct ms_event *ev;
	const struct proc *p;
	struct ms_event tmp;
	const unsigned char *at, *const end = run->base + run->n * run->stride;
	const size_t n = run->n, stride = run->stride, oaddr = run->addr, opid = run->pid;
	/* The process and piece the quick path matches: none yet (no pid is above 32 bits). */
	uint64_t lo = 0, hi = 0, pid = UINT64_MAX, addr;
	uint32_t named = 0, spid;
	size_t i = 0, start = 0;
	int err;

	for (;;) {
		/*
		 * The quick path of quick_region() with what it reads held in
		 * locals, for as long as samples fall in the piece of the one
		 * before: nothing it reads changes until a sample takes the
		 * whole way. They all go to the piece's region, r.
		 */
		for (at = run->base + i * stride; at < end; at += stride) {
			memcpy(&addr, at + oaddr, 8);
			memcpy(&spid, at + opid, 4);
			if (addr - lo >= hi - lo || spid != pid)
				break;
			if (!plain && (ev = (const void *)at, ev->kind != MS_EV_SAMPLE ||
				       (ev->sample.has_sp && ev->tid != ev->pid && ev->tid != named)))
				break;           /* (not plain: at is an event of run->evs) */
		}
		i = (size_t)(at - run->base) / stride;
		charge_run(as, run, start, i - start, r);
		if (i == n)
			break;
		ev = ms_samples_event(run, i, &tmp);
		if (ev->kind == MS_EV_SAMPLE && (r = quick_region(as, ev))) {
			p = as->last_proc;       /* quick_region() found the piece of the hint */
			lo = p->p[p->hint].start;
			hi = p->p[p->hint].end;
			pid = p->pid;
			named = p->last_named;
			start = i++;
			continue;
		}
		if ((err = ms_aspace_apply(as, ev, NULL)))
			return err;
		start = ++i;
		pid = UINT64_MAX;            /* the model may have changed */
		lo = hi = 0;
	}
	return 0;
}

MS_EXPORT int ms_aspace_apply_run(struct ms_aspace *as, const struct ms_event *evs, size_t n)
{
	const struct ms_samples run = ms_samples_of(evs, n);

	return apply_run(as, &run, false);
}

int ms_aspace_apply_samples(struct ms_aspace *as, const struct ms_samples *run)
{
	return !run->evs || (run->n && !run->evs[0].sample.has_sp) ? apply_run(as, run, true) :
								       apply_run(as, run, false);
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

MS_EXPORT bool ms_aspace_holds(const struct ms_aspace *as, uint32_t pid, uint32_t region,
				uint64_t start, uint64_t end)
{
	const struct proc *p = ms_u32map_get(&as->procs, pid);
	uint64_t at = start;
	size_t i;

	if (!p)
		return false;
	for (i = lower(p, start); at < end; i++) {
		if (i == p->n || p->p[i].start > at || p->p[i].region != region)
			return false;
		at = p->p[i].end;
	}
	return true;
}

MS_EXPORT int ms_aspace_prot_at(const struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	const struct proc *p = ms_u32map_get(&as->procs, pid);
	size_t i;

	if (!p)
		return -1;
	i = lower(p, addr);
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
		v.name = r->proc_name;
		for (i++; i < p->n && p->p[i].join && p->p[i].start == v.end; i++)
			v.end = p->p[i].end;
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
	while ((p = ms_u32map_next(&as->procs, &pos, NULL))) {
		ms_u32map_release(&p->named);
		free(p->p);
		free(p);
	}
	pos = 0;
	while ((pd = ms_u32map_next(&as->pending, &pos, NULL))) {
		free(pd->chain);
		free(pd);
	}
	ms_u32map_release(&as->procs);
	ms_u32map_release(&as->pending);
	for (i = 0; i < as->nr; i++) {
		if (as->regions[i]->name != as->regions[i]->proc_name)
			free((char *)as->regions[i]->name);
		free((char *)as->regions[i]->proc_name);
		free(as->regions[i]->alloc_chain);
		free(as->regions[i]);
	}
	free(as->regions);
	free(as);
}

/* --- describing changes ---------------------------------------------------- */

static void range_of(const struct ms_event *ev, struct ms_change *c)
{
	switch (ev->kind) {
	case MS_EV_MAP: c->start = ev->map.start; c->end = ev->map.end; break;
	case MS_EV_UNMAP: c->start = ev->unmap.start; c->end = ev->unmap.end; break;
	case MS_EV_SHMDT: c->start = ev->shmdt.addr; break;
	case MS_EV_REMAP:
		c->start = ev->remap.old_start;
		c->end = ev->remap.old_end;
		c->new_start = ev->remap.new_start;
		c->new_end = ev->remap.new_end;
		break;
	case MS_EV_PROTECT: c->start = ev->protect.start; c->end = ev->protect.end; break;
	case MS_EV_BRK: c->start = ev->brk.old_brk; c->end = ev->brk.new_brk; break;
	case MS_EV_MADVISE: c->start = ev->madvise.start; c->end = ev->madvise.end; break;
	case MS_EV_MLOCK:
		if (!ev->mlock.all) {
			c->start = ev->mlock.start;
			c->end = ev->mlock.end;
		}
		break;
	default: break;
	}
}

static void set_release(struct ms_change *c, uint64_t start, uint64_t end)
{
	c->release_start = start;
	c->release_end = end;
}

MS_EXPORT int ms_aspace_apply_change(struct ms_aspace *as, const struct ms_event *ev, struct ms_change *c)
{
	const struct ms_region *r, *before = NULL;
	uint64_t shm_start = 0, shm_end = 0;
	bool occupied = false;
	int err;

	memset(c, 0, sizeof(*c));
	c->prot = c->advice = c->lock = -1;
	range_of(ev, c);
	if (c->start && ev->kind != MS_EV_BRK)
		before = ms_aspace_lookup(as, ev->pid, c->start);
	if (before)
		snprintf(c->name, sizeof(c->name), "%s", before->name);
	if (ev->kind == MS_EV_SHMDT && before) {
		shm_start = before->start;
		shm_end = before->end;
	}
	if (ev->kind == MS_EV_MAP) {
		const struct proc *p = ms_u32map_get(&as->procs, ev->pid);
		size_t i = p ? lower(p, ev->map.start) : 0;

		occupied = p && i < p->n && p->p[i].start < ev->map.end;
	}
	err = ms_aspace_apply(as, ev, &c->op);
	if (err)
		return err;
	if (c->op == MS_OP_NONE)
		return 0;
	c->time_ns = ev->time;
	c->pid = ev->pid;
	c->tid = ev->tid;
	if (ev->kind == MS_EV_MAP && c->op == MS_OP_MAP)
		c->prot = (int)ev->map.prot;
	else if (ev->kind == MS_EV_PROTECT)
		c->prot = (int)ev->protect.prot;
	else if (ev->kind == MS_EV_REMAP)
		c->prot = ms_aspace_prot_at(as, ev->pid, ev->remap.new_start);
	else if (ev->kind == MS_EV_MADVISE)
		c->advice = (int)ev->madvise.advice;
	else if (ev->kind == MS_EV_MLOCK) {
		c->lock = (int)ev->mlock.lock;
		if (ev->mlock.all)
			snprintf(c->name, sizeof(c->name), "every VMA%s", ev->mlock.def > 0 ? ", and maps to come" : "");
		else if (ev->mlock.def > 0)
			snprintf(c->name, sizeof(c->name), "maps to come");
	}
	switch (c->op) {
	case MS_OP_MAP:
		r = ms_aspace_lookup(as, ev->pid, c->start);
		c->region = r;
		snprintf(c->name, sizeof(c->name), "%s", r ? r->name : ev->map.name);
		if (occupied)                          /* MAP_FIXED over what was there */
			set_release(c, c->start, c->end);
		break;
	case MS_OP_UNMAP:
		c->region = before;               /* what held the range's start, gone or cut now */
		if (ev->kind == MS_EV_SHMDT) {
			c->start = shm_start;
			c->end = shm_end;
		}
		set_release(c, c->start, c->end);
		break;
	case MS_OP_REMAP:
		c->region = ms_aspace_lookup(as, ev->pid, c->new_start);
		set_release(c, c->start, c->end);
		break;
	case MS_OP_PROTECT:
	case MS_OP_LOCK:
		c->region = c->start ? ms_aspace_lookup(as, ev->pid, c->start) : NULL;
		break;
	case MS_OP_MADVISE:
		c->region = ms_aspace_lookup(as, ev->pid, c->start);
		if (ev->madvise.advice == MADV_DONTNEED || ev->madvise.advice == MADV_FREE ||
		    ev->madvise.advice == MADV_REMOVE || ev->madvise.advice == 24)
			set_release(c, c->start, c->end);
		break;
	case MS_OP_BRK:
		c->region = ms_aspace_heap(as, ev->pid);
		snprintf(c->name, sizeof(c->name), "[heap]");
		if (ev->kind == MS_EV_BRK && ev->brk.new_brk < ev->brk.old_brk)
			set_release(c, PAGE_ALIGN(ev->brk.new_brk), PAGE_ALIGN(ev->brk.old_brk));
		break;
	case MS_OP_STACK_GROW:
		r = ms_aspace_lookup(as, ev->pid, ev->map.end - 1);
		c->region = r;
		if (r) {
			c->start = r->start;
			c->end = r->end;
		}
		snprintf(c->name, sizeof(c->name), "[stack]");
		break;
	case MS_OP_FORK:
		c->child_pid = ev->fork.child_pid;
		c->child_tid = ev->fork.child_tid;
		c->start = c->end = 0;
		snprintf(c->name, sizeof(c->name), "child %u/%u", c->child_pid, c->child_tid);
		break;
	case MS_OP_EXEC:
		c->release_all = true;
		snprintf(c->name, sizeof(c->name), "%s", ev->comm.comm);
		break;
	case MS_OP_EXIT:
		c->release_all = ev->tid == ev->pid;
		c->name[0] = '\0';
		break;
	default:
		break;
	}
	return 1;
}
