/*
 * Samples the model charged to no region, or to a PROT_NONE page. Freed
 * addresses are found in a per-process list of releases (it grows with
 * unmaps, not with samples); lookups scan it from the newest, and only
 * for the rare samples that need it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <mapscope/unmapped.h>

#include "aspace/samples.h"
#include "util/grow.h"
#include "util/log.h"

#define NEAR (1ULL << 30)           /* how far past the heap or below the stack still counts as near */

struct release {
	uint32_t pid, tid;
	uint64_t start, end, time;
	enum ms_aspace_op op;
	const char *call;
	uint64_t *chain;
	uint32_t chain_len;
};

struct ms_unmapped {
	struct ms_aspace *as;
	const struct ms_session *s;   /* for the recording machine's vm.mmap_min_addr */
	struct release *rel;
	size_t nr_rel, cap_rel;
	struct ms_unmapped_access *acc;
	size_t nr_acc, cap_acc;
	struct ms_unmapped_prefetch_site *pf;
	size_t nr_pf, cap_pf;
	struct near {                 /* the last gap between mappings a prefetch fell in, until the next change */
		uint32_t pid;
		uint64_t addr, lo, hi;    /* the gap: [lo, hi) */
		struct ms_vma below, above, at;   /* at: the PROT_NONE VMA that holds addr, for a guard */
		bool has_below, has_above, has_at, valid;
	} near;
	int error;
};

MS_EXPORT const char *ms_unmapped_class_name(enum ms_unmapped_class c)
{
	static const char *const n[] = { "never-mapped", "freed", "guard", "beyond-heap", "below-stack",
					 "null-page", "uncertain", "past-end" };

	return n[c];
}

MS_EXPORT const char *ms_access_kind_name(enum ms_access_kind k)
{
	static const char *const n[] = { "fault", "load", "store", "prefetch", "exec" };

	return n[k];
}

static enum ms_access_kind kind_of(const struct ms_event *ev)
{
	uint64_t op = ev->sample.data_src >> PERF_MEM_OP_SHIFT;

	if (!ev->sample.data_src || ev->sample.fault)
		return MS_ACCESS_FAULT;
	if (op & PERF_MEM_OP_PFETCH)
		return MS_ACCESS_PREFETCH;
	if (op & PERF_MEM_OP_STORE)
		return MS_ACCESS_STORE;
	if (op & PERF_MEM_OP_LOAD)
		return MS_ACCESS_LOAD;
	if (op & PERF_MEM_OP_EXEC)
		return MS_ACCESS_EXEC;
	return MS_ACCESS_FAULT;
}

MS_EXPORT struct ms_unmapped *ms_unmapped_new(void)
{
	return calloc(1, sizeof(struct ms_unmapped));
}

/* Every change: the releases are remembered. */
static void note(struct ms_unmapped *u, const struct ms_event *ev, const struct ms_change *c)
{
	struct release *r;

	u->near.valid = false;
	if ((c->op != MS_OP_UNMAP && c->op != MS_OP_REMAP && c->op != MS_OP_BRK) ||
	    c->release_end <= c->release_start)
		return;
	if (MS_GROW(u->rel, u->nr_rel + 1, u->cap_rel, 64, SIZE_MAX, false)) {
		u->error = -ENOMEM;
		return;
	}
	r = &u->rel[u->nr_rel++];
	*r = (struct release){ c->pid, c->tid, c->release_start, c->release_end, c->time_ns, c->op,
			       ev->kind == MS_EV_SHMDT ? "shmdt" : c->op == MS_OP_REMAP ? "mremap" :
			       c->op == MS_OP_BRK ? "brk" : "munmap", NULL, 0 };
	if (ev->chain_len && (r->chain = malloc((ev->chain_len + 1) * sizeof(uint64_t))))
		r->chain_len = ms_aspace_call_chain(u->as, ev, r->chain);
}

