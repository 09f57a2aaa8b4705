/*
 * Samples, pages and times per region. Memory grows with regions and
 * distinct pages only. Distinct pages are bits in 2 MiB chunks (512 pages,
 * 64 bytes); accesses cluster, so each slot remembers its last chunk and
 * most samples set a bit without hashing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/report.h>
#include <mapscope/symbols.h>

#include "analysis/access.h"
#include "analysis/children.h"
#include "analysis/codememo.h"
#include "analysis/codenames.h"
#include "analysis/reportsites.h"
#include "aspace/samples.h"
#include "session/source.h"
#include "util/chunkmap.h"
#include "util/grow.h"
#include "util/log.h"

#define CHUNK_PAGES MS_CHUNK_PAGES

struct stat {
	uint64_t samples, pages, first, last;
	uint64_t last_chunk;      /* page / CHUNK_PAGES of the chunk used last, or UINT64_MAX: none yet */
	uint64_t one_page;        /* with no chunk yet: the page of the one sample */
	uint32_t last_idx;        /* its bitmap (an index: the bitmaps move as they grow) */
};

/* A group of samples when rows are not just regions. */
struct tuple {
	uint64_t region;          /* region id + 1, or 0 (unmapped, or not grouped) */
	const char *symbol, *dso, *daddr, *alloc;
};

struct ms_report {
	uint64_t from, to;            /* the session's window; 0, UINT64_MAX without one */
	unsigned int group;
	unsigned int want_children;   /* as asked; nr_children: kept, where the session has symbols */
	bool unnamed_empty;           /* rows of no samples and no access get no alloc (reportsites.h) */
	struct ms_symbols *syms;      /* the session's */
	int nr_children;
	struct tuple *tuples;     /* slot -> its group (slot 0 unused) */
	size_t nr_tuples, cap_tuples;
	uint32_t *tslots;         /* hash: tuple -> slot */
	size_t tcap;
	struct ms_children children;   /* (region, symbol) -> samples */
	struct ms_code_memo memo;      /* code addresses named (codememo.h) */
	struct ms_code_later later;    /* the children's code, named on the namer's thread (memo.later) */
	struct ms_code_names names;    /* their names, once the replay is over */
	struct ms_session *s;     /* its allocation sites */
	struct stat *st;          /* [0]: unmapped; [id + 1]: region id */
	size_t cap;
	struct ms_chunkmap chunks;   /* key: ms_chunk_key(slot, page) */
	uint64_t total;
	struct ms_access_table access;   /* ongoing access per region */
	int error;
	/* The last ms_report_sort(): the rows' slots in order, and the model they name. */
	uint32_t *order;
	size_t nr_order;
	const struct ms_aspace *as;
	/* Lent to the caller: the last ms_report_row(), and the last ms_report_rows() (rows, their children). */
	struct ms_report_row one;
	struct ms_report_child one_kids[MS_REPORT_MAX_CHILDREN];
	struct ms_report_row *rows;
	struct ms_report_child *kids;
	struct ms_report_row unmapped;
};

MS_EXPORT struct ms_report *ms_report_new(const struct ms_report_opts *opts)
{
	struct ms_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->to = UINT64_MAX;
	rep->group = opts && opts->group ? opts->group : MS_GROUP_REGION;
	if (opts)
		rep->want_children = opts->children > MS_REPORT_MAX_CHILDREN ? MS_REPORT_MAX_CHILDREN :
					opts->children;
	return rep;
}

static struct stat * __attribute__((noinline)) slot_grow(struct ms_report *rep, size_t i)
{
	size_t k = rep->cap;

	if (MS_GROW(rep->st, i + 1, rep->cap, 256, SIZE_MAX, true))
		return NULL;
	for (; k < rep->cap; k++)
		rep->st[k].last_chunk = UINT64_MAX;
	return &rep->st[i];
}

