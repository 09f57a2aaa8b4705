/*
 * ms_report: samples per region. It listens to an ms_aspace's charges and
 * keeps, for each region and for "unmapped", the samples, the distinct
 * 4 KiB pages touched and the first and last sample times.
 */
#ifndef MAPSCOPE_REPORT_H
#define MAPSCOPE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_report;

#define MS_REPORT_MAX_CHILDREN 16

struct ms_report_child {
	const char *symbol, *dso;
	uint64_t samples;
};

struct ms_report_row {
	const struct ms_region *region;   /* NULL for the "unmapped" row, or when not grouped by region */
	const char *symbol;               /* code symbol of the samples' IP (grouped by symbol) */
	const char *dso;                  /* code binary (grouped by dso) */
	const char *daddr_symbol;         /* data symbol of the address (grouped by daddr-symbol) */
	const char *alloc;                /* allocation site of the region (grouped by alloc) */
	uint64_t samples, pages, first_ns, last_ns;
	struct ms_report_child children[MS_REPORT_MAX_CHILDREN]; /* top code symbols (region rows) */
	int nr_children;
};

/* What rows are made of: a combination of these (default: region). */
enum ms_report_group {
	MS_GROUP_REGION = 1, MS_GROUP_SYMBOL = 2, MS_GROUP_DSO = 4, MS_GROUP_DADDR = 8, MS_GROUP_ALLOC = 16,
};

/* Keys of ms_report_rows(), compared in the order given. */
enum ms_report_key {
	MS_SORT_SAMPLES,    /* most first */
	MS_SORT_REGION,     /* pid, then start address */
	MS_SORT_KIND, MS_SORT_NAME, MS_SORT_PID,
	MS_SORT_PAGES,      /* most first */
};

/* Only samples in [from_ns, to_ns] count (0, UINT64_MAX: all). NULL with errno. */
struct ms_report *ms_report_new(uint64_t from_ns, uint64_t to_ns);

struct ms_symbols;

/*
 * Groups rows by the MS_GROUP_* in mask, resolving names through syms
 * (which the caller feeds and keeps); children: how many top code symbols
 * to keep under each region row (needs syms). Call before any sample.
 */
void ms_report_configure(struct ms_report *rep, unsigned int mask, struct ms_symbols *syms, int children);

/*
 * The report as an analysis of a session (ctx: the report): it counts the
 * charged samples, keeps to the session's window where it has one, and
 * takes the regions' allocation sites from the session
 * (ms_session_alloc_site; the session needs symbols for them).
 */
extern const struct ms_analysis ms_report_analysis;

/*
 * Builds the rows, one per region of as (those with no samples too), sorted
 * by keys. *rows is the caller's to free(); the "unmapped" row is
 * *unmapped. 0 or -ENOMEM.
 */
int ms_report_rows(struct ms_report *rep, const struct ms_aspace *as,
		   const enum ms_report_key *keys, size_t nr_keys,
		   struct ms_report_row **rows, size_t *nr_rows, struct ms_report_row *unmapped);

/* Samples charged (within the time range), to regions and to "unmapped". */
uint64_t ms_report_total(const struct ms_report *rep);

/* Accepts NULL. */
void ms_report_free(struct ms_report *rep);

#ifdef __cplusplus
}
#endif
#endif
