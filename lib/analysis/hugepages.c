/*
 * Per (region, 2 MiB span): the pages touched and counters (hugespans.h).
 * Advice is computed at the end from those and the region's life; the
 * reasons of regions not advised are interned, as most are one of a few
 * texts (500,000 small mappings: one text, not 500,000 buffers).
 *
 * A sampled recording (record -c N, perf's -F) sees 1 fault in N: each
 * fault is a page's first touch, so a sampled fault stands for N touched
 * pages and N faults (the sample's period). A sample of any other event
 * (a load, a TLB miss) stands for N events, not N pages: its page counts
 * once, a lower bound, and the span is "cannot tell" rather than "too
 * sparse" when N pages each could have filled it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include <mapscope/hugepages.h>

#include "analysis/access.h"
#include "analysis/hugebudget.h"
#include "analysis/hugespans.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strpool.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define REASON_MAX 512

struct ms_hugepages {
	struct ms_hugepages_opts o;
	struct ms_hugespans spans;
	unsigned char *flags;     /* per region: 1 hugepage advised already, 2 nohugepage */
	size_t cap_flags;
	bool have_tlb;
	uint64_t nr_samples, weight, min_period, max_period;   /* the sampling, for what the figures are */
	bool all_faults;                                       /* every sample was a page fault's */
	struct ms_access_table access;   /* ongoing access per region, where the recording has it */
	int error;
	/*
	 * The last ms_hugepages_sort(), lent to the caller until the next or
	 * ms_hugepages_free(): the advised regions (and those the budget left
	 * out) whole, each reason a REASON_MAX buffer of its own, as ranking
	 * appends; the others as their ranks, made into advice one at a time
	 * in one, so that 500,000 regions not advised cost 32 bytes each,
	 * not a 144-byte struct ms_huge_advice.
	 */
	const struct ms_aspace *as;
	uint64_t end_ns;
	struct ms_huge_advice *head;
	size_t nr_head, cap_head;
	struct rank *ranks;
	size_t nr_ranks, cap_ranks;
	struct ms_huge_advice one;
	char one_reason[REASON_MAX];
	/* The last ms_hugepages_advice(): every entry, the reasons not advised kept once each. */
	struct ms_huge_advice *advice;
	struct ms_strpool reasons;
};

/* A region not advised, as ranked: the figures that order it, and where its spans lie. */
struct rank {
	uint64_t key;             /* hot bytes or TLB misses, where they rank first (else 0) */
	uint64_t benefit, pages;
	uint32_t id;              /* the region's */
	uint32_t at;              /* its first span in the sorted spans */
};

enum { F_HUGE = 1, F_NOHUGE = 2 };

MS_EXPORT struct ms_hugepages *ms_hugepages_new(const struct ms_hugepages_opts *opts)
{
	struct ms_hugepages *hp = calloc(1, sizeof(*hp));

	if (!hp)
		return NULL;
	if (opts)
		hp->o = *opts;
	if (!hp->o.min_pages)
		hp->o.min_pages = 256;
	if (!hp->o.min_life_ns)
		hp->o.min_life_ns = 10000000;
	hp->all_faults = true;
	return hp;
}

static bool candidate(const struct ms_region *r)
{
	if (r->kind == MS_KIND_SHM)
		return true;
	return (r->flags & MAP_PRIVATE) && (r->kind == MS_KIND_ANON || r->kind == MS_KIND_HEAP ||
					     r->kind == MS_KIND_STACK || r->kind == MS_KIND_THREAD_STACK);
}

/* The span of addr in candidate region r, made where new. NULL (and hp->error set) without memory. */
static struct span *span_of(struct ms_hugepages *hp, const struct ms_region *r, uint64_t addr)
{
	uint64_t idx = addr / MS_HUGE_SPAN;
	struct span *s = ms_hugespans_find(&hp->spans, ((uint64_t)r->id + 1) << 32 | (idx & 0xffffffffULL), true);

	if (!s)
		hp->error = -ENOMEM;
	return s;
}

/* The sampling seen: one sample standing for period events (0, unknown, as 1). */
static inline uint64_t sampled(struct ms_hugepages *hp, uint64_t period)
{
	uint64_t w = period ? period : 1;

	if (!hp->nr_samples || w < hp->min_period)
		hp->min_period = w;
	if (w > hp->max_period)
		hp->max_period = w;
	hp->nr_samples++;
	hp->weight += w;
	return w;
}