static inline struct stat *slot(struct ms_report *rep, size_t i)
{
	return i < rep->cap ? &rep->st[i] : slot_grow(rep, i);
}

static size_t tuple_hash(const struct tuple *t, size_t cap)
{
	uint64_t k = t->region * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)t->symbol * 31 ^
		     (uint64_t)(uintptr_t)t->dso * 131 ^ (uint64_t)(uintptr_t)t->daddr * 1031 ^
		     (uint64_t)(uintptr_t)t->alloc * 8191;

	k ^= k >> 31;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 29;
	return (size_t)k & (cap - 1);
}

static int tuple_grow(struct ms_report *rep)
{
	size_t cap = rep->tcap ? 2 * rep->tcap : 256, i, j;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 1; i < rep->nr_tuples; i++) {
		for (j = tuple_hash(&rep->tuples[i], cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = (uint32_t)i;
	}
	free(rep->tslots);
	rep->tslots = slots;
	rep->tcap = cap;
	return 0;
}

/* The slot of a group, made if new; 0 on ENOMEM. */
static size_t tuple_slot(struct ms_report *rep, const struct tuple *t)
{
	size_t j;

	if (!rep->nr_tuples)
		rep->nr_tuples = 1;           /* slot 0 is "unmapped", in every mode */
	if ((rep->nr_tuples + 1) * 2 > rep->tcap && tuple_grow(rep))
		return 0;
	for (j = tuple_hash(t, rep->tcap); rep->tslots[j]; j = (j + 1) & (rep->tcap - 1))
		if (!memcmp(&rep->tuples[rep->tslots[j]], t, sizeof(*t)))
			return rep->tslots[j];
	if (MS_GROW(rep->tuples, rep->nr_tuples + 1, rep->cap_tuples, 256, SIZE_MAX, false))
		return 0;
	rep->tuples[rep->nr_tuples] = *t;
	rep->tslots[j] = (uint32_t)rep->nr_tuples;
	return rep->nr_tuples++;
}

/* Counts n samples of code symbol in region (id + 1). */
static void count_child(struct ms_report *rep, uint64_t region, const char *symbol, const char *dso, uint64_t n)
{
	if (dso == ms_code_later_tag ? ms_children_count_later(&rep->children, region, symbol, dso, n) :
				       ms_children_count(&rep->children, region, symbol, dso, n))
		rep->error = -ENOMEM;
}

static size_t __attribute__((noinline)) group_slot(struct ms_report *rep, const struct ms_event *ev,
						 const struct ms_region *r)
{
	struct tuple t = { 0 };
	const char *symbol = NULL, *dso = NULL, *ddso;

	if (rep->syms && (rep->nr_children || (rep->group & (MS_GROUP_SYMBOL | MS_GROUP_DSO))))
		symbol = ms_code_memo_name(&rep->memo, rep->syms, ev->pid, ev->sample.ip, &dso);
	if (rep->nr_children && r)
		count_child(rep, r->id + 1, symbol, dso, 1);
	if (rep->group == MS_GROUP_REGION)
		return r ? r->id + 1 : 0;
	if (rep->group & MS_GROUP_REGION)
		t.region = r ? r->id + 1 : 0;
	if (rep->group & MS_GROUP_SYMBOL)
		t.symbol = symbol ? symbol : "[unknown]";
	if (rep->group & MS_GROUP_DSO)
		t.dso = dso ? dso : "[unknown]";
	if (rep->group & MS_GROUP_DADDR)
		t.daddr = rep->syms ? ms_code_name(rep->syms, ev->pid, ev->sample.addr, &ddso) : "[unknown]";
	if (rep->group & MS_GROUP_ALLOC && !(t.alloc = ms_session_alloc_site(rep->s, r)))
		t.alloc = "[unknown]";
	return tuple_slot(rep, &t);
}

/* Marks page in s's current chunk (count_pages() counts the marks at the end). */
static inline void mark_page(struct ms_report *rep, struct stat *s, uint64_t page)
{
	rep->chunks.bits[s->last_idx][page % CHUNK_PAGES / 64] |= 1ULL << (page % 64);
}

/* Makes page's chunk slot s's current one (finding or making its bitmap), then marks page. */
static int set_chunk(struct ms_report *rep, struct stat *s, size_t i, uint64_t page)
{
	int64_t idx = ms_chunkmap_bits(&rep->chunks, ms_chunk_key(i, page));

	if (idx < 0) {
		rep->error = (int)idx;
		return (int)idx;
	}
	s->last_chunk = page / CHUNK_PAGES;
	s->last_idx = (uint32_t)idx;
	mark_page(rep, s, page);
	return 0;
}

/*
 * A page outside slot s's current chunk. A slot's first sample makes no
 * bitmap: its page is kept in the slot (a region touched once, of
 * 500,000, costs no 64 bytes and no hash entry) until a second comes.
 */
static void __attribute__((noinline)) mark_page_new_chunk(struct ms_report *rep, struct stat *s, size_t i,
							   uint64_t page)
{
	if (s->last_chunk == UINT64_MAX && s->samples == 1) {
		s->one_page = page;
		return;
	}
	if (s->last_chunk == UINT64_MAX && set_chunk(rep, s, i, s->one_page))
		return;
	if (page / CHUNK_PAGES != s->last_chunk)
		set_chunk(rep, s, i, page);
	else
		mark_page(rep, s, page);
}

/* Counts a sample in slot i: samples, times, and its page among the distinct pages. */
static inline void count(struct ms_report *rep, struct stat *s, size_t i, uint64_t time, uint64_t addr)
{
	uint64_t page = addr >> 12;

	if (!s->samples++)
		s->first = time;
	s->last = time;
	rep->total++;
	if (page / CHUNK_PAGES != s->last_chunk)
		mark_page_new_chunk(rep, s, i, page);
	else
		mark_page(rep, s, page);
}

/* Rows grouped by more than the region, or a slot not made yet. */
static void __attribute__((noinline)) charge_slow(struct ms_report *rep, const struct ms_event *ev,
						  const struct ms_region *r)
{
	size_t i = group_slot(rep, ev, r);
	struct stat *s = slot(rep, i);

	if (!s) {
		rep->error = -ENOMEM;
		return;
	}
	count(rep, s, i, ev->time, ev->sample.addr);
	/* Grouped by more than the region, unmapped samples count in slot 0 as well: the unmapped row's, as by region. */
	if (!r && rep->group != MS_GROUP_REGION && (s = slot(rep, 0))) {
		count(rep, s, 0, ev->time, ev->sample.addr);
		rep->total--;
	}
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_report *rep = ctx;
	size_t i;

	if (ev->time < rep->from || ev->time > rep->to)
		return;
	/* Rows by region alone, the default: the slot is the region's. */
	i = r ? r->id + 1 : 0;
	if (rep->group != MS_GROUP_REGION || rep->nr_children || i >= rep->cap) {
		charge_slow(rep, ev, r);
		return;
	}
	count(rep, &rep->st[i], i, ev->time, ev->sample.addr);
}

/*
 * A run of samples, all in region r (so of one process), for the rows by
 * region: each stretch in one 2 MiB chunk goes through an inner loop that
 * reads the samples in place and marks their pages, and its counts are
 * added at its end (a run is in time order: its first and last sample give
 * the times). window: whether --time limits the samples (one outside ends
 * the stretch and is passed over); children: whether the code under each
 * row is counted (the symbol is looked up again only where the IP
 * changes). Inlined four ways, so that each loop tests only what it needs.
 */
static inline __attribute__((always_inline)) void charge_region_run(struct ms_report *rep,
								    const struct ms_samples *run,
								    const struct ms_region *r,
								    bool window, bool children)
{
	const unsigned char *at = run->base, *start, *const end = at + run->n * run->stride;
	const size_t stride = run->stride, oaddr = run->addr, otime = run->time, oip = run->ip;
	const size_t i = r->id + 1;
	const uint64_t wfrom = rep->from, wto = rep->to;
	const uint32_t pid = run->n ? ms_samples_pid(run, 0) : 0;
	/* The code of the samples before, counted at once: nothing moves symbols within a run. */
	const char *symbol = NULL, *dso = NULL;
	uint64_t cip = 0, cn = 0, ip, t, off, from, page, n, *row;
	struct ms_event tmp;
	struct stat *s;

	while (at < end) {
		memcpy(&t, at + otime, 8);
		if (window && (t < wfrom || t > wto)) {
			at += stride;
			continue;
		}
		memcpy(&page, at + oaddr, 8);
		page >>= 12;
		if (i >= rep->cap || page / CHUNK_PAGES != rep->st[i].last_chunk) {
			if (children && cn) {    /* the slow way counts its own child */
				count_child(rep, i, symbol, dso, cn);
				cn = 0;
			}
			on_charge(rep, ms_samples_event(run, (size_t)(at - run->base) / stride, &tmp), r);
			at += stride;
			continue;
		}
		s = &rep->st[i];
		from = page / CHUNK_PAGES * CHUNK_PAGES << 12;    /* where the chunk starts */
		row = rep->chunks.bits[s->last_idx];
		for (start = at; at < end; at += stride) {
			memcpy(&off, at + oaddr, 8);
			off -= from;
			if (off >= CHUNK_PAGES << 12)
				break;
			if (window) {
				memcpy(&t, at + otime, 8);
				if (t < wfrom || t > wto)
					break;
			}
			if (children) {          /* the code that touched it: a child of the region's row */
				memcpy(&ip, at + oip, 8);
				if (ip != cip || !cn) {
					if (cn)
						count_child(rep, i, symbol, dso, cn);
					cn = 0;
					cip = ip;
					symbol = ms_code_memo_name(&rep->memo, rep->syms, pid, ip, &dso);
				}
				cn++;
			}
			row[off >> 12 >> 6] |= 1ULL << (off >> 12 & 63);
		}
		n = (uint64_t)(at - start) / stride;
		if (!s->samples)
			memcpy(&s->first, start + otime, 8);
		memcpy(&s->last, at - stride + otime, 8);
		s->samples += n;
		rep->total += n;
	}
	if (cn)
		count_child(rep, i, symbol, dso, cn);
}

static void on_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_report *rep = ctx;
	const bool window = rep->from || rep->to != UINT64_MAX;
	struct ms_event tmp;
	size_t k;

	if (rep->group != MS_GROUP_REGION) {
		samples_begin(run, &tmp);
		for (k = 0; k < run->n; k++)
			on_charge(rep, samples_at(run, k, &tmp), r);
	} else if (rep->nr_children)
		window ? charge_region_run(rep, run, r, true, true) : charge_region_run(rep, run, r, false, true);
	else
		window ? charge_region_run(rep, run, r, true, false) : charge_region_run(rep, run, r, false, false);
}

