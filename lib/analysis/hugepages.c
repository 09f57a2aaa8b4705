/*
 * Per (region, 2 MiB span): a 512-bit page map and counters, in one hash
 * table. Advice is computed at the end from those and the region's life.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include <mapscope/hugepages.h>

#include "util/grow.h"
#include "util/hash.h"
#include "util/log.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define REASON_MAX 256

struct span {
	uint64_t key;             /* (region id + 1) << 32 | the span's index (address / 2 MiB); 0: empty */
	uint64_t bits[8];
	uint32_t pages;
	uint64_t faults, samples, tlb;
};

struct ms_hugepages {
	struct ms_hugepages_opts o;
	struct span *t;
	size_t cap, len;
	unsigned char *flags;     /* per region: 1 hugepage advised already, 2 nohugepage */
	size_t cap_flags;
	bool have_tlb;
	int error;
	/* The last ms_hugepages_advice(), lent to the caller until the next or ms_hugepages_free(). */
	struct ms_huge_advice *advice;
	char (*reasons)[REASON_MAX];    /* advice[i].reason's text, one buffer each */
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
	if (!hp->o.min_benefit)
		hp->o.min_benefit = 1;
	if (!hp->o.min_life_ns)
		hp->o.min_life_ns = 10000000;
	return hp;
}

static struct span *find(struct ms_hugepages *hp, uint64_t key, bool create)
{
	struct span *old = hp->t;
	size_t cap = hp->cap, i, j;

	if (create && (hp->len + 1) * 2 > hp->cap) {
		hp->cap = cap ? 2 * cap : 256;
		hp->t = calloc(hp->cap, sizeof(*hp->t));
		if (!hp->t) {
			hp->t = old;
			hp->cap = cap;
			return NULL;
		}
		for (i = 0; i < cap; i++) {
			if (!old[i].key)
				continue;
			for (j = ms_hash64(old[i].key, hp->cap); hp->t[j].key; j = (j + 1) & (hp->cap - 1))
				;
			hp->t[j] = old[i];
		}
		free(old);
	}
	if (!hp->cap)
		return NULL;
	for (i = ms_hash64(key, hp->cap); hp->t[i].key; i = (i + 1) & (hp->cap - 1))
		if (hp->t[i].key == key)
			return &hp->t[i];
	if (!create)
		return NULL;
	hp->t[i].key = key;
	hp->len++;
	return &hp->t[i];
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
	struct span *s = find(hp, ((uint64_t)r->id + 1) << 32 | (idx & 0xffffffffULL), true);

	if (!s)
		hp->error = -ENOMEM;
	return s;
}

/* One sample at addr in span s: its page, and whether it was a fault or a TLB miss. */
static inline void count(struct ms_hugepages *hp, struct span *s, uint64_t addr, bool fault, bool tlb)
{
	uint64_t page = (addr % MS_HUGE_SPAN) >> 12;

	if (!(s->bits[page / 64] >> (page % 64) & 1)) {
		s->bits[page / 64] |= 1ULL << (page % 64);
		s->pages++;
	}
	s->samples++;
	s->faults += fault;
	if (tlb) {
		s->tlb++;
		hp->have_tlb = true;
	}
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_hugepages *hp = ctx;
	struct span *s;

	if (!r || !candidate(r) || !(s = span_of(hp, r, ev->sample.addr)))
		return;
	count(hp, s, ev->sample.addr, ev->sample.fault, ms_event_tlb_miss(ev));
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
			count(hp, s, addr, ev->sample.fault, ms_event_tlb_miss(ev));
			continue;
		}
		if (run->data_src >= 0)
			dsrc = ms_samples_u64(run, i, (size_t)run->data_src);
		count(hp, s, addr, run->proto->sample.fault, ms_data_src_tlb_miss(dsrc));
	}
}

static void note(struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_event *ev);

static int on_event(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	note(ctx, ms_session_aspace(s), ev);
	return 0;
}

MS_EXPORT const struct ms_analysis ms_hugepages_analysis = {
	.name = "hugepages", .event = on_event, .charge = on_charge, .charge_run = on_charge_run,
};

/*
 * mremap moved [old_start, old_end) of region r to new_start: the pages
 * touched there go with the memory, into the spans of its new home, and
 * their counts in proportion. The advice then follows the memory, not the
 * address. Spans made while moving may move the table: the moves are
 * gathered first.
 */