static const struct release *freed_by(const struct ms_unmapped *u, uint32_t pid, uint64_t addr)
{
	size_t i;

	for (i = u->nr_rel; i-- > 0;)
		if (u->rel[i].pid == pid && u->rel[i].start <= addr && addr < u->rel[i].end)
			return &u->rel[i];
	return NULL;
}

/*
 * Where the null pages end: the recording machine's vm.mmap_min_addr,
 * which record writes as the recording's first records, so it is known
 * before any sample; else the kernel's usual default.
 */
static uint64_t null_limit(const struct ms_unmapped *u)
{
	uint64_t v;

	return u->s && !ms_session_sysctl(u->s, "vm.mmap_min_addr", &v) ? v : MS_UNMAPPED_NULL_LIMIT;
}

static enum ms_unmapped_class classify(const struct ms_unmapped *u, const struct ms_event *ev,
				       const struct release **freed)
{
	const struct ms_region *stack = ms_aspace_stack(u->as, ev->pid);
	const struct ms_region *heap = ms_aspace_heap(u->as, ev->pid);
	uint64_t a = ev->sample.addr;

	*freed = freed_by(u, ev->pid, a);
	if (*freed)
		return MS_UNMAPPED_FREED;
	if (a < null_limit(u))
		return MS_UNMAPPED_NULL;
	if (stack && a < stack->start && stack->start - a <= NEAR)
		return MS_UNMAPPED_BELOW_STACK;
	if (heap && a >= heap->end && a - heap->end <= NEAR)
		return MS_UNMAPPED_BEYOND_HEAP;
	return MS_UNMAPPED_NEVER;
}

/* Counts a prefetch of its instruction's, bad or not. */
static void prefetch_site_count(struct ms_unmapped *u, const struct ms_event *ev, bool bad)
{
	struct ms_unmapped_prefetch_site *p;
	size_t i;

	for (i = u->nr_pf; i-- > 0;)
		if (u->pf[i].ip == ev->sample.ip && u->pf[i].pid == ev->pid) {
			u->pf[i].prefetches++;
			u->pf[i].bad += bad;
			return;
		}
	if (MS_GROW(u->pf, u->nr_pf + 1, u->cap_pf, 16, SIZE_MAX, false)) {
		u->error = -ENOMEM;
		return;
	}
	p = &u->pf[u->nr_pf++];
	*p = (struct ms_unmapped_prefetch_site){ ev->pid, ev->sample.ip, 1, bad };
}

static void near_vma(const struct ms_vma *v, void *ctx)
{
	struct near *n = ctx;

	if (v->end <= n->addr) {
		n->below = *v;
		n->has_below = true;
	} else if (v->start > n->addr && !n->has_above) {
		n->above = *v;
		n->has_above = true;
	} else if (v->start <= n->addr && n->addr < v->end) {
		n->at = *v;
		n->has_at = true;
	}
}

/* The mappings on either side of addr, found once per gap between changes (VMAs in address order). */
static const struct near *nearest(struct ms_unmapped *u, uint32_t pid, uint64_t addr)
{
	struct near *n = &u->near;

	if (n->valid && n->pid == pid && addr >= n->lo && addr < n->hi)
		return n;
	*n = (struct near){ .pid = pid, .addr = addr };
	ms_aspace_for_each_vma(u->as, pid, near_vma, n);
	n->lo = n->has_below ? n->below.end : 0;
	n->hi = n->has_above ? n->above.start : UINT64_MAX;
	n->valid = addr >= n->lo && addr < n->hi;   /* not where addr is mapped (a guard) */
	return n;
}

/*
 * A bad prefetch: classified as any access, but an address a little past
 * the end of the mapping below it (where the heap's end is one) is past
 * that end: a loop prefetching ahead of its data ran past the data.
 */