/* The session's window, once its relative ends are known: the one window there is. */
static void on_start(void *ctx, struct ms_session *s)
{
	struct ms_report *rep = ctx;

	if (!ms_session_window(s, &rep->from, &rep->to)) {
		rep->from = 0;
		rep->to = UINT64_MAX;
	}
}

/* Before any sample: the session's symbols name code (children, groups by code) and alloc sites. */
static void on_begin(void *ctx, struct ms_session *s)
{
	struct ms_report *rep = ctx;
	struct ms_namer *n;

	rep->s = s;
	rep->syms = ms_session_symbols(s);
	rep->nr_children = rep->syms ? (int)rep->want_children : 0;
	if (!rep->memo.later && rep->nr_children && rep->group == MS_GROUP_REGION && (n = session_namer(s))) {
		ms_code_later_init_symbols(&rep->later, rep->syms, n);
		rep->memo.later = &rep->later;
	}
}

/* Ongoing access, within the session's window. */
static void on_access(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end)
{
	struct ms_report *rep = ctx;

	if (ev->time >= rep->from && ev->time <= rep->to)
		ms_access_table_charge(&rep->access, ev, r, start, end);
}

MS_EXPORT const struct ms_analysis ms_report_analysis = {
	.name = "report", .charge = on_charge, .charge_run = on_charge_run, .begin = on_begin,
	.start = on_start, .access = on_access,
};

