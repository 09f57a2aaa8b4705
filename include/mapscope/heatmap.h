/*
 * struct ms_heatmap: where in each region, and when, the samples landed,
 * as an analysis of a session (mapscope/session.h). Each region with
 * samples is a band of MS_HEATMAP_ROWS rows (offsets within the region,
 * from its start) by MS_HEATMAP_COLS columns (time, from the recording's
 * first event); a band belongs to its region, so memory that moved
 * (mremap) keeps its band. Map, unmap, remap and madvise are kept as marks.
 * Cells are aggregated as the samples come: a column or a row doubles in
 * width when the recording or the region outgrows the grid. Where the
 * session has a time window, only its samples are counted; the time axis
 * still starts at the recording's first event.
 */
#ifndef MAPSCOPE_HEATMAP_H
#define MAPSCOPE_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MS_HEATMAP_ROWS 32
#define MS_HEATMAP_COLS 128

struct ms_heatmap;

struct ms_heatmap_mark {
	uint64_t time_ns;
	uint32_t col;
	enum ms_aspace_op op;             /* MS_OP_MAP, _UNMAP, _REMAP, _MADVISE */
};

struct ms_heatmap_band {
	const struct ms_region *region;
	uint64_t size;                    /* the largest the region was, in bytes */
	uint64_t row_bytes;               /* the offsets a row covers */
	uint64_t samples;
	const uint32_t *cells;            /* [MS_HEATMAP_ROWS][MS_HEATMAP_COLS]; row 0: the lowest offsets */
	const struct ms_heatmap_mark *marks;
	size_t nr_marks;
};

/* pid: only that process's samples and regions (0: every process). NULL with errno set. */
struct ms_heatmap *ms_heatmap_new(uint32_t pid);

/* The analysis (ctx: the heatmap). */
extern const struct ms_analysis ms_heatmap_analysis;

/*
 * After the run: the bands of the regions with samples, by pid and start
 * address, and the grid's time axis (the first event's time and the width
 * of a column). The bands live as long as the heatmap and the session.
 */
int ms_heatmap_bands(struct ms_heatmap *hm, const struct ms_heatmap_band **bands, size_t *n,
		     uint64_t *start_ns, uint64_t *col_ns);

/* The largest cell of all bands. */
uint32_t ms_heatmap_max(const struct ms_heatmap *hm);

void ms_heatmap_free(struct ms_heatmap *hm);

#ifdef __cplusplus
}
#endif
#endif
