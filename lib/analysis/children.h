/*
 * Internal: the code symbols under each region row of the report, the
 * samples of each (region, symbol, binary), and each row's top N of them.
 */
#ifndef MS_ANALYSIS_CHILDREN_H
#define MS_ANALYSIS_CHILDREN_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/report.h>

struct child {
	uint64_t region;          /* id + 1; 0: empty */
	const char *symbol, *dso;
	uint64_t samples;
};

/* Zeroed to start. */
struct ms_children {
	struct child *first;      /* region id + 1 -> the first code symbol counted in it */
	size_t fcap;
	struct child *t;          /* hash: (region, symbol) -> samples, for the symbols after the first */
	size_t cap, len;
	size_t last;              /* the entry counted last (samples come in runs) */
	uint32_t *off, *pos;      /* ms_children_index(): table positions by region, and where each starts */
	size_t nr_off;
	struct child *later;      /* ms_children_count_later(), in turn */
	size_t nr_later, cap_later, later_limit;
};

/* Counts n samples of code symbol (of binary dso) in region id + 1 (not 0). 0 or -ENOMEM. */
int ms_children_count(struct ms_children *c, uint64_t region, const char *symbol, const char *dso, uint64_t n);

/*
 * Indexes the table's entries by region (ids + 1 up to nr_regions), for
 * ms_children_top(): again after any count. 0 or -ENOMEM (no index then).
 */
int ms_children_index(struct ms_children *c, size_t nr_regions);

/*
 * The top nc (at most MS_REPORT_MAX_CHILDREN) code symbols of region id + 1,
 * most samples first (ties by symbol, then binary name), into kids[0, nc):
 * their number. The names are borrowed from the counts.
 */
int ms_children_top(const struct ms_children *c, uint64_t region, int nc, struct ms_report_child *kids);

/*
 * Counts n samples in region id + 1 of code whose (symbol, binary) is not
 * known yet: kept in turn (the same as the last: added to it; all of one
 * merged once they are many), and counted by ms_children_settle(). 0 or
 * -ENOMEM.
 */
int ms_children_count_later(struct ms_children *c, uint64_t region, const char *symbol, const char *dso,
			    uint64_t n);

/*
 * Counts the samples kept by ms_children_count_later(), each under the
 * (symbol, binary) rename(ctx, ...) gives it: the index is to be made
 * again. 0, or -ENOMEM with those not counted yet kept.
 */
int ms_children_settle(struct ms_children *c, void (*rename)(void *ctx, const char **symbol, const char **dso),
		       void *ctx);

void ms_children_release(struct ms_children *c);

#endif
