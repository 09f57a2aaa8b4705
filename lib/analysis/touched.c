/*
 * The protection of the memory each region's samples touched
 * (analysis/touched.h): looked up in the model as the sample is charged,
 * once per run of samples (a run lies in one stretch of one protection).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/aspace.h>

#include "analysis/touched.h"
#include "util/grow.h"

struct ms_touched {
	const struct ms_aspace *as;
	uint64_t from, to;            /* the session's window */
	uint32_t *idx;                /* region id -> index + 1 in st, 0: none yet */
	size_t cap_idx;
	struct ms_touched_stat *st;
	size_t n, cap;
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
	free(t);
}

static struct ms_touched_stat *stat_of(struct ms_touched *t, uint32_t id)
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

/* n samples of region r, the first at time, at addr of process pid (out of memory: uncounted). */
static void count(struct ms_touched *t, const struct ms_region *r, uint32_t pid, uint64_t addr, uint64_t time,
		  uint64_t n)
{
	struct ms_touched_stat *st = stat_of(t, r->id);
	int prot = ms_aspace_prot_at(t->as, pid, addr);

	if (!st)
		return;
	prot = (prot < 0 ? (int)r->prot : prot) & (MS_TOUCHED_PROTS - 1);
	if (!st->samples[prot] || time < st->first_ns[prot])
		st->first_ns[prot] = time;
	st->samples[prot] += n;
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

const struct ms_touched_stat *ms_touched_region(const struct ms_touched *t, uint32_t id)
{
	return id < t->cap_idx && t->idx[id] ? &t->st[t->idx[id] - 1] : NULL;
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