/*
 * One sample at addr in span s, standing for period events: its page, and
 * whether it was a fault (a page's first touch: period pages) or a TLB miss.
 */
static inline void count(struct ms_hugepages *hp, struct span *s, uint64_t addr, bool fault, bool tlb,
			 uint64_t period)
{
	uint64_t page = (addr % MS_HUGE_SPAN) >> 12, w = sampled(hp, period);

	hp->all_faults &= fault;
	if (!ms_hugespans_has(&hp->spans, s, (uint32_t)page)) {
		if (ms_hugespans_add(&hp->spans, s, (uint32_t)page))
			hp->error = -ENOMEM;
		s->est += fault ? w : 1;
		s->upper += w;
	}
	s->samples++;
	s->faults += fault ? w : 0;
	if (tlb) {
		s->tlb += w;
		hp->have_tlb = true;
	}
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_hugepages *hp = ctx;
	struct span *s;

	if (!r || !candidate(r) || !(s = span_of(hp, r, ev->sample.addr)))
		return;
	count(hp, s, ev->sample.addr, ev->sample.fault, ms_event_tlb_miss(ev), ev->sample.period);
}

/*
 * A run, all in region r: the span is looked up where the 2 MiB span
 * changes, not for each sample. A run over the recording is one event's
 * samples, which share fault; over events, each says its own.
 */
static void on_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_hugepages *hp = ctx;
	const struct ms_event *ev;
	struct span *s = NULL;
	uint64_t addr, dsrc = 0, span = 0;
	size_t i;

	if (!candidate(r))
		return;
	for (i = 0; i < run->n; i++) {
		addr = ms_samples_addr(run, i);
		if (!s || addr / MS_HUGE_SPAN != span) {
			if (!(s = span_of(hp, r, addr)))
				return;
			span = addr / MS_HUGE_SPAN;
		}
		if (run->evs) {
			ev = &run->evs[i];
			count(hp, s, addr, ev->sample.fault, ms_event_tlb_miss(ev), ev->sample.period);
			continue;
		}
		if (run->data_src >= 0)
			dsrc = ms_samples_u64(run, i, (size_t)run->data_src);
		count(hp, s, addr, run->proto->sample.fault, ms_data_src_tlb_miss(dsrc), ms_samples_period(run, i));
	}
}

static void note(struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_event *ev);

static int on_event(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	note(ctx, ms_session_aspace(s), ev);
	return 0;
}

static void on_access(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end)
{
	struct ms_hugepages *hp = ctx;

	if (r && candidate(r))
		ms_access_table_charge(&hp->access, ev, r, start, end);
}

MS_EXPORT const struct ms_analysis ms_hugepages_analysis = {
	.name = "hugepages", .event = on_event, .charge = on_charge, .charge_run = on_charge_run,
	.access = on_access,
};

/* Each event before the model applies it: hugepage madvise calls are noted, and memory that moves. */
static void note(struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_event *ev)
{
	const struct ms_region *r;

	if (ev->kind == MS_EV_REMAP) {
		r = ms_aspace_lookup(as, ev->pid, ev->remap.old_start);
		if (r && candidate(r) && ms_hugespans_move(&hp->spans, r->id, ev->remap.old_start, ev->remap.old_end,
							   ev->remap.new_start))
			hp->error = -ENOMEM;
		return;
	}
	if (ev->kind != MS_EV_MADVISE || (ev->madvise.advice != MADV_HUGEPAGE &&
					  ev->madvise.advice != MADV_NOHUGEPAGE &&
					  ev->madvise.advice != MADV_COLLAPSE))
		return;
	r = ms_aspace_lookup(as, ev->pid, ev->madvise.start);
	if (!r)
		return;
	if (MS_GROW(hp->flags, (size_t)r->id + 1, hp->cap_flags, 256, SIZE_MAX, true))
		return;
	hp->flags[r->id] = ev->madvise.advice == MADV_NOHUGEPAGE ? F_NOHUGE : F_HUGE;
}