MS_EXPORT const char *ms_report_access_evidence(const struct ms_report *rep)
{
	return ms_access_table_evidence(&rep->access);
}

/* A region row's figures of ongoing access. */
static void access_figures(struct ms_report *rep, struct ms_report_row *row)
{
	const struct ms_access_stat *a = row->region ? ms_access_table_get(&rep->access, row->region->id) : NULL;

	if (!a)
		return;
	row->access_intervals = a->intervals;
	row->ref_pages_mean = ms_access_ref_pages_mean(a);
	row->ref_pages_peak = ms_access_ref_pages_peak(a);
	row->accesses = a->accesses;
	row->hot_share = ms_access_hot_share(a);
}

void ms_report_unnamed_empty(struct ms_report *rep, bool yes)
{
	rep->unnamed_empty = yes;
}

MS_EXPORT uint64_t ms_report_total(const struct ms_report *rep)
{
	return rep->total;
}

/* The sort's keys and report, for cmp_slots() (qsort has no context). */
static const enum ms_report_key *sort_keys;
static size_t sort_nr;
static const struct ms_report *sort_rep;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Slot i's counts (zero where no sample made it), its region (or NULL) and its group. */
static const struct stat *slot_stat(const struct ms_report *rep, size_t i)
{
	static const struct stat zero = { 0 };

	return i < rep->cap ? &rep->st[i] : &zero;
}

