/*
 * The code symbols under each region row: samples counted per (region,
 * symbol, binary) as they come, and at the end each row's top N. Most
 * regions have one symbol: the first of each is counted in an array by
 * region, with no hashing, and only the others in a hash table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/children.h"
#include "util/grow.h"

/* Counts n samples of code symbol in region (id + 1), after the first (ms_children_count()). */
static int count_more(struct ms_children *cs, uint64_t region, const char *symbol, const char *dso, uint64_t n)
{
	struct child *old = cs->t, *c;
	size_t i, j, cap = cs->cap;
	uint64_t k;

	if (cap && (c = &cs->t[cs->last])->region == region && c->symbol == symbol && c->dso == dso) {
		c->samples += n;          /* the child of the sample before */
		return 0;
	}
	if ((cs->len + 1) * 2 > cs->cap) {
		cs->cap = cap ? 2 * cap : 256;
		cs->t = calloc(cs->cap, sizeof(*cs->t));
		if (!cs->t) {
			cs->t = old;
			cs->cap = cap;
			return -ENOMEM;
		}
		for (i = 0; i < cap; i++) {
			if (!old[i].region)
				continue;
			k = old[i].region * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)old[i].symbol;
			for (j = (size_t)(k ^ k >> 29) & (cs->cap - 1); cs->t[j].region;
			     j = (j + 1) & (cs->cap - 1))
				;
			cs->t[j] = old[i];
		}
		free(old);
	}
	k = region * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)symbol;
	for (j = (size_t)(k ^ k >> 29) & (cs->cap - 1); (c = &cs->t[j])->region;
	     j = (j + 1) & (cs->cap - 1))
		if (c->region == region && c->symbol == symbol && c->dso == dso) {
			c->samples += n;
			cs->last = j;
			return 0;
		}
	*c = (struct child){ region, symbol, dso, n };
	cs->len++;
	cs->last = j;
	return 0;
}

/*
 * Counts n samples of code symbol in region (id + 1). Most regions have
 * one symbol: the first is counted in an array by region, with no
 * hashing, and only the others in the table.
 */
int ms_children_count(struct ms_children *cs, uint64_t region, const char *symbol, const char *dso, uint64_t n)
{
	struct child *c;

	if (region >= cs->fcap && MS_GROW(cs->first, region + 1, cs->fcap, 256, SIZE_MAX, true))
		return -ENOMEM;
	c = &cs->first[region];
	if (!c->region)
		*c = (struct child){ region, symbol, dso, n };
	else if (c->symbol == symbol && c->dso == dso)
		c->samples += n;
	else
		return count_more(cs, region, symbol, dso, n);
	return 0;
}


static int name_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/*
 * Whether child c goes before row child d: more samples first, then by
 * symbol and binary name, so that ties come out the same every run (the
 * table's order follows string addresses, which move from run to run).
 */
static bool child_before(const struct child *c, const struct ms_report_child *d)
{
	int k;

	if (c->samples != d->samples)
		return c->samples > d->samples;
	k = name_cmp(c->symbol, d->symbol);
	return k ? k < 0 : name_cmp(c->dso, d->dso) < 0;
}

/* Inserts c among row's children (at most nc, kept sorted). */
static void add_child(struct ms_report_row *row, struct ms_report_child *kids, int nc, const struct child *c)
{
	int k, at;

	for (at = row->nr_children; at > 0 && child_before(c, &kids[at - 1]); at--)
		;
	if (at >= nc)
		return;
	for (k = row->nr_children < nc ? row->nr_children : nc - 1; k > at; k--)
		kids[k] = kids[k - 1];
	kids[at] = (struct ms_report_child){ c->symbol, c->dso, c->samples };
	if (row->nr_children < nc)
		row->nr_children++;
}

/* Child i of all: the first ones by region, then the table's (empty slots: region 0). */
static const struct child *nth_child(const struct ms_children *cs, size_t i)
{
	return i < cs->fcap ? &cs->first[i] : &cs->t[i - cs->fcap];
}

/* The row of region id + 1, c->region, or NULL. */
static struct ms_report_row *child_row(struct ms_report_row *rows, const size_t *by_region, size_t nr_regions,
				       const struct child *c)
{
	return c->region && c->region <= nr_regions && by_region[c->region] ? &rows[by_region[c->region] - 1] : NULL;
}

/*
 * Top code symbols under each region row, kept sorted as the table's
 * children are inserted: first counted, so that each row has room for
 * what it will hold and no more (most regions have one symbol or none).
 * 0 or -ENOMEM.
 */
int ms_children_fill(const struct ms_children *cs, struct ms_report_row *rows, size_t n, size_t nr_regions, int nc,
		     struct ms_report_child **kids)
{
	size_t *by_region = calloc(nr_regions + 1, sizeof(*by_region));   /* region id + 1 -> row + 1 */
	size_t i, total = 0;
	struct ms_report_row *row;

	if (!by_region)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (rows[i].region)
			by_region[rows[i].region->id + 1] = i + 1;
	for (i = 0; i < cs->fcap + cs->cap; i++)     /* each row's count, for now in nr_children */
		if ((row = child_row(rows, by_region, nr_regions, nth_child(cs, i))) && row->nr_children < nc) {
			row->nr_children++;
			total++;
		}
	*kids = calloc(total ? total : 1, sizeof(**kids));
	if (!*kids) {
		free(by_region);
		return -ENOMEM;
	}
	for (i = 0, total = 0; i < n; i++) {
		rows[i].children = *kids + total;
		total += (size_t)rows[i].nr_children;
	}
	for (i = 0; i < n; i++)
		rows[i].nr_children = 0;
	for (i = 0; i < cs->fcap + cs->cap; i++)
		if ((row = child_row(rows, by_region, nr_regions, nth_child(cs, i))))
			add_child(row, (struct ms_report_child *)row->children, nc, nth_child(cs, i));
	free(by_region);
	return 0;
}

void ms_children_release(struct ms_children *cs)
{
	free(cs->first);
	free(cs->t);
	memset(cs, 0, sizeof(*cs));
}
