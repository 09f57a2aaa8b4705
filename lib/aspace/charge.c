/*
 * Charging samples: each to the region that holds its address now. Samples
 * cluster, so the quick path tests only whether a sample falls in the piece
 * of the one before (in the same process, with nothing waiting); a run of
 * such samples goes to the listener whole.
 */
#include <errno.h>
#include <string.h>

#include "aspace/internal.h"
#include "aspace/samples.h"

static inline void apply_sample(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	const struct ms_region *r;

	if (ev->sample.has_sp && ev->tid != ev->pid && ev->tid != p->last_named)
		ms_stack_name_thread(as, p, ev);
	r = find(as, p, ev->sample.addr);
	if (!r && ms_stack_defer_fault(as, p, ev))
		return;
	if (r && fault_makes_anon(as, &p->p[p->hint]))
		ms_vma_make_anon(as, p, p->hint);     /* find() left the hint at the sample's piece */
	charge(as, ev, r);
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
	if (!piece_holds(p, i, ev->sample.addr) || fault_makes_anon(as, &p->p[i]))
		return NULL;
	return as->regions[p->p[i].region];
}

MS_EXPORT int ms_aspace_apply(struct ms_aspace *as, const struct ms_event *ev, enum ms_aspace_op *opp)
{
	const struct ms_region *r;

	if (ev->kind != MS_EV_SAMPLE)
		return ms_aspace_apply_event(as, ev, opp, NULL);
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

/*
 * An access range (a VMA's accessed bits, a DAMON region) over the pieces
 * it covers now: one call per run of pieces of one region with no hole
 * between them, and one per hole. A range over two regions that one
 * kernel VMA holds (merged) is told apart here, by the regions' own
 * pieces, so each gets its share.
 */
void ms_aspace_charge_access(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint64_t at = ev->access.start, end = ev->access.end, from;
	size_t i = lower(p, at);
	uint32_t region;

	if (!as->listener.access)
		return;
	while (at < end) {
		if (i == p->n || p->p[i].start >= end) {
			as->listener.access(as->ctx, ev, NULL, at, end);
			return;
		}
		if (p->p[i].start > at) {
			as->listener.access(as->ctx, ev, NULL, at, p->p[i].start);
			at = p->p[i].start;
		}
		region = p->p[i].region;
		from = at;
		for (; i < p->n && p->p[i].region == region && p->p[i].start <= at && at < end; i++)
			at = p->p[i].end < end ? p->p[i].end : end;
		as->listener.access(as->ctx, ev, as->regions[region], from, at);
	}
}