static void follow_remap(struct ms_hugepages *hp, const struct ms_region *r, const struct ms_event *ev)
{
	uint64_t os = ev->remap.old_start, oe = ev->remap.old_end, delta = ev->remap.new_start - os;
	uint64_t idx, first = os / MS_HUGE_SPAN, last = (oe - 1) / MS_HUGE_SPAN, addr, b, key;
	uint64_t *moved = NULL, f, sm, tl, share[3] = { 0, 0, 0 };
	size_t nmoved = 0, cap = 0;
	struct span *s, *t;
	uint32_t page, before;

	if (oe <= os || delta == 0 || last - first > hp->len + 1)
		return;              /* no move, or a range larger than every span there is */
	for (idx = first; idx <= last; idx++) {
		s = find(hp, ((uint64_t)r->id + 1) << 32 | (idx & 0xffffffffULL), false);
		if (!s || !s->pages)
			continue;
		before = s->pages;
		for (page = 0; page < 512; page++) {
			addr = idx * MS_HUGE_SPAN + (uint64_t)page * 4096;
			if (addr < os || addr >= oe || !(s->bits[page / 64] >> (page % 64) & 1))
				continue;
			if (MS_GROW(moved, nmoved + 1, cap, 512, SIZE_MAX, false)) {
				hp->error = -ENOMEM;
				free(moved);
				return;
			}
			moved[nmoved++] = addr + delta;
			s->bits[page / 64] &= ~(1ULL << (page % 64));
			s->pages--;
		}
		/* The counts go with the pages, in proportion. */
		f = s->faults * (before - s->pages) / before;
		sm = s->samples * (before - s->pages) / before;
		tl = s->tlb * (before - s->pages) / before;
		s->faults -= f, s->samples -= sm, s->tlb -= tl;
		share[0] += f, share[1] += sm, share[2] += tl;
	}
	for (b = 0; b < nmoved; b++) {
		key = ((uint64_t)r->id + 1) << 32 | ((moved[b] / MS_HUGE_SPAN) & 0xffffffffULL);
		if (!(t = find(hp, key, true))) {
			hp->error = -ENOMEM;
			break;
		}
		page = (uint32_t)((moved[b] % MS_HUGE_SPAN) >> 12);
		if (!(t->bits[page / 64] >> (page % 64) & 1)) {
			t->bits[page / 64] |= 1ULL << (page % 64);
			t->pages++;
		}
		if (b == 0) {            /* the counts, with the first page moved */
			t->faults += share[0];
			t->samples += share[1];
			t->tlb += share[2];
		}
	}
	free(moved);
}

/* Each event before the model applies it: hugepage madvise calls are noted, and memory that moves. */
static void note(struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_event *ev)
{
	const struct ms_region *r;

	if (ev->kind == MS_EV_REMAP) {
		r = ms_aspace_lookup(as, ev->pid, ev->remap.old_start);
		if (r && candidate(r))
			follow_remap(hp, r, ev);
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
	uint64_t dense_pages, dense_tlb;
	uint64_t best_at, best_len;   /* the longest run of dense spans the region holds at the end */
	uint32_t best, dense;         /* the most pages touched in one span; the dense spans */
};

/*
 * Sums region r's spans sp[0, n), in address order, into a and t: only
 * the spans that were touched are visited, so the work is linear in them
 * whatever the region's size. Pages, faults, samples and TLB misses are
 * the region's whole life (pages that mremap moved went with the memory:
 * follow_remap). Where to advise comes from the longest run of dense
 * spans the region holds at the end, so that an action never covers
 * memory it no longer has, nor a hole another region took.
 */
static void sum_spans(const struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_region *r,
		      struct span *const *sp, size_t n, struct ms_huge_advice *a, struct tally *t)
{
	uint64_t at, idx, prev = 0, run_at = 0, run_len = 0;
	const struct span *s;
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		s = sp[i];
		a->pages += s->pages;
		a->faults += s->faults;
		a->samples += s->samples;
		a->tlb_misses += s->tlb;
		if (s->pages > t->best)
			t->best = s->pages;
		if (s->pages < hp->o.min_pages) {
			run_len = 0;
			continue;
		}
		t->dense++;
		t->dense_pages += s->pages;
		t->dense_tlb += s->tlb;
		idx = s->key & 0xffffffffULL;
		at = idx * MS_HUGE_SPAN;
		if (!r->alive || !ms_aspace_holds(as, r->pid, r->id, at, at + MS_HUGE_SPAN)) {
			run_len = 0;
			continue;
		}
		if (run_len && idx == prev + 1)
			run_len++;
		else {
			run_at = at;
			run_len = 1;
		}
		prev = idx;
		if (run_len > t->best_len) {
			t->best_at = run_at;
			t->best_len = run_len;
		}
	}
}

/*
 * Whether a is advised, and why, in reason (REASON_MAX bytes): the first
 * objection in order, or the case for it. A region dense while it lived
 * and gone by the end is advised with no range: for where it is made.
 */
