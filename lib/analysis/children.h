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
};

/* Counts n samples of code symbol (of binary dso) in region id + 1 (not 0). 0 or -ENOMEM. */
int ms_children_count(struct ms_children *c, uint64_t region, const char *symbol, const char *dso, uint64_t n);

/*
 * The top nc symbols under each of rows[0, n) (region rows of regions
 * below nr_regions), most samples first, into rows[i].children and
 * nr_children: they point into *kids, allocated here and the caller's to
 * free. 0 or -ENOMEM (*kids then NULL).
 */
int ms_children_fill(const struct ms_children *c, struct ms_report_row *rows, size_t n, size_t nr_regions, int nc,
		     struct ms_report_child **kids);

void ms_children_release(struct ms_children *c);

#endif
