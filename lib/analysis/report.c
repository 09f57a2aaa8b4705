/* Samples, pages and times per region. Memory grows with regions and distinct pages only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/report.h>

#include "util/log.h"
#include "util/u64set.h"

struct stat {
	uint64_t samples, pages, first, last;
};

struct ms_report {
	uint64_t from, to;
	struct stat *st;          /* [0]: unmapped; [id + 1]: region id */
	size_t cap;
	struct ms_u64set pages;   /* (slot << 36) | page number */
	uint64_t total;
	int error;
};

MS_EXPORT struct ms_report *ms_report_new(uint64_t from_ns, uint64_t to_ns)
{
	struct ms_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->from = from_ns;
	rep->to = to_ns;
	ms_u64set_init(&rep->pages);
	return rep;
}

MS_EXPORT void ms_report_set_window(struct ms_report *rep, uint64_t from_ns, uint64_t to_ns)
{
	rep->from = from_ns;
	rep->to = to_ns;
}

static struct stat *slot(struct ms_report *rep, size_t i)
{
	size_t cap;
	struct stat *grown;

	if (i >= rep->cap) {
		cap = rep->cap ? rep->cap : 256;
		while (cap <= i)
			cap *= 2;
		grown = realloc(rep->st, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + rep->cap, 0, (cap - rep->cap) * sizeof(*grown));
		rep->st = grown;
		rep->cap = cap;
	}
	return &rep->st[i];
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_report *rep = ctx;
	size_t i = r ? r->id + 1 : 0;
	struct stat *s;
	int added;

	if (ev->time < rep->from || ev->time > rep->to)
		return;
	s = slot(rep, i);
	if (!s) {
		rep->error = -ENOMEM;
		return;
	}
	if (!s->samples++)
		s->first = ev->time;
	s->last = ev->time;
	rep->total++;
	added = ms_u64set_add(&rep->pages, ((uint64_t)i << 36) | (ev->sample.addr >> 12 & ((1ULL << 36) - 1)));
	if (added > 0)
		s->pages++;
	else if (added < 0)
		rep->error = added;
}

MS_EXPORT void ms_report_attach(struct ms_report *rep, struct ms_aspace *as)
{
	struct ms_aspace_listener l = { .charge = on_charge };

	ms_aspace_set_listener(as, &l, rep);
}

MS_EXPORT uint64_t ms_report_total(const struct ms_report *rep)
{
	return rep->total;
}

static const enum ms_report_key *sort_keys;
static size_t sort_nr;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct ms_report_row *a = pa, *b = pb;
	size_t k;
	int c = 0;

	for (k = 0; k < sort_nr && !c; k++) {
		switch (sort_keys[k]) {
		case MS_SORT_SAMPLES: c = cmp_u64(b->samples, a->samples); break;
		case MS_SORT_PAGES: c = cmp_u64(b->pages, a->pages); break;
		case MS_SORT_PID: c = cmp_u64(a->region->pid, b->region->pid); break;
		case MS_SORT_KIND: c = (int)a->region->kind - (int)b->region->kind; break;
		case MS_SORT_NAME: c = strcmp(a->region->name, b->region->name); break;
		case MS_SORT_REGION:
			c = cmp_u64(a->region->pid, b->region->pid);
			if (!c)
				c = cmp_u64(a->region->start, b->region->start);
			break;
		}
	}
	/* Ties: a fixed order, so output is the same on every run. */
	if (!c)
		c = cmp_u64(a->region->id, b->region->id);
	return c;
}

MS_EXPORT int ms_report_rows(struct ms_report *rep, const struct ms_aspace *as,
			     const enum ms_report_key *keys, size_t nr_keys,
			     struct ms_report_row **rows, size_t *nr_rows, struct ms_report_row *unmapped)
{
	size_t n = ms_aspace_nr_regions(as), i;
	struct ms_report_row *out;
	struct stat zero = { 0 }, *s;

	if (rep->error)
		return rep->error;
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s = i + 1 < rep->cap ? &rep->st[i + 1] : &zero;
		out[i] = (struct ms_report_row){ ms_aspace_region(as, i), s->samples, s->pages, s->first, s->last };
	}
	sort_keys = keys;
	sort_nr = nr_keys;
	qsort(out, n, sizeof(*out), cmp_rows);
	s = rep->cap ? &rep->st[0] : &zero;
	*unmapped = (struct ms_report_row){ NULL, s->samples, s->pages, s->first, s->last };
	*rows = out;
	*nr_rows = n;
	return 0;
}

MS_EXPORT void ms_report_free(struct ms_report *rep)
{
	if (!rep)
		return;
	ms_u64set_release(&rep->pages);
	free(rep->st);
	free(rep);
}
