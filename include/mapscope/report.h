/*
 * ms_report: samples per region. It listens to an ms_aspace's charges and
 * keeps, for each region and for "unmapped", the samples, the distinct
 * 4 KiB pages touched and the first and last sample times. Where the
 * session has a time window (ms_session_opts), only its samples count.
 *
 * Results are borrowed, as from every analysis of the library: what it
 * hands out belongs to the report and stays valid until the next call that
 * makes them again or ms_report_free(); the caller frees none of it. Regions
 * they point to belong to the address-space model (the session's).
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

/* The most code symbols a region row keeps under it (ms_report_opts.children). */
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
	const struct ms_report_child *children;  /* top code symbols, most samples first (region rows) */
	int nr_children;
	/*
	 * Ongoing access (region rows, where the recording has it: record
	 * --referenced, --damon): the intervals that said something of the
	 * region (0: none), its referenced 4 KiB pages per interval (mean and
	 * peak), the accesses counted (DAMON, hardware samples), and the share
	 * of the region found accessed in an interval, on average (0 to 1).
	 */
	uint64_t access_intervals, ref_pages_mean, ref_pages_peak, accesses;
	double hot_share;
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

struct ms_report_opts {
	unsigned int group;        /* what rows are made of: MS_GROUP_* combined (0: MS_GROUP_REGION) */
	/*
	 * How many top code symbols to keep under each region row (at most
	 * MS_REPORT_MAX_CHILDREN); names, like the groups by symbol, dso and
	 * data symbol, come from the session's symbols (ms_session_opts.symbols).
	 */
	unsigned int children;
};

/* opts may be NULL: rows by region, no children. NULL with errno set. */
struct ms_report *ms_report_new(const struct ms_report_opts *opts);

/*
 * The report as an analysis of a session (ctx: the report): it counts the
 * charged samples, keeps to the session's window where it has one, and
 * takes the symbols and the regions' allocation sites from the session
 * (ms_session_alloc_site; the session needs symbols for them).
 */
extern const struct ms_analysis ms_report_analysis;

/*
 * Builds the rows, one per region of as (those with no samples too), or
 * one per group, sorted by keys, and the "unmapped" row (region mode; all
 * zero otherwise). Borrowed: *rows, their children and *unmapped stay
 * valid until the next ms_report_rows() or ms_report_free(). 0, or
 * -ENOMEM with the results of the call before released.
 */
int ms_report_rows(struct ms_report *rep, const struct ms_aspace *as,
		   const enum ms_report_key *keys, size_t nr_keys,
		   const struct ms_report_row **rows, size_t *nr_rows, const struct ms_report_row **unmapped);

/*
 * The same rows, one at a time: for a report of many regions, where an
 * array of every row (128 bytes each) would cost more than the counts.
 * ms_report_sort() orders the rows as ms_report_rows() does and says how
 * many there are; ms_report_row() makes row i of that order (NULL past the
 * end), and ms_report_unmapped() gives the "unmapped" row. Borrowed: a row
 * and its children stay valid until the next ms_report_row(), the sort's
 * order until the next sort, ms_report_rows() or ms_report_free(). 0, or
 * -ENOMEM.
 */
int ms_report_sort(struct ms_report *rep, const struct ms_aspace *as, const enum ms_report_key *keys,
		   size_t nr_keys, size_t *nr_rows);
const struct ms_report_row *ms_report_row(struct ms_report *rep, size_t i);

/*
 * Row i of the sort's order with its region or group, counts and figures
 * of ongoing access only: no children, no allocation site (NULL past the
 * end). For a pass that decides what to print, where making the whole row
 * costs more than the decision. Borrowed as ms_report_row()'s row is, and
 * the same one.
 */
const struct ms_report_row *ms_report_row_counts(struct ms_report *rep, size_t i);
const struct ms_report_row *ms_report_unmapped(const struct ms_report *rep);

/* The evidence of ongoing access the recording held, in words, or NULL where it held none. */
const char *ms_report_access_evidence(const struct ms_report *rep);

/* Samples charged (within the session's window), to regions and to "unmapped". */
uint64_t ms_report_total(const struct ms_report *rep);

/* Accepts NULL. */
void ms_report_free(struct ms_report *rep);

#ifdef __cplusplus
}
#endif
#endif