static const struct ms_region *slot_region(const struct ms_report *rep, size_t i)
{
	if (rep->group == MS_GROUP_REGION)
		return ms_aspace_region(rep->as, i - 1);
	return rep->tuples[i].region ? ms_aspace_region(rep->as, rep->tuples[i].region - 1) : NULL;
}

/*
 * Rows in order, compared by their slots: the keys in turn, then a fixed
 * order (region id, then the group's names), so that output is the same
 * on every run. A row grouped without a region sorts as id UINT32_MAX.
 */
static int cmp_slots(const void *pa, const void *pb)
{
	const struct ms_report *rep = sort_rep;
	const uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct stat *a = slot_stat(rep, ia), *b = slot_stat(rep, ib);
	const struct ms_region none = { .id = UINT32_MAX, .name = "", .comm = "" };
	const struct ms_region *ra = slot_region(rep, ia), *rb = slot_region(rep, ib);
	const struct tuple *ta, *tb;
	size_t k;
	int c = 0;

	ra = ra ? ra : &none;
	rb = rb ? rb : &none;
	for (k = 0; k < sort_nr && !c; k++) {
		switch (sort_keys[k]) {
		case MS_SORT_SAMPLES: c = cmp_u64(b->samples, a->samples); break;
		case MS_SORT_PAGES: c = cmp_u64(b->pages, a->pages); break;
		case MS_SORT_PID: c = cmp_u64(ra->pid, rb->pid); break;
		case MS_SORT_KIND: c = (int)ra->kind - (int)rb->kind; break;
		case MS_SORT_NAME: c = strcmp(ra->name, rb->name); break;
		case MS_SORT_REGION:
			c = cmp_u64(ra->pid, rb->pid);
			if (!c)
				c = cmp_u64(ra->start, rb->start);
			break;
		}
	}
	if (!c)
		c = cmp_u64(ra->id, rb->id);
	if (c || rep->group == MS_GROUP_REGION)
		return c;
	ta = &rep->tuples[ia];
	tb = &rep->tuples[ib];
	if (!(c = cmp_str(ta->symbol, tb->symbol)) && !(c = cmp_str(ta->dso, tb->dso)) &&
	    !(c = cmp_str(ta->daddr, tb->daddr)))
		c = cmp_str(ta->alloc, tb->alloc);
	return c;
}