/* What a region's spans add up to, beyond the sums in its advice. */
struct tally {
	uint32_t dense;                 /* whole spans inside the region with enough pages touched */
	uint64_t dense_pages, dense_tlb;
	uint64_t best, best_upper;      /* the most pages touched in one whole span: estimated, and could be */
	/* The longest run of dense spans the region holds at the end: where to advise. */
	uint64_t run_at, run_len, run_pages, run_tlb;
};

static inline uint64_t capped(uint64_t pages)
{
	return pages < 512 ? pages : 512;
}

/*
 * Whether span idx lies wholly inside region r: only such a span can be a
 * hugepage of r's. A span a region shares with another (at its unaligned
 * ends) is counted in its pages but is never dense.
 */
static inline bool whole(const struct ms_region *r, uint64_t idx)
{
	return idx * MS_HUGE_SPAN >= r->start && (idx + 1) * MS_HUGE_SPAN <= r->end;
}

/* The current run of held dense spans, and the longest so far in t. */
struct run {
	uint64_t at, len, pages, tlb, prev;
};

static void run_extend(struct run *c, struct tally *t, uint64_t idx, uint64_t pages, uint64_t tlb)
{
	if (c->len && idx == c->prev + 1) {
		c->len++;
		c->pages += pages;
		c->tlb += tlb;
	} else
		*c = (struct run){ idx * MS_HUGE_SPAN, 1, pages, tlb, 0 };
	c->prev = idx;
	if (c->len > t->run_len) {
		t->run_at = c->at;
		t->run_len = c->len;
		t->run_pages = c->pages;
		t->run_tlb = c->tlb;
	}
}

/*
 * Sums region r's spans sp[0, n), in address order, into a and t: only
 * the spans that were touched are visited, so the work is linear in them
 * whatever the region's size. Pages (estimated, at most 512 a span),
 * faults, samples and TLB misses are the region's whole life (pages that
 * mremap moved went with the memory: follow_remap). Dense spans are whole
 * spans inside its extent (now, or when it ended). Where to advise comes
 * from the longest run of dense spans the region holds at the end, so
 * that an action never covers memory it no longer has, nor a hole another
 * region took.
 */
static void sum_spans(const struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_region *r,
		      const struct span *sp, size_t n, struct ms_huge_advice *a, struct tally *t)
{
	struct run cur = { 0 };
	uint64_t idx, est, at;
	const struct span *s;
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		s = &sp[i];
		est = capped(s->est);
		a->pages += est;
		a->faults += s->faults;
		a->samples += s->samples;
		a->tlb_misses += s->tlb;
		idx = s->key & 0xffffffffULL;
		at = idx * MS_HUGE_SPAN;
		if (!whole(r, idx)) {
			cur.len = 0;
			continue;
		}
		t->best = est > t->best ? est : t->best;
		t->best_upper = capped(s->upper) > t->best_upper ? capped(s->upper) : t->best_upper;
		if (est < hp->o.min_pages || !r->alive || !ms_aspace_holds(as, r->pid, r->id, at, at + MS_HUGE_SPAN))
			cur.len = 0;
		else
			run_extend(&cur, t, idx, est, s->tlb);
		if (est < hp->o.min_pages)
			continue;
		t->dense++;
		t->dense_pages += est;
		t->dense_tlb += s->tlb;
	}
}

/* What the figures are: "" when every event was seen, else the sampling they were estimated from. */
static void sampling_note(const struct ms_hugepages *hp, char *buf, size_t len)
{
	const char *what = hp->all_faults ? "faults" : "samples";

	if (hp->max_period <= 1)
		buf[0] = '\0';
	else if (hp->min_period == hp->max_period)
		snprintf(buf, len, "~ estimated from 1 in %llu %s", (unsigned long long)hp->max_period, what);
	else
		snprintf(buf, len, "~ estimated from 1 in %llu %s on average (the period varies: perf -F)",
			 (unsigned long long)((hp->weight + hp->nr_samples / 2) / hp->nr_samples), what);
}

