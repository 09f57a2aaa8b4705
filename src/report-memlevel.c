/*
 * report's memory columns: one analysis for the run, kept here so that
 * cmd-report.c adds a call per format and nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>

#include <mapscope/aspace.h>
#include <mapscope/memlevel.h>

#include "output/json.h"
#include "report-memlevel.h"

static struct ms_memlevel *memlevel;

int report_memlevel_add(struct ms_session *s)
{
	if (!ms_memlevel_applies(s))
		return 0;
	memlevel = ms_memlevel_new();
	if (!memlevel)
		return -ENOMEM;
	return ms_session_add(s, &ms_memlevel_analysis, memlevel);
}

struct ms_memlevel *report_memlevel(void)
{
	return memlevel;
}

/* The columns are shown where a sample said something: perf record -d of cycles has DATA_SRC, all 0. */
static bool shown(void)
{
	return memlevel && ms_memlevel_any(memlevel);
}

static const struct ms_memlevel_stat *stat_of(const struct ms_region *r)
{
	return ms_memlevel_region(memlevel, r ? r->id : MS_MEMLEVEL_UNMAPPED);
}

void report_memlevel_text_header(void)
{
	if (shown())
		printf(" %8s %-12s %7s", "tlb-miss", "level", "latency");
}

void report_memlevel_text(const struct ms_region *r)
{
	const struct ms_memlevel_stat *st;

	if (!shown())
		return;
	st = stat_of(r);
	if (!st) {
		printf(" %8s %-12s %7s", "-", "-", "-");
		return;
	}
	printf(" %8" PRIu64 " %-12s", st->tlb_misses, ms_mem_level_name(ms_memlevel_top(st)));
	if (st->weighted)
		printf(" %7.0f", ms_memlevel_latency(st));
	else
		printf(" %7s", "-");
}

void report_memlevel_json(struct ms_json *w, const struct ms_region *r)
{
	const struct ms_memlevel_stat *st;
	int l;

	if (!shown())
		return;
	st = stat_of(r);
	ms_json_key(w, "memory");
	if (!st) {
		ms_json_null(w);
		return;
	}
	ms_json_object_begin(w);
	ms_json_key_u64(w, "samples", st->samples);
	ms_json_key_u64(w, "tlb_misses", st->tlb_misses);
	ms_json_key_str(w, "level", ms_mem_level_name(ms_memlevel_top(st)));
	ms_json_key(w, "levels");
	ms_json_object_begin(w);
	for (l = 0; l < MS_MEM_NR_LEVELS; l++)
		if (st->levels[l])
			ms_json_key_u64(w, ms_mem_level_name((enum ms_mem_level)l), st->levels[l]);
	ms_json_object_end(w);
	ms_json_key_u64(w, "weight_sum", st->weight_sum);
	ms_json_key_u64(w, "weighted", st->weighted);
	ms_json_object_end(w);
}

void report_memlevel_csv_header(void)
{
	if (shown())
		printf(",tlb_misses,level,weight_sum,weighted");
}

void report_memlevel_csv(const struct ms_region *r)
{
	const struct ms_memlevel_stat *st;

	if (!shown())
		return;
	st = stat_of(r);
	if (!st)
		printf(",,,,");
	else
		printf(",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64, st->tlb_misses,
		       ms_mem_level_name(ms_memlevel_top(st)), st->weight_sum, st->weighted);
}

void report_memlevel_free(void)
{
	ms_memlevel_free(memlevel);
	memlevel = NULL;
}