/* The words of a flat sort key, at most: a region key takes two, each other key one, the id one. */
#define FLAT_WORDS 8
static size_t flat_words;

static int cmp_flat(const void *pa, const void *pb)
{
	const uint64_t *a = pa, *b = pb;
	size_t k;

	for (k = 0; k < flat_words; k++)
		if (a[k] != b[k])
			return a[k] < b[k] ? -1 : 1;
	return 0;
}

/* A region's key words for keys (those sort_flat() counts) into o, in cmp_slots()'s order; its id last. */
static void flat_key(const struct stat *s, const struct ms_region *r, const enum ms_report_key *keys,
		     size_t nr_keys, uint64_t *o)
{
	size_t k;

	for (k = 0; k < nr_keys; k++) {
		switch (keys[k]) {
		case MS_SORT_SAMPLES: *o++ = ~s->samples; break;   /* most first */
		case MS_SORT_PAGES: *o++ = ~s->pages; break;
		case MS_SORT_PID: *o++ = r->pid; break;
		case MS_SORT_KIND: *o++ = (uint64_t)r->kind; break;
		case MS_SORT_REGION: *o++ = r->pid; *o++ = r->start; break;
		case MS_SORT_NAME: break;
		}
	}
	*o = r->id;
}

/* The most the flat keys may take: a report's memory stays what it was at 500,000 regions (e2e/scale-maps). */
#define FLAT_MAX_BYTES (1u << 20)

/*
 * The rows of regions in cmp_slots()'s order where no key is a name: each
 * row's keys written once as words that sort as plain memory, rather than
 * read through its region at each of the sort's n log n comparisons. false
 * where a key is a name or one flat_key() writes no word for (a caller's
 * newer header: cmp_slots() passes over it), rows are groups, the keys
 * would take more than FLAT_MAX_BYTES, or memory ran out: cmp_slots()
 * then.
 */
static bool sort_flat(struct ms_report *rep, const struct ms_aspace *as, const enum ms_report_key *keys,
		      size_t nr_keys, size_t n)
{
	size_t w = 1, k, i, m = 0, z = 0;
	bool counts_only = nr_keys > 0;    /* no key: the ids alone order every region */
	const struct stat *st;
	uint64_t *v;

	if (rep->group != MS_GROUP_REGION || !n)
		return false;
	for (k = 0; k < nr_keys; k++) {
		if (keys[k] == MS_SORT_REGION)
			w += 2;
		else if (keys[k] == MS_SORT_SAMPLES || keys[k] == MS_SORT_PAGES || keys[k] == MS_SORT_PID ||
			 keys[k] == MS_SORT_KIND)
			w++;
		else
			return false;
		counts_only &= keys[k] == MS_SORT_SAMPLES || keys[k] == MS_SORT_PAGES;
	}
	if (w > FLAT_WORDS || n > FLAT_MAX_BYTES / (w * sizeof(*v)) || !(v = malloc(n * w * sizeof(*v))))
		return false;
	/*
	 * Where every key is a count, a region with none has the greatest key
	 * words but its id: all such go last, in the order of their ids, put
	 * in from the end as the regions are met from the last. Only the
	 * others are sorted (a report of chromium's page load: 3,500 of 9,400
	 * regions have samples).
	 */
	for (i = n; i-- > 0;) {            /* region i's slot is i + 1, its id i */
		st = slot_stat(rep, i + 1);
		if (counts_only && !st->samples && !st->pages)
			rep->order[n - ++z] = (uint32_t)(i + 1);
		else
			flat_key(st, ms_aspace_region(as, i), keys, nr_keys, v + m++ * w);
	}
	flat_words = w;
	qsort(v, m, w * sizeof(*v), cmp_flat);
	for (i = 0; i < m; i++)
		rep->order[i] = (uint32_t)(v[i * w + w - 1] + 1);
	free(v);
	return true;
}