static enum ms_unmapped_class classify_prefetch(struct ms_unmapped *u, const struct ms_event *ev,
						enum ms_unmapped_class cls, struct ms_unmapped_access *a)
{
	const struct near *n = nearest(u, ev->pid, ev->sample.addr);
	uint64_t addr = ev->sample.addr, below = n->has_below ? addr - n->below.end : UINT64_MAX;
	uint64_t above = n->has_above && n->above.start > addr ? n->above.start - addr : UINT64_MAX;
	const struct ms_vma *v = below <= above ? &n->below : &n->above;
	bool guard = cls == MS_UNMAPPED_GUARD && n->has_at;   /* the guard itself is the nearest mapping */

	if (guard)
		v = &n->at;
	if (a && (n->has_below || n->has_above || guard)) {
		a->near_name = strdup(v->name ? v->name : "");
		a->near_start = v->start;
		a->near_end = v->end;
		a->near_distance = guard ? 0 : below <= above ? below : above;
		if (!a->near_name)
			u->error = -ENOMEM;
	}
	if ((cls == MS_UNMAPPED_NEVER || cls == MS_UNMAPPED_BEYOND_HEAP) && n->has_below &&
	    below < MS_UNMAPPED_PAST_END_NEAR)
		return MS_UNMAPPED_PAST_END;
	return cls;
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_unmapped *u = ctx;
	const struct release *freed = NULL;
	struct ms_unmapped_access *a;
	enum ms_access_kind kind = kind_of(ev);
	enum ms_unmapped_class cls;
	size_t i;

	if (r) {
		if (ms_aspace_prot_at(u->as, ev->pid, ev->sample.addr) != 0) {
			if (kind == MS_ACCESS_PREFETCH)
				prefetch_site_count(u, ev, false);
			return;               /* an ordinary access */
		}
		cls = MS_UNMAPPED_GUARD;
	} else
		cls = classify(u, ev, &freed);
	if (kind == MS_ACCESS_PREFETCH) {
		prefetch_site_count(u, ev, true);
		cls = classify_prefetch(u, ev, cls, NULL);
	}
	for (i = 0; i < u->nr_acc; i++) {
		a = &u->acc[i];
		if (a->cls == cls && a->kind == kind && a->ip == ev->sample.ip && a->pid == ev->pid) {
			a->count++;
			a->last_ns = ev->time;
			return;
		}
	}
	if (MS_GROW(u->acc, u->nr_acc + 1, u->cap_acc, 32, SIZE_MAX, false)) {
		u->error = -ENOMEM;
		return;
	}
	a = &u->acc[u->nr_acc++];
	*a = (struct ms_unmapped_access){ .cls = cls, .kind = kind, .pid = ev->pid, .tid = ev->tid, .ip = ev->sample.ip,
					  .address = ev->sample.addr, .count = 1,
					  .first_ns = ev->time, .last_ns = ev->time };
	if (kind == MS_ACCESS_PREFETCH)
		classify_prefetch(u, ev, cls, a);
	if (freed) {
		a->freed_ns = freed->time;
		a->freed_op = freed->op;
		a->freed_call = freed->call;
		a->freed_tid = freed->tid;
		a->freed_chain = freed->chain;
		a->freed_chain_len = freed->chain_len;
	}
}

static void on_begin(void *ctx, struct ms_session *s)
{
	struct ms_unmapped *u = ctx;

	u->as = ms_session_aspace(s);
	u->s = s;
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	(void)s;
	note(ctx, ev, c);
	return 0;
}

/*
 * The prefetches of a run in accessible memory, for their sites' totals.
 * Only events (a uprobe's, decoded) and hardware samples with a data
 * source can be prefetches: page-fault runs are not looked into.
 */
static void count_mapped_prefetches(struct ms_unmapped *u, const struct ms_samples *run)
{
	const struct ms_event *ev;
	struct ms_event tmp;
	size_t i;

	if (!run->evs && (run->data_src < 0 || run->proto->sample.fault))
		return;
	for (i = 0; i < run->n; i++)
		if (kind_of(ev = ms_samples_event(run, i, &tmp)) == MS_ACCESS_PREFETCH)
			prefetch_site_count(u, ev, false);
}