/* Why a region with no dense span is not advised: too sparse, or sampled too coarsely to tell. */
static void sparse_reason(const struct ms_hugepages *hp, const struct tally *t, char *reason)
{
	char est[96];

	sampling_note(hp, est, sizeof(est));
	if (t->best_upper >= hp->o.min_pages)
		snprintf(reason, REASON_MAX, "cannot tell: at most %llu of 512 pages seen in any 2 MiB span, but "
			 "each sample stands for %s%llu events, so up to %llu could have been touched (%u needed): "
			 "record page faults (without -c) to know", (unsigned long long)t->best,
			 hp->min_period == hp->max_period ? "" : "~",
			 (unsigned long long)((hp->weight + hp->nr_samples / 2) / hp->nr_samples),
			 (unsigned long long)t->best_upper, hp->o.min_pages);
	else
		snprintf(reason, REASON_MAX, "too sparse: at most %llu of 512 pages touched in any 2 MiB span "
			 "(%u needed)%s%s", (unsigned long long)t->best, hp->o.min_pages, est[0] ? "; " : "", est);
}

/* Whether a region is advised: the first objection in order, or the case for it (V_DENSE). */
enum verdict { V_UNALIGNED, V_NOHUGE, V_HUGE, V_SHORT, V_SPARSE, V_SMALL, V_DENSE };

static enum verdict verdict(const struct ms_hugepages *hp, const struct ms_region *r, const struct tally *t,
			    uint64_t life, const struct ms_huge_advice *a)
{
	unsigned char flags = r->id < hp->cap_flags ? hp->flags[r->id] : 0;

	if (!a->aligned_spans)
		return V_UNALIGNED;
	if (flags == F_NOHUGE)
		return V_NOHUGE;
	if (flags == F_HUGE)
		return V_HUGE;
	if (life < hp->o.min_life_ns)
		return V_SHORT;
	if (!t->dense)
		return V_SPARSE;
	return a->benefit < hp->o.min_benefit ? V_SMALL : V_DENSE;
}

/* The case for advised a, in reason (REASON_MAX bytes). */
static void dense_reason(const struct ms_hugepages *hp, const struct ms_region *r, const struct tally *t,
			 const struct ms_huge_advice *a, char *reason)
{
	char est[96], run[96] = "";

	if (t->run_len && t->run_len < t->dense)
		snprintf(run, sizeof(run), "; advised: the longest run of them it still holds, %llu spans",
			 (unsigned long long)t->run_len);
	sampling_note(hp, est, sizeof(est));
	snprintf(reason, REASON_MAX, "dense: %u of %u spans with %llu pages touched on "
		 "average; saves %llu faults and %llu TLB entries%s%s%s%s", t->dense, a->aligned_spans,
		 (unsigned long long)(t->dense_pages / t->dense), (unsigned long long)a->faults_saved,
		 (unsigned long long)(a->tlb_entries_now - a->tlb_entries_huge), run,
		 t->run_len ? "" : !r->alive ? "; gone by the end: advise it as it is made" :
		 "; none of it is where it was dense any more: advise it as it is made",
		 est[0] ? "; " : "", est);
}

/* Why, in words, in reason (REASON_MAX bytes): verdict v of a. */
static void say(const struct ms_hugepages *hp, const struct ms_region *r, const struct tally *t, uint64_t life,
		const struct ms_huge_advice *a, enum verdict v, char *reason)
{
	switch (v) {
	case V_UNALIGNED:
		snprintf(reason, REASON_MAX, "not 2 MiB-alignable: no whole 2 MiB-aligned span lies "
			 "inside its %llu KiB", (unsigned long long)((r->end - r->start) >> 10));
		break;
	case V_NOHUGE:
		snprintf(reason, REASON_MAX, "VM_NOHUGEPAGE: the program asked for no hugepages "
			 "(madvise MADV_NOHUGEPAGE)");
		break;
	case V_HUGE:
		snprintf(reason, REASON_MAX, "already huge: madvise(MADV_HUGEPAGE) or MADV_COLLAPSE "
			 "was applied to it");
		break;
	case V_SHORT:
		snprintf(reason, REASON_MAX, "too short-lived: it lived %.3f ms", (double)life / 1e6);
		break;
	case V_SPARSE:
		sparse_reason(hp, t, reason);
		break;
	case V_SMALL:
		snprintf(reason, REASON_MAX, "benefit too small: %llu (minimum %llu)",
			 (unsigned long long)a->benefit, (unsigned long long)hp->o.min_benefit);
		break;
	case V_DENSE:
		dense_reason(hp, r, t, a, reason);
		break;
	}
}