/*
 * Each slot's distinct pages: the bits set in its chunks' bitmaps. Counted
 * here, once, rather than tested for as each sample marks its page.
 */
static void count_pages(struct ms_report *rep)
{
	const struct ms_chunkmap *m = &rep->chunks;
	uint64_t slot, sum;
	size_t i, w;

	for (i = 0; i < rep->cap; i++)      /* a slot of one sample: its page, with no bitmap */
		rep->st[i].pages = rep->st[i].samples && rep->st[i].last_chunk == UINT64_MAX;
	for (i = 0; i < m->cap; i++) {
		if (m->keys[i].slot == UINT64_MAX)
			continue;
		slot = m->keys[i].slot;
		for (sum = 0, w = 0; w < CHUNK_PAGES / 64; w++)
			sum += (uint64_t)__builtin_popcountll(m->bits[m->idx[i]][w]);
		if (slot < rep->cap)
			rep->st[slot].pages += sum;
	}
}

/* The results of the last ms_report_sort() and ms_report_rows(), released. */
static void rows_release(struct ms_report *rep)
{
	free(rep->order);
	free(rep->rows);
	free(rep->kids);
	rep->order = NULL;
	rep->nr_order = 0;
	rep->rows = NULL;
	rep->kids = NULL;
	memset(&rep->unmapped, 0, sizeof(rep->unmapped));
}

/*
 * The row of slot i (its children in kids, room for nr_children), from its
 * counts and region or group; brief: its counts and access figures only.
 */
static void fill_row(struct ms_report *rep, size_t i, struct ms_report_row *row, struct ms_report_child *kids,
		     bool brief)
{
	const struct stat *s = slot_stat(rep, i);
	const struct tuple *t;

	*row = (struct ms_report_row){ .samples = s->samples, .pages = s->pages, .first_ns = s->first,
				       .last_ns = s->last };
	if (rep->group != MS_GROUP_REGION) {
		t = &rep->tuples[i];
		row->region = slot_region(rep, i);
		row->symbol = t->symbol;
		row->dso = t->dso;
		row->daddr_symbol = t->daddr;
		row->alloc = t->alloc;
		return;
	}
	row->region = slot_region(rep, i);
	access_figures(rep, row);
	if (brief)
		return;
	/* A row with nothing to say, where the caller prints none: its site is left unnamed (sites.h). */
	if (rep->s && !(rep->unnamed_empty && row->region && !row->samples && !row->access_intervals))
		row->alloc = ms_session_alloc_site(rep->s, row->region);
	if (rep->nr_children) {
		row->nr_children = ms_children_top(&rep->children, i, rep->nr_children, kids);
		row->children = kids;
	}
}