/*
 * A run lies in one stretch of r with one protection: only a run in
 * PROT_NONE memory (a guard) holds accesses to count, and the protection
 * is looked up once for the run, not for each sample.
 */
static void on_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_unmapped *u = ctx;
	struct ms_event tmp;
	size_t i;

	if (!run->n)
		return;
	if (ms_aspace_prot_at(u->as, ms_samples_pid(run, 0), ms_samples_addr(run, 0)) != 0) {
		count_mapped_prefetches(u, run);
		return;
	}
	samples_begin(run, &tmp);
	for (i = 0; i < run->n; i++)
		on_charge(u, samples_at(run, i, &tmp), r);
}

/*
 * At the end, when every LOST record is known: where the recording lost
 * records, its accesses are uncertain, not never-mapped or freed (a null
 * page's stay what they are: no map is ever there). Which process's
 * records were lost cannot be told: the rings are per CPU, shared by
 * every process traced there, and a LOST record names the task that
 * wrote the next record once there was room again, not the one whose
 * records were dropped (seen here: a shell's libc maps lost under its
 * child's name, the shell's own faults in libc then never-mapped). Nor
 * when: the kernel writes a LOST record after the records it replaces,
 * and a map lost there holds every later access to it. So no process and
 * no time window is safe: every access is uncertain.
 */
static void on_finish(void *ctx, struct ms_session *s)
{
	struct ms_unmapped *u = ctx;
	struct ms_session_stats st;
	size_t i;

	ms_session_stats(s, &st);
	if (!st.lost)
		return;
	for (i = 0; i < u->nr_acc; i++)
		if (u->acc[i].cls != MS_UNMAPPED_NULL)
			u->acc[i].cls = MS_UNMAPPED_UNCERTAIN;
}

MS_EXPORT const struct ms_analysis ms_unmapped_analysis = {
	.name = "unmapped", .begin = on_begin, .charge = on_charge, .charge_run = on_charge_run,
	.change = on_change, .finish = on_finish,
};

static int cmp_acc(const void *pa, const void *pb)
{
	const struct ms_unmapped_access *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->first_ns < b->first_ns ? -1 : a->first_ns > b->first_ns;
}

MS_EXPORT int ms_unmapped_results(struct ms_unmapped *u, const struct ms_unmapped_access **out, size_t *n)
{
	if (u->error)
		return u->error;
	if (u->nr_acc)                   /* qsort(NULL, 0) is undefined */
		qsort(u->acc, u->nr_acc, sizeof(*u->acc), cmp_acc);
	*out = u->acc;
	*n = u->nr_acc;
	return 0;
}

static int cmp_pf(const void *pa, const void *pb)
{
	const struct ms_unmapped_prefetch_site *a = pa, *b = pb;

	if (a->bad != b->bad)
		return a->bad > b->bad ? -1 : 1;
	if (a->prefetches != b->prefetches)
		return a->prefetches > b->prefetches ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

MS_EXPORT int ms_unmapped_prefetch_sites(struct ms_unmapped *u, const struct ms_unmapped_prefetch_site **out,
					 size_t *n)
{
	if (u->error)
		return u->error;
	if (u->nr_pf)
		qsort(u->pf, u->nr_pf, sizeof(*u->pf), cmp_pf);
	*out = u->pf;
	*n = u->nr_pf;
	return 0;
}

MS_EXPORT void ms_unmapped_free(struct ms_unmapped *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr_acc; i++)
		free((char *)u->acc[i].near_name);
	free(u->pf);
	for (i = 0; i < u->nr_rel; i++)
		free(u->rel[i].chain);
	free(u->rel);
	free(u->acc);
	free(u);
}
