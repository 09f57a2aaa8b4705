/*
 * Per region, what the intervals of ongoing access said: each charge adds
 * to the region's open interval; an event of a later time closes it (the
 * events of one sampling carry one time), so a region held by two VMAs
 * counts both in one interval.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/access.h"
#include "util/grow.h"

void ms_access_table_init(struct ms_access_table *t)
{
	memset(t, 0, sizeof(*t));
}

void ms_access_table_release(struct ms_access_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

uint64_t ms_access_hot_bytes(const struct ms_event *ev, uint64_t start, uint64_t end)
{
	uint64_t len = ev->access.end - ev->access.start, ov = end - start;

	if (ev->access.source == MS_ACCESS_DAMON)
		return ev->access.nr_accesses ? ov : 0;
	if (!len)
		return 0;
	if (ov == len)
		return ev->access.referenced;
	return (uint64_t)((unsigned __int128)ev->access.referenced * ov / len);
}

static void close_interval(struct ms_access_stat *a)
{
	if (!a->open)
		return;
	a->open = false;
	a->intervals++;
	a->ref_sum += a->cur_ref;
	if (a->cur_ref > a->ref_peak)
		a->ref_peak = a->cur_ref;
	a->hot_sum += a->cur_hot;
	if (a->cur_size)
		a->share_ppm_sum += (uint64_t)((unsigned __int128)(a->cur_hot < a->cur_size ? a->cur_hot : a->cur_size) *
					       1000000 / a->cur_size);
}

void ms_access_table_charge(struct ms_access_table *t, const struct ms_event *ev, const struct ms_region *r,
			    uint64_t start, uint64_t end)
{
	struct ms_access_stat *a;
	uint64_t hot;

	if (!r || end <= start)
		return;                      /* nothing mapped there: no region to credit */
	if (MS_GROW(t->v, (size_t)r->id + 1, t->cap, 256, SIZE_MAX, true)) {
		t->error = -ENOMEM;
		return;
	}
	t->sources |= 1u << ev->access.source;
	a = &t->v[r->id];
	if (a->open && a->cur_time != ev->time)
		close_interval(a);
	if (!a->open) {
		a->open = true;
		a->cur_time = ev->time;
		a->cur_ref = a->cur_hot = 0;
	}
	hot = ms_access_hot_bytes(ev, start, end);
	a->cur_hot += hot;
	if (ev->access.source == MS_ACCESS_REFERENCED)
		a->cur_ref += hot;
	else if (ev->access.source == MS_ACCESS_DAMON)
		a->accesses += ev->access.nr_accesses;
	a->cur_size = r->end - r->start;
}

void ms_access_table_settle(struct ms_access_table *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		close_interval(&t->v[i]);
}

const struct ms_access_stat *ms_access_table_get(const struct ms_access_table *t, uint32_t id)
{
	return id < t->cap && t->v[id].intervals ? &t->v[id] : NULL;
}

const char *ms_access_evidence(unsigned int sources)
{
	const unsigned int damon = 1u << MS_ACCESS_DAMON, ref = 1u << MS_ACCESS_REFERENCED;

	if ((sources & damon) && (sources & ref))
		return "DAMON and accessed bits (record --damon, --referenced)";
	if (sources & damon)
		return "DAMON access monitoring (record --damon)";
	if (sources & ref)
		return "accessed bits per interval (record --referenced)";
	return NULL;
}

uint64_t ms_access_ref_pages_mean(const struct ms_access_stat *a)
{
	return a && a->intervals ? a->ref_sum / a->intervals / 4096 : 0;
}

uint64_t ms_access_ref_pages_peak(const struct ms_access_stat *a)
{
	return a ? a->ref_peak / 4096 : 0;
}

double ms_access_hot_share(const struct ms_access_stat *a)
{
	return a && a->intervals ? (double)a->share_ppm_sum / (double)a->intervals / 1e6 : 0.0;
}