/*
 * The advice for region r from its spans sp[0, n), in address order; its
 * reason goes in reason, where it is not NULL (ranking needs only the
 * figures). The figures of the benefit count only the spans advised: the
 * run held at the end, or, for a region to advise where it is made, every
 * dense span. A region dense while it lived and gone by the end is
 * advised with no range: for where it is made.
 */
static void advise(struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_region *r,
		   const struct span *sp, size_t n, uint64_t end_ns, struct ms_huge_advice *a, char *reason)
{
	uint64_t first = (r->start + MS_HUGE_SPAN - 1) & ~(MS_HUGE_SPAN - 1);
	uint64_t last = r->end & ~(MS_HUGE_SPAN - 1), spans, pages, tlb;
	uint64_t life = (r->ended_ns ? r->ended_ns : end_ns) - r->created_ns;
	struct tally t;
	enum verdict v;

	memset(a, 0, sizeof(*a));
	a->region = r;
	a->reason = reason;
	a->period = hp->nr_samples ? (hp->weight + hp->nr_samples / 2) / hp->nr_samples : 1;
	a->estimated = hp->max_period > 1;
	spans = last > first ? (last - first) / MS_HUGE_SPAN : 0;
	a->aligned_spans = spans > UINT32_MAX ? UINT32_MAX : (uint32_t)spans;
	sum_spans(hp, as, r, sp, n, a, &t);
	a->spans = (uint32_t)(t.run_len ? t.run_len : t.dense);
	pages = t.run_len ? t.run_pages : t.dense_pages;
	tlb = t.run_len ? t.run_tlb : t.dense_tlb;
	a->faults_saved = pages - a->spans;
	a->tlb_entries_now = pages;
	a->tlb_entries_huge = a->spans;
	a->benefit = a->faults_saved + tlb;
	v = verdict(hp, r, &t, life, a);
	if (v == V_DENSE) {
		a->advised = true;
		if (t.run_len) {
			a->start = t.run_at;
			a->end = t.run_at + t.run_len * MS_HUGE_SPAN;
		}
	}
	if (reason)
		say(hp, r, &t, life, a, v, reason);
}

static int cmp_advice(const void *pa, const void *pb)
{
	const struct ms_huge_advice *a = pa, *b = pb;

	if (a->advised != b->advised)
		return a->advised ? -1 : 1;
	if (a->benefit != b->benefit)
		return a->benefit > b->benefit ? -1 : 1;
	if (a->pages != b->pages)
		return a->pages > b->pages ? -1 : 1;
	return a->region->id < b->region->id ? -1 : a->region->id > b->region->id;
}

/* Advised first, then by ongoing access, then as cmp_advice() has them (a stable tie: benefit, pages, id). */
static int cmp_access(const void *pa, const void *pb)
{
	const struct ms_huge_advice *a = pa, *b = pb;

	if (a->advised != b->advised)
		return a->advised ? -1 : 1;
	if (a->hot_bytes != b->hot_bytes)
		return a->hot_bytes > b->hot_bytes ? -1 : 1;
	return cmp_advice(pa, pb);
}

/* Region id's bytes found accessed per interval, on average (0: none said). */
static uint64_t hot_bytes(const struct ms_hugepages *hp, uint32_t id)
{
	const struct ms_access_stat *st = ms_access_table_get(&hp->access, id);

	return st ? st->hot_sum / st->intervals : 0;
}

/*
 * Where the recording has ongoing access (accessed bits, DAMON), the
 * regions that faults found dense are ranked by how hard they are used
 * since: a table touched once and left is worth less than one rewritten
 * all along. The reason says which evidence ranked it.
 */
static void rank_by_access(struct ms_hugepages *hp, struct ms_huge_advice *v, size_t n)
{
	const char *evidence = ms_access_table_evidence(&hp->access);
	size_t i, len;
	char *reason;

	for (i = 0; i < n; i++) {
		v[i].hot_bytes = hot_bytes(hp, v[i].region->id);
		reason = (char *)v[i].reason;        /* one of hp->own */
		len = strlen(reason);
		snprintf(reason + len, REASON_MAX - len, "; ongoing access: %.1f MiB found accessed per "
			 "interval, from %s", (double)v[i].hot_bytes / (1 << 20), evidence);
	}
	qsort(v, n, sizeof(*v), cmp_access);
}

