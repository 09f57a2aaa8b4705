/*
 * ms_memlevel: what hardware memory samples (PEBS, IBS, SPE: ADDR,
 * DATA_SRC, WEIGHT) say of each region's accesses: how many missed the
 * TLB, which level of the memory hierarchy served them, and what they
 * cost (WEIGHT, in cycles). Samples without a data source (page faults)
 * are not counted. Results are borrowed, valid until ms_memlevel_free().
 */
#ifndef MAPSCOPE_MEMLEVEL_H
#define MAPSCOPE_MEMLEVEL_H

#include <stdbool.h>
#include <stdint.h>

#include <mapscope/datasrc.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_memlevel_stat {
	uint64_t samples;                     /* with a data source */
	uint64_t tlb_misses;                  /* of them, the data source says: missed the TLB */
	uint64_t levels[MS_MEM_NR_LEVELS];    /* by the level that served them */
	uint64_t weight_sum, weighted;        /* WEIGHT summed over the samples that have one, and how many */
};

/* The region of ms_memlevel_region() for accesses no mapping held. */
#define MS_MEMLEVEL_UNMAPPED UINT32_MAX

struct ms_memlevel;

/* NULL with errno set. */
struct ms_memlevel *ms_memlevel_new(void);

/* The analysis (ms_session_add(s, &ms_memlevel_analysis, m)). */
extern const struct ms_analysis ms_memlevel_analysis;

/* Whether the recording has an event whose samples carry a data source and are not page faults. */
bool ms_memlevel_applies(const struct ms_session *s);

/* Region id's counts (MS_MEMLEVEL_UNMAPPED: the unmapped accesses), or NULL where it has none. */
const struct ms_memlevel_stat *ms_memlevel_region(const struct ms_memlevel *m, uint32_t region);

/* Whether any sample had a data source. */
bool ms_memlevel_any(const struct ms_memlevel *m);

/* The level that served most of st's samples (MS_MEM_LVL_NA where none said). */
enum ms_mem_level ms_memlevel_top(const struct ms_memlevel_stat *st);

/* The mean WEIGHT of st's samples that have one, or 0. */
double ms_memlevel_latency(const struct ms_memlevel_stat *st);

void ms_memlevel_free(struct ms_memlevel *m);

#ifdef __cplusplus
}
#endif
#endif
