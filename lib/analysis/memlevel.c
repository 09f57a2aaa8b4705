/*
 * Per region, what hardware memory samples' data sources and weights say
 * (mapscope/memlevel.h). Only recordings with such an event add it
 * (ms_memlevel_applies): it takes samples one by one, which the fast runs
 * of a page-fault recording do not need.
 */
#include <errno.h>
#include <stdlib.h>

#include <mapscope/memlevel.h>
#include <mapscope/pdreader.h>

#include "util/grow.h"
#include "util/log.h"

struct ms_memlevel {
	struct ms_memlevel_stat *st;      /* [0]: unmapped; [id + 1]: region id */
	bool *used;
	size_t cap, cap_used;
	bool any;
};

MS_EXPORT struct ms_memlevel *ms_memlevel_new(void)
{
	return calloc(1, sizeof(struct ms_memlevel));
}

MS_EXPORT bool ms_memlevel_applies(const struct ms_session *s)
{
	const struct ms_pdreader *r = ms_session_reader(s);
	const struct perf_event_attr *a;
	size_t i, n = r ? ms_pdreader_nr_evsels(r) : 0;

	for (i = 0; i < n; i++) {
		a = ms_pdreader_attr(r, i);
		if (a && a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT &&
		    (a->sample_type & PERF_SAMPLE_DATA_SRC) && (a->sample_type & PERF_SAMPLE_ADDR))
			return true;
	}
	return false;
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_memlevel *m = ctx;
	size_t i = r ? (size_t)r->id + 1 : 0;
	struct ms_memlevel_stat *st;
	struct ms_data_src d;

	if (!ev->sample.data_src || ev->sample.fault)
		return;
	if (MS_GROW(m->st, i + 1, m->cap, 64, SIZE_MAX, true) ||
	    MS_GROW(m->used, i + 1, m->cap_used, 64, SIZE_MAX, true))
		return;                  /* out of memory: the sample goes uncounted */
	ms_data_src_decode(ev->sample.data_src, &d);
	st = &m->st[i];
	m->used[i] = m->any = true;
	st->samples++;
	st->tlb_misses += d.tlb == MS_MEM_TLB_MISS;
	st->levels[d.level]++;
	if (ev->sample.weight) {
		st->weight_sum += ev->sample.weight;
		st->weighted++;
	}
}

MS_EXPORT const struct ms_analysis ms_memlevel_analysis = {
	.name = "memlevel",
	.charge = on_charge,
};

MS_EXPORT const struct ms_memlevel_stat *ms_memlevel_region(const struct ms_memlevel *m, uint32_t region)
{
	size_t i = region == MS_MEMLEVEL_UNMAPPED ? 0 : (size_t)region + 1;

	return i < m->cap_used && m->used[i] ? &m->st[i] : NULL;
}

MS_EXPORT bool ms_memlevel_any(const struct ms_memlevel *m)
{
	return m->any;
}

MS_EXPORT enum ms_mem_level ms_memlevel_top(const struct ms_memlevel_stat *st)
{
	int l, best = MS_MEM_LVL_NA;

	for (l = MS_MEM_LVL_NA + 1; l < MS_MEM_NR_LEVELS; l++)
		if (st->levels[l] > st->levels[best] || (best == MS_MEM_LVL_NA && st->levels[l]))
			best = l;
	return (enum ms_mem_level)best;
}

MS_EXPORT double ms_memlevel_latency(const struct ms_memlevel_stat *st)
{
	return st->weighted ? (double)st->weight_sum / (double)st->weighted : 0.0;
}

MS_EXPORT void ms_memlevel_free(struct ms_memlevel *m)
{
	if (!m)
		return;
	free(m->st);
	free(m->used);
	free(m);
}