MS_EXPORT int ms_report_sort(struct ms_report *rep, const struct ms_aspace *as, const enum ms_report_key *keys,
			     size_t nr_keys, size_t *nr_rows)
{
	size_t n = rep->group == MS_GROUP_REGION ? ms_aspace_nr_regions(as) : rep->nr_tuples ? rep->nr_tuples - 1 : 0;
	size_t i;
	int err;

	rows_release(rep);
	*nr_rows = 0;
	if (rep->error || rep->access.error)
		return rep->error ? rep->error : rep->access.error;
	if (n >= UINT32_MAX)
		return -ENOMEM;
	count_pages(rep);
	ms_access_table_settle(&rep->access);
	if (rep->memo.later && ((err = rep->memo.later_error) || (err = ms_code_names_take(&rep->names, &rep->later)) ||
				(err = ms_children_settle(&rep->children, ms_code_names_rename, &rep->names))))
		return err;
	if (rep->nr_children && (err = ms_children_index(&rep->children, ms_aspace_nr_regions(as))))
		return err;
	if (!(rep->order = malloc((n ? n : 1) * sizeof(*rep->order))))
		return -ENOMEM;
	for (i = 0; i < n; i++)            /* region i's slot is i + 1; group slots start at 1 */
		rep->order[i] = (uint32_t)(i + 1);
	rep->as = as;
	rep->nr_order = n;
	if (!sort_flat(rep, as, keys, nr_keys, n)) {
		sort_keys = keys;
		sort_nr = nr_keys;
		sort_rep = rep;
		qsort(rep->order, n, sizeof(*rep->order), cmp_slots);
	}
	/* Slot 0 holds the samples no mapping held, in every mode. */
	rep->unmapped = (struct ms_report_row){ .samples = slot_stat(rep, 0)->samples,
			.pages = slot_stat(rep, 0)->pages, .first_ns = slot_stat(rep, 0)->first,
			.last_ns = slot_stat(rep, 0)->last };
	*nr_rows = n;
	return 0;
}

MS_EXPORT const struct ms_report_row *ms_report_row(struct ms_report *rep, size_t i)
{
	if (i >= rep->nr_order)
		return NULL;
	fill_row(rep, rep->order[i], &rep->one, rep->one_kids, false);
	return &rep->one;
}

MS_EXPORT const struct ms_report_row *ms_report_row_counts(struct ms_report *rep, size_t i)
{
	if (i >= rep->nr_order)
		return NULL;
	fill_row(rep, rep->order[i], &rep->one, rep->one_kids, true);
	return &rep->one;
}

MS_EXPORT const struct ms_report_row *ms_report_unmapped(const struct ms_report *rep)
{
	return &rep->unmapped;
}

/* The rows of the last ms_report_sort() made at once, and their children in one array. */
static int rows_all(struct ms_report *rep, size_t n)
{
	size_t i, nk = 0;

	if (!(rep->rows = calloc(n ? n : 1, sizeof(*rep->rows))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		rep->rows[i] = *ms_report_row(rep, i);
		rep->rows[i].children = NULL;
		nk += (size_t)rep->rows[i].nr_children;
	}
	if (!(rep->kids = calloc(nk ? nk : 1, sizeof(*rep->kids))))
		return -ENOMEM;
	for (i = 0, nk = 0; i < n; i++) {
		if (!rep->rows[i].nr_children)
			continue;
		rep->rows[i].children = rep->kids + nk;
		nk += (size_t)ms_children_top(&rep->children, rep->order[i], rep->nr_children, rep->kids + nk);
	}
	return 0;
}

MS_EXPORT int ms_report_rows(struct ms_report *rep, const struct ms_aspace *as,
			     const enum ms_report_key *keys, size_t nr_keys,
			     const struct ms_report_row **rows, size_t *nr_rows, const struct ms_report_row **unmapped)
{
	size_t n;
	int err;

	if ((err = ms_report_sort(rep, as, keys, nr_keys, &n)) || (err = rows_all(rep, n))) {
		rows_release(rep);
		return err;
	}
	*rows = rep->rows;
	*nr_rows = n;
	*unmapped = &rep->unmapped;
	return 0;
}

MS_EXPORT void ms_report_free(struct ms_report *rep)
{
	if (!rep)
		return;
	rows_release(rep);
	free(rep->tuples);
	free(rep->tslots);
	ms_children_release(&rep->children);
	ms_code_later_release(&rep->later);
	ms_code_names_release(&rep->names);
	ms_chunkmap_release(&rep->chunks);
	free(rep->st);
	ms_access_table_release(&rep->access);
	if (rep->memo.hits + rep->memo.misses)
		ms_debug("code names: %llu from the memo, %llu looked up", (unsigned long long)rep->memo.hits,
			 (unsigned long long)rep->memo.misses);
	free(rep);
}
