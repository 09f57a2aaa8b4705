/*
 * The code symbols under each region row: samples counted per (region,
 * symbol, binary) as they come, and each region's top N, as its row is
 * made. Most
 * regions have one symbol: the first of each is counted in an array by
 * region, with no hashing, and only the others in a hash table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/children.h"
#include "util/grow.h"
#include "util/hash.h"

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
			for (j = ms_hash64(k, cs->cap); cs->t[j].region;
			     j = (j + 1) & (cs->cap - 1))
				;
			cs->t[j] = old[i];
		}
		free(old);
	}
	k = region * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)symbol;
	for (j = ms_hash64(k, cs->cap); (c = &cs->t[j])->region;
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

/* Inserts c among the children kids[0, *nr) (at most nc, kept sorted). */
static void add_child(struct ms_report_child *kids, int *nr, int nc, const struct child *c)
{
	int k, at;

	for (at = *nr; at > 0 && child_before(c, &kids[at - 1]); at--)
		;
	if (at >= nc)
		return;
	for (k = *nr < nc ? *nr : nc - 1; k > at; k--)
		kids[k] = kids[k - 1];
	kids[at] = (struct ms_report_child){ c->symbol, c->dso, c->samples };
	if (*nr < nc)
		(*nr)++;
}

/*
 * The table's entries by region, for ms_children_top(): a counting sort
 * of their positions (stable: a region's come in table order), and where
 * each region's start. Nothing where the table is empty (a region of one
 * symbol each: the common case at scale).
 */
int ms_children_index(struct ms_children *cs, size_t nr_regions)
{
	uint32_t *off, *pos;
	size_t i;

	free(cs->off);
	free(cs->pos);
	cs->off = cs->pos = NULL;
	cs->nr_off = 0;
	if (!cs->len)
		return 0;
	if (nr_regions >= UINT32_MAX || cs->cap > UINT32_MAX)
		return -ENOMEM;
	off = calloc(nr_regions + 2, sizeof(*off));
	pos = malloc(cs->len * sizeof(*pos));
	if (!off || !pos) {
		free(off);
		free(pos);
		return -ENOMEM;
	}
	for (i = 0; i < cs->cap; i++)
		if (cs->t[i].region && cs->t[i].region <= nr_regions)
			off[cs->t[i].region + 1]++;
	for (i = 1; i < nr_regions + 2; i++)
		off[i] += off[i - 1];
	for (i = 0; i < cs->cap; i++)          /* off[r] ends at r's end: r's entries are [off[r - 1], off[r]) */
		if (cs->t[i].region && cs->t[i].region <= nr_regions)
			pos[off[cs->t[i].region]++] = (uint32_t)i;
	cs->off = off;
	cs->pos = pos;
	cs->nr_off = nr_regions + 2;
	return 0;
}

/*
 * The top nc code symbols of region (id + 1) into kids, most samples
 * first: its first symbol, then the table's (ms_children_index() made
 * since the last count). Their number.
 */
int ms_children_top(const struct ms_children *cs, uint64_t region, int nc, struct ms_report_child *kids)
{
	int nr = 0;
	uint32_t k;

	if (!region || nc <= 0)
		return 0;
	if (region < cs->fcap && cs->first[region].region)
		add_child(kids, &nr, nc, &cs->first[region]);
	if (region + 1 < cs->nr_off)
		for (k = cs->off[region - 1]; k < cs->off[region]; k++)
			add_child(kids, &nr, nc, &cs->t[cs->pos[k]]);
	return nr;
}

#define LATER_MIN (16u << 10)     /* entries kept in turn before they are first merged */

/*
 * The entries kept in turn, those of one (region, symbol, binary) merged
 * into the first, in the order they came: so that they stay within twice
 * the pairs there are, however many runs of samples. 0 or -ENOMEM.
 */
static int merge_later(struct ms_children *cs)
{
	size_t cap = 16, n = 0, i, j;
	struct child *c, *d;
	uint32_t *slot;
	uint64_t k;

	while (cap < 2 * cs->nr_later)
		cap *= 2;
	if (!(slot = calloc(cap, sizeof(*slot))))
		return -ENOMEM;
	for (i = 0; i < cs->nr_later; i++) {
		c = &cs->later[i];
		k = c->region * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)c->symbol;
		for (j = ms_hash64(k, cap); slot[j]; j = (j + 1) & (cap - 1)) {
			d = &cs->later[slot[j] - 1];
			if (d->region == c->region && d->symbol == c->symbol && d->dso == c->dso)
				break;
		}
		if (slot[j]) {
			cs->later[slot[j] - 1].samples += c->samples;
			continue;
		}
		cs->later[n] = *c;
		slot[j] = (uint32_t)++n;
	}
	free(slot);
	cs->nr_later = n;
	cs->later_limit = 2 * n > LATER_MIN ? 2 * n : LATER_MIN;
	return 0;
}

int ms_children_count_later(struct ms_children *cs, uint64_t region, const char *symbol, const char *dso,
			    uint64_t n)
{
	struct child *c = cs->nr_later ? &cs->later[cs->nr_later - 1] : NULL;
	int err;

	if (c && c->region == region && c->symbol == symbol && c->dso == dso) {
		c->samples += n;
		return 0;
	}
	if (cs->nr_later >= (cs->later_limit ? cs->later_limit : LATER_MIN) && cs->nr_later < UINT32_MAX &&
	    (err = merge_later(cs)))
		return err;
	if (MS_GROW(cs->later, cs->nr_later + 1, cs->cap_later, 1024, SIZE_MAX, false))
		return -ENOMEM;
	cs->later[cs->nr_later++] = (struct child){ region, symbol, dso, n };
	return 0;
}

int ms_children_settle(struct ms_children *cs, void (*rename)(void *ctx, const char **symbol, const char **dso),
		       void *ctx)
{
	const struct child *c;
	const char *symbol, *dso;
	size_t i;
	int err;

	for (i = 0; i < cs->nr_later; i++) {
		c = &cs->later[i];
		symbol = c->symbol;
		dso = c->dso;
		rename(ctx, &symbol, &dso);
		if ((err = ms_children_count(cs, c->region, symbol, dso, c->samples))) {
			memmove(cs->later, cs->later + i, (cs->nr_later - i) * sizeof(*c));   /* what is left to count */
			cs->nr_later -= i;
			return err;
		}
	}
	cs->nr_later = 0;
	return 0;
}

void ms_children_release(struct ms_children *cs)
{
	free(cs->first);
	free(cs->t);
	free(cs->off);
	free(cs->pos);
	free(cs->later);
	memset(cs, 0, sizeof(*cs));
}
