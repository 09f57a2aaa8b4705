/*
 * The protection of the memory each region's samples touched
 * (analysis/touched.h): looked up in the model as the sample is charged,
 * once per run of samples (a run lies in one stretch of one protection).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/aspace.h>

#include "analysis/touched.h"
#include "util/grow.h"

/*
 * A region's figures. Its samples touch one protection, or two (a
 * reservation and its committed part), as a rule: those are kept inline,
 * 40 bytes; a third moves them all to a whole struct ms_touched_stat in
 * `more` (128 bytes), so 500,000 regions touched once cost 20 MB, not 64.
 */
struct slot {
	uint64_t samples[2];          /* 0: that place unused */
	uint64_t first_ns[2];
	uint8_t prot[2];
	uint32_t more;                /* index + 1 in more, or 0: inline */
};

struct ms_touched {
	const struct ms_aspace *as;
	uint64_t from, to;            /* the session's window */
	uint32_t *idx;                /* region id -> index + 1 in st, 0: none yet */
	size_t cap_idx;
	struct slot *st;
	size_t n, cap;
	struct ms_touched_stat *more; /* the regions that touched more than two */
	size_t nr_more, cap_more;
};

struct ms_touched *ms_touched_new(void)
{
	struct ms_touched *t = calloc(1, sizeof(*t));

	if (t)
		t->to = UINT64_MAX;
	return t;
}

void ms_touched_free(struct ms_touched *t)
{
	if (!t)
		return;
	free(t->idx);
	free(t->st);
	free(t->more);
	free(t);
}

static struct slot *slot_of(struct ms_touched *t, uint32_t id)
{
	if (MS_GROW(t->idx, (size_t)id + 1, t->cap_idx, 64, SIZE_MAX, true))
		return NULL;
	if (!t->idx[id]) {
		if (MS_GROW(t->st, t->n + 1, t->cap, 16, UINT32_MAX - 1, false))
			return NULL;
		memset(&t->st[t->n], 0, sizeof(t->st[0]));
		t->idx[id] = (uint32_t)++t->n;
	}
	return &t->st[t->idx[id] - 1];
}

/* Slot sl's inline figures, moved into a whole stat for a third protection: it, or NULL on no memory. */
static struct ms_touched_stat *spill(struct ms_touched *t, struct slot *sl)
{
	struct ms_touched_stat *st;
	int k;

	if (MS_GROW(t->more, t->nr_more + 1, t->cap_more, 16, UINT32_MAX - 1, false))
		return NULL;
	st = &t->more[t->nr_more];
	memset(st, 0, sizeof(*st));
	for (k = 0; k < 2; k++) {
		st->samples[sl->prot[k]] = sl->samples[k];
		st->first_ns[sl->prot[k]] = sl->first_ns[k];
	}
	sl->more = (uint32_t)++t->nr_more;
	return st;
}

/* Where slot sl counts protection prot: its samples and first time, or false on no memory. */
static bool place(struct ms_touched *t, struct slot *sl, int prot, uint64_t **samples, uint64_t **first)
{
	struct ms_touched_stat *st;
	int k;

	for (k = 0; !sl->more && k < 2; k++) {
		if (sl->samples[k] && sl->prot[k] != prot)
			continue;
		sl->prot[k] = (uint8_t)prot;
		*samples = &sl->samples[k];
		*first = &sl->first_ns[k];
		return true;
	}
	if (!sl->more && !spill(t, sl))
		return false;
	st = &t->more[sl->more - 1];
	*samples = &st->samples[prot];
	*first = &st->first_ns[prot];
	return true;
}

/* n samples of region r, the first at time, at addr of process pid (out of memory: uncounted). */
static void count(struct ms_touched *t, const struct ms_region *r, uint32_t pid, uint64_t addr, uint64_t time,
		  uint64_t n)
{
	struct slot *sl = slot_of(t, r->id);
	int prot = ms_aspace_prot_at(t->as, pid, addr);
	uint64_t *samples, *first;

	if (!sl)
		return;
	prot = (prot < 0 ? (int)r->prot : prot) & (MS_TOUCHED_PROTS - 1);
	if (!place(t, sl, prot, &samples, &first))
		return;
	if (!*samples || time < *first)
		*first = time;
	*samples += n;
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_touched *t = ctx;

	if (r && ev->time >= t->from && ev->time <= t->to)
		count(t, r, ev->pid, ev->sample.addr, ev->time, 1);
}

static void on_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_touched *t = ctx;
	uint64_t time, n = 0, first = 0;
	size_t i;

	if (!run->n)
		return;
	for (i = 0; i < run->n; i++) {
		time = ms_samples_time(run, i);
		if (time < t->from || time > t->to)
			continue;
		if (!n++)
			first = time;
	}
	if (n)
		count(t, r, ms_samples_pid(run, 0), ms_samples_addr(run, 0), first, n);
}

void ms_touched_bind(struct ms_touched *t, const struct ms_aspace *as)
{
	t->as = as;
}

static void on_begin(void *ctx, struct ms_session *s)
{
	ms_touched_bind(ctx, ms_session_aspace(s));
}

static void on_start(void *ctx, struct ms_session *s)
{
	struct ms_touched *t = ctx;

	if (!ms_session_window(s, &t->from, &t->to)) {
		t->from = 0;
		t->to = UINT64_MAX;
	}
}

const struct ms_analysis ms_touched_analysis = {
	.name = "touched",
	.charge = on_charge,
	.charge_run = on_charge_run,
	.begin = on_begin,
	.start = on_start,
};

bool ms_touched_region(const struct ms_touched *t, uint32_t id, struct ms_touched_stat *out)
{
	const struct slot *sl;
	int k;

	if (id >= t->cap_idx || !t->idx[id])
		return false;
	sl = &t->st[t->idx[id] - 1];
	if (sl->more) {
		*out = t->more[sl->more - 1];
		return true;
	}
	memset(out, 0, sizeof(*out));
	for (k = 0; k < 2 && sl->samples[k]; k++) {
		out->samples[sl->prot[k]] = sl->samples[k];
		out->first_ns[sl->prot[k]] = sl->first_ns[k];
	}
	return true;
}

int ms_touched_region_main(const struct ms_touched *t, uint32_t id, int *kinds)
{
	const struct slot *sl;
	int a, b;

	*kinds = 0;
	if (id >= t->cap_idx || !t->idx[id])
		return -1;
	sl = &t->st[t->idx[id] - 1];
	if (sl->more)
		return ms_touched_main_prot(&t->more[sl->more - 1], kinds);
	*kinds = !!sl->samples[0] + !!sl->samples[1];
	if (*kinds < 2)
		return *kinds ? sl->prot[0] : -1;
	/* Two: as ms_touched_main_prot() has them, in the order of their protections. */
	a = sl->prot[0] < sl->prot[1] ? 0 : 1;
	b = 1 - a;
	if (sl->samples[b] > sl->samples[a] ||
	    (sl->samples[b] == sl->samples[a] && sl->first_ns[b] < sl->first_ns[a]))
		return sl->prot[b];
	return sl->prot[a];
}

int ms_touched_main_prot(const struct ms_touched_stat *st, int *kinds)
{
	int p, best = -1;

	*kinds = 0;
	for (p = 0; p < MS_TOUCHED_PROTS; p++) {
		if (!st->samples[p])
			continue;
		++*kinds;
		if (best < 0 || st->samples[p] > st->samples[best] ||
		    (st->samples[p] == st->samples[best] && st->first_ns[p] < st->first_ns[best]))
			best = p;
	}
	return best;
}