/*
 * Where hardware samples say which accesses missed the TLB, those misses
 * rank the advice: they are what a hugepage saves on every access, where
 * faults are saved once.
 */
static int cmp_advice_tlb(const void *pa, const void *pb)
{
	const struct ms_huge_advice *a = pa, *b = pb;

	if (a->advised == b->advised && a->tlb_misses != b->tlb_misses)
		return a->tlb_misses > b->tlb_misses ? -1 : 1;
	return cmp_advice(pa, pb);
}

/* The budget's room, taken in rank order: by ongoing access, TLB misses, or first touches, as ranked. */
static void fit_budget(const struct ms_hugepages *hp, struct ms_huge_advice *v, size_t n)
{
	struct ms_huge_budget b = { hp->o.budget, MS_HUGE_RANK_FAULTS, "first touches (page faults)", REASON_MAX };
	const char *evidence = ms_access_table_evidence(&hp->access);

	if (evidence) {
		b.by = MS_HUGE_RANK_ACCESS;
		b.evidence = evidence;
	} else if (hp->have_tlb) {
		b.by = MS_HUGE_RANK_TLB;
		b.evidence = "TLB-miss samples";
	}
	ms_huge_budget_fit(v, n, &b);
}

/*
 * The regions not advised, in their order: as cmp_access(), or
 * cmp_advice_tlb(), or cmp_advice() would put them, their key being the
 * figure that ranks first (hot bytes, TLB misses, or none).
 */