static void judge(const struct ms_hugepages *hp, const struct ms_region *r, const struct tally *t,
		  uint64_t life, struct ms_huge_advice *a, char *reason)
{
	unsigned char flags = r->id < hp->cap_flags ? hp->flags[r->id] : 0;

	if (!a->aligned_spans && !t->dense)
		snprintf(reason, REASON_MAX, "not 2 MiB-alignable: no whole 2 MiB-aligned span lies "
			 "inside its %llu KiB", (unsigned long long)((r->end - r->start) >> 10));
	else if (flags == F_NOHUGE)
		snprintf(reason, REASON_MAX, "VM_NOHUGEPAGE: the program asked for no hugepages "
			 "(madvise MADV_NOHUGEPAGE)");
	else if (flags == F_HUGE)
		snprintf(reason, REASON_MAX, "already huge: madvise(MADV_HUGEPAGE) or MADV_COLLAPSE "
			 "was applied to it");
	else if (life < hp->o.min_life_ns)
		snprintf(reason, REASON_MAX, "too short-lived: it lived %.3f ms", (double)life / 1e6);
	else if (!t->dense)
		snprintf(reason, REASON_MAX, "too sparse: at most %u of 512 pages touched in any 2 MiB "
			 "span (%u needed)", t->best, hp->o.min_pages);
	else if (a->benefit < hp->o.min_benefit)
		snprintf(reason, REASON_MAX, "benefit too small: %llu (minimum %llu)",
			 (unsigned long long)a->benefit, (unsigned long long)hp->o.min_benefit);
	else {
		a->advised = true;
		if (t->best_len) {
			a->start = t->best_at;
			a->end = t->best_at + t->best_len * MS_HUGE_SPAN;
		}
		snprintf(reason, REASON_MAX, "dense: %u of %u spans with %llu pages touched on "
			 "average; saves %llu faults and %llu TLB entries%s", t->dense, a->aligned_spans,
			 (unsigned long long)(t->dense_pages / t->dense), (unsigned long long)a->faults_saved,
			 (unsigned long long)(a->tlb_entries_now - a->tlb_entries_huge),
			 t->best_len ? "" : !r->alive ? "; gone by the end: advise it where it is made" :
			 "; none of it is where it was dense any more: advise it where it is made");
	}
}

/* The advice for region r from its spans sp[0, n), in address order; its reason goes in reason. */
static void advise(struct ms_hugepages *hp, const struct ms_aspace *as, const struct ms_region *r,
		   struct span *const *sp, size_t n, uint64_t end_ns, struct ms_huge_advice *a, char *reason)
{
	uint64_t first = (r->start + MS_HUGE_SPAN - 1) & ~(MS_HUGE_SPAN - 1);
	uint64_t last = r->end & ~(MS_HUGE_SPAN - 1), spans;
	struct tally t;

	memset(a, 0, sizeof(*a));
	a->region = r;
	a->reason = reason;
	spans = last > first ? (last - first) / MS_HUGE_SPAN : 0;
	a->aligned_spans = spans > UINT32_MAX ? UINT32_MAX : (uint32_t)spans;
	sum_spans(hp, as, r, sp, n, a, &t);
	a->spans = t.dense;
	a->faults_saved = t.dense ? t.dense_pages - t.dense : 0;
	a->tlb_entries_now = t.dense ? t.dense_pages : 0;
	a->tlb_entries_huge = t.dense;
	a->benefit = a->faults_saved + (t.dense ? t.dense_tlb : 0);
	judge(hp, r, &t, (r->ended_ns ? r->ended_ns : end_ns) - r->created_ns, a, reason);
	if (!a->advised)
		a->start = a->end = 0;
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = *(struct span *const *)pa, *b = *(struct span *const *)pb;

	return a->key < b->key ? -1 : a->key > b->key;
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

/* The advice of the last ms_hugepages_advice(), released. */
static void advice_release(struct ms_hugepages *hp)
{
	free(hp->advice);
	free(hp->reasons);
	hp->advice = NULL;
	hp->reasons = NULL;
}

MS_EXPORT int ms_hugepages_advice(struct ms_hugepages *hp, const struct ms_aspace *as, uint64_t end_ns,
				  const struct ms_huge_advice **out, size_t *n)
{
	size_t nr = ms_aspace_nr_regions(as), i, j, ns = 0, k = 0;
	struct span **sp;
	struct ms_huge_advice *v;
	uint64_t id;

	advice_release(hp);
	if (hp->error)
		return hp->error;
	/* The spans by region, then address: each region's lie together. */
	sp = malloc((hp->len ? hp->len : 1) * sizeof(*sp));
	v = hp->advice = calloc(nr ? nr : 1, sizeof(*v));
	hp->reasons = malloc((nr ? nr : 1) * sizeof(*hp->reasons));
	if (!sp || !v || !hp->reasons) {
		free(sp);
		advice_release(hp);
		return -ENOMEM;
	}
	for (i = 0; i < hp->cap; i++)
		if (hp->t[i].key && (hp->t[i].key >> 32) - 1 < nr)
			sp[ns++] = &hp->t[i];
	if (ns)
		qsort(sp, ns, sizeof(*sp), cmp_span);
	for (i = 0; i < ns; i = j) {
		id = sp[i]->key >> 32;
		for (j = i + 1; j < ns && sp[j]->key >> 32 == id; j++)
			;
		advise(hp, as, ms_aspace_region(as, (size_t)id - 1), sp + i, j - i, end_ns, &v[k], hp->reasons[k]);
		k++;
	}
	free(sp);
	if (k)
		qsort(v, k, sizeof(*v), cmp_advice);
	*out = v;
	*n = k;
	return 0;
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
	free(hp->t);
	free(hp->flags);
	free(hp);
}
