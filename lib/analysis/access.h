/*
 * Internal: ongoing access per region, from MS_EV_ACCESS events as the
 * model charges them (ms_analysis.access), for every analysis that
 * ranks or draws by it (report, hugepages, heatmap). An interval is the
 * events of one time: a sampling of accessed bits, a DAMON aggregation.
 */
#ifndef MS_ANALYSIS_ACCESS_H
#define MS_ANALYSIS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>

/* What one region's intervals add up to. Bytes. */
struct ms_access_stat {
	uint64_t intervals;            /* intervals that said something of the region */
	uint64_t ref_sum, ref_peak;    /* accessed bits (record --referenced): referenced, summed and most */
	uint64_t hot_sum;              /* bytes found accessed, any source, summed over intervals */
	uint64_t share_ppm_sum;        /* each interval's hot bytes per million of the region's size, summed */
	uint64_t accesses;             /* counted accesses: DAMON's nr_accesses, hardware samples */
	/* The interval being summed: its time, and what it has so far. */
	uint64_t cur_time, cur_ref, cur_hot, cur_size;
	bool open;
};

struct ms_access_table {
	struct ms_access_stat *v;      /* by region id */
	size_t cap;
	unsigned int sources;          /* 1 << enum ms_access_source, each seen */
	int error;                     /* -ENOMEM once a region could not be counted */
};

void ms_access_table_init(struct ms_access_table *t);
void ms_access_table_release(struct ms_access_table *t);

/* A charge of the model's (ms_analysis.access): the overlap [start, end) of ev's range with r. */
void ms_access_table_charge(struct ms_access_table *t, const struct ms_event *ev, const struct ms_region *r,
			    uint64_t start, uint64_t end);

/* Closes the intervals still open: call before reading the figures. */
void ms_access_table_settle(struct ms_access_table *t);

/* Region id's figures, or NULL where nothing was said of it. */
const struct ms_access_stat *ms_access_table_get(const struct ms_access_table *t, uint32_t id);

/* Whether the table heard of any access, and by which source (MS_ACCESS_*). */
static inline bool ms_access_table_has(const struct ms_access_table *t, enum ms_access_source src)
{
	return t->sources & (1u << src);
}

/* The evidence of sources (1 << MS_ACCESS_* each) in words, or NULL where there is none. */
const char *ms_access_evidence(unsigned int sources);

static inline const char *ms_access_table_evidence(const struct ms_access_table *t)
{
	return ms_access_evidence(t->sources);
}

/* The mean and peak referenced 4 KiB pages per interval, and the share of the region hot (0 to 1). */
uint64_t ms_access_ref_pages_mean(const struct ms_access_stat *a);
uint64_t ms_access_ref_pages_peak(const struct ms_access_stat *a);
double ms_access_hot_share(const struct ms_access_stat *a);

/*
 * The bytes a charge says were accessed in its overlap: REFERENCED, the
 * VMA's referenced bytes in proportion to the overlap (a VMA that holds
 * two regions is shared by size); DAMON, the whole overlap where the
 * region was found accessed at all.
 */
uint64_t ms_access_hot_bytes(const struct ms_event *ev, uint64_t start, uint64_t end);

#endif