static int cmp_rank(const void *pa, const void *pb)
{
	const struct rank *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	if (a->benefit != b->benefit)
		return a->benefit > b->benefit ? -1 : 1;
	if (a->pages != b->pages)
		return a->pages > b->pages ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The last ms_hugepages_sort() and ms_hugepages_advice(), released. */
static void advice_release(struct ms_hugepages *hp)
{
	size_t i;

	for (i = 0; i < hp->nr_head; i++)
		free((char *)hp->head[i].reason);
	free(hp->head);
	free(hp->ranks);
	free(hp->advice);
	ms_strpool_release(&hp->reasons);
	hp->head = NULL;
	hp->ranks = NULL;
	hp->advice = NULL;
	hp->nr_head = hp->cap_head = hp->nr_ranks = hp->cap_ranks = 0;
	hp->as = NULL;
}

/*
 * An advised region, kept whole with a reason buffer of its own (the
 * ranking and the budget append to it): 0 or -ENOMEM.
 */
static int keep_head(struct ms_hugepages *hp, const struct ms_huge_advice *a, const char *reason)
{
	char *own;

	if (MS_GROW(hp->head, hp->nr_head + 1, hp->cap_head, 16, SIZE_MAX, false) || !(own = malloc(REASON_MAX)))
		return -ENOMEM;
	memcpy(own, reason, REASON_MAX);
	hp->head[hp->nr_head] = *a;
	hp->head[hp->nr_head++].reason = own;
	return 0;
}

/* A region not advised, kept as its rank (its spans begin at span at): 0 or -ENOMEM. */
static int keep_rank(struct ms_hugepages *hp, const struct ms_huge_advice *a, size_t at)
{
	struct rank *k;

	if (MS_GROW(hp->ranks, hp->nr_ranks + 1, hp->cap_ranks, 256, UINT32_MAX, false))
		return -ENOMEM;
	k = &hp->ranks[hp->nr_ranks++];
	k->key = ms_access_table_evidence(&hp->access) ? hot_bytes(hp, a->region->id) :
		 hp->have_tlb ? a->tlb_misses : 0;
	k->benefit = a->benefit;
	k->pages = a->pages;
	k->id = a->region->id;
	k->at = (uint32_t)at;
	return 0;
}

/*
 * Judges each region with spans: the advised ones kept whole, the others
 * as ranks. The spans are sorted by key in place (each region's lie
 * together, in address order): their indexes are made again if counting
 * goes on.
 */
static int judge_all(struct ms_hugepages *hp, const struct ms_aspace *as, uint64_t end_ns)
{
	size_t nr = ms_aspace_nr_regions(as), i, j;
	const struct ms_region *r;
	struct ms_huge_advice a;
	char reason[REASON_MAX];
	uint64_t id;

	ms_hugespans_sort(&hp->spans);
	for (i = 0; i < hp->spans.len; i = j) {
		id = hp->spans.t[i].key >> 32;
		for (j = i + 1; j < hp->spans.len && hp->spans.t[j].key >> 32 == id; j++)
			;
		if (id - 1 >= nr)
			continue;
		r = ms_aspace_region(as, (size_t)id - 1);
		advise(hp, as, r, hp->spans.t + i, j - i, end_ns, &a, NULL);
		if (a.advised)
			advise(hp, as, r, hp->spans.t + i, j - i, end_ns, &a, reason);
		if (a.advised ? keep_head(hp, &a, reason) : keep_rank(hp, &a, i))
			return -ENOMEM;
	}
	return 0;
}

MS_EXPORT int ms_hugepages_sort(struct ms_hugepages *hp, const struct ms_aspace *as, uint64_t end_ns, size_t *n)
{
	size_t i;
	int err;

	advice_release(hp);
	*n = 0;
	if (hp->error || hp->access.error)
		return hp->error ? hp->error : hp->access.error;
	if (ms_access_table_evidence(&hp->access))
		ms_access_table_settle(&hp->access);
	if ((err = judge_all(hp, as, end_ns))) {
		advice_release(hp);
		return err;
	}
	hp->as = as;
	hp->end_ns = end_ns;
	if (hp->nr_head)
		qsort(hp->head, hp->nr_head, sizeof(*hp->head), hp->have_tlb ? cmp_advice_tlb : cmp_advice);
	if (hp->nr_head && ms_access_table_evidence(&hp->access))
		rank_by_access(hp, hp->head, hp->nr_head);
	if (hp->nr_head && hp->o.budget)
		fit_budget(hp, hp->head, hp->nr_head);
	for (i = 1; i < hp->nr_ranks && cmp_rank(&hp->ranks[i - 1], &hp->ranks[i]) < 0; i++)
		;
	if (i < hp->nr_ranks)        /* many regions alike are in order already: qsort would copy them whole */
		qsort(hp->ranks, hp->nr_ranks, sizeof(*hp->ranks), cmp_rank);
	*n = hp->nr_head + hp->nr_ranks;
	return 0;
}

MS_EXPORT const struct ms_huge_advice *ms_hugepages_advice_at(struct ms_hugepages *hp, size_t i)
{
	const struct rank *k;
	size_t n;

	if (!hp->as || i >= hp->nr_head + hp->nr_ranks)
		return NULL;
	if (i < hp->nr_head)
		return &hp->head[i];
	k = &hp->ranks[i - hp->nr_head];
	for (n = 1; k->at + n < hp->spans.len && hp->spans.t[k->at + n].key >> 32 == (uint64_t)k->id + 1; n++)
		;
	advise(hp, hp->as, ms_aspace_region(hp->as, k->id), hp->spans.t + k->at, n, hp->end_ns, &hp->one,
	       hp->one_reason);
	if (ms_access_table_evidence(&hp->access))
		hp->one.hot_bytes = k->key;
	return &hp->one;
}

MS_EXPORT int ms_hugepages_advice(struct ms_hugepages *hp, const struct ms_aspace *as, uint64_t end_ns,
				  const struct ms_huge_advice **out, size_t *n)
{
	size_t nr, i;
	int err;

	if ((err = ms_hugepages_sort(hp, as, end_ns, &nr)))
		return err;
	if (!(hp->advice = calloc(nr ? nr : 1, sizeof(*hp->advice))))
		goto nomem;
	for (i = 0; i < nr; i++) {
		hp->advice[i] = *ms_hugepages_advice_at(hp, i);
		/* The reasons of regions not advised are mostly one of a few texts: each is kept once. */
		if (i >= hp->nr_head && !(hp->advice[i].reason = ms_strpool_intern(&hp->reasons, hp->one_reason)))
			goto nomem;
	}
	*out = hp->advice;
	*n = nr;
	return 0;
nomem:
	advice_release(hp);
	return -ENOMEM;
}

MS_EXPORT bool ms_hugepages_have_tlb(const struct ms_hugepages *hp)
{
	return hp->have_tlb;
}

MS_EXPORT void ms_hugepages_free(struct ms_hugepages *hp)
{
	if (!hp)
		return;
	advice_release(hp);
	ms_hugespans_release(&hp->spans);
	free(hp->flags);
	ms_access_table_release(&hp->access);
	free(hp);
}
