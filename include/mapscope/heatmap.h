/*
 * struct ms_heatmap: where in each region, and when, the samples landed,
 * as an analysis of a session (mapscope/session.h). Each region with
 * samples is a band of MS_HEATMAP_ROWS rows (offsets within the region,
 * from its start) by MS_HEATMAP_COLS columns (time, from the recording's
 * first event); a band belongs to its region, so memory that moved
 * (mremap) keeps its band. Map, unmap, remap and madvise are kept as marks.
 * Where the recording has ongoing access (MS_EV_ACCESS: record --referenced,
 * --damon), each band also holds its share accessed per interval, drawn
 * over the rows and columns the interval's range and time cover.
 * Cells are aggregated as the samples come: a column or a row doubles in
 * width when the recording or the region outgrows the grid. Only filled
 * cells take memory, and a region without samples takes almost none. Where the
 * session has a time window, only its samples are counted; the time axis
 * still starts at the recording's first event.
 *
 * Results are borrowed, as from every analysis of the library: what it
 * hands out belongs to the heatmap and stays valid until the next call that
 * makes them again or ms_heatmap_free(); the caller frees none of it. Regions
 * they point to belong to the address-space model (the session's).
 */
#ifndef MAPSCOPE_HEATMAP_H
#define MAPSCOPE_HEATMAP_H

#include <stdbool.h>
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

/* A filled cell: index is row * MS_HEATMAP_COLS + col (row 0: the lowest offsets, col 0: the earliest). */
struct ms_heatmap_cell {
	uint32_t index;
	uint32_t value;
};

struct ms_heatmap_band {
	const struct ms_region *region;
	uint64_t size;                    /* the largest the region was, in bytes */
	uint64_t row_bytes;               /* the offsets a row covers */
	uint64_t samples;
	/* The cells with samples, by index: most of a band is empty, and a big recording has many. */
	const struct ms_heatmap_cell *cells;
	size_t nr_cells;
	const struct ms_heatmap_mark *marks;
	size_t nr_marks;
	/*
	 * Ongoing access, where the recording has it (ms_heatmap_evidence):
	 * the cells an interval covered, by index, each the most of its bytes
	 * found accessed in an interval that covers it, in millionths
	 * (1000000: all); none where nothing was charged to the region.
	 * access_events: the charges that filled them.
	 */
	const struct ms_heatmap_cell *access_cells;
	size_t nr_access_cells;
	uint64_t access_events;
};

/* The scale of access_cells: a cell wholly accessed. */
#define MS_HEATMAP_ACCESS_FULL 1000000u

/* The order of ms_heatmap_bands(); ties go by place. */
enum ms_heatmap_order {
	MS_HEATMAP_BY_SAMPLES,            /* the busiest first (then those with the most access charges) */
	MS_HEATMAP_BY_PLACE,              /* by pid and start address: the address space's own order */
	MS_HEATMAP_BY_SIZE,               /* the largest first */
};

struct ms_heatmap_opts {
	uint32_t pid;                     /* only this process's samples and regions (0: every process) */
	enum ms_heatmap_order order;
	/*
	 * Which bands ms_heatmap_bands() hands out, each step on what the one
	 * before left: those keep accepts (NULL: all; ctx: keep_ctx); with at
	 * least min_share (0 to 1) of the samples of every band; the limit
	 * busiest of them (0: all), in order. What is handed out is all that
	 * costs more than its band's cells, so that a caller that draws a few
	 * bands of 500,000 pays for those few.
	 */
	bool (*keep)(const struct ms_region *r, void *ctx);
	void *keep_ctx;
	double min_share;
	size_t limit;
};

/* What the last ms_heatmap_bands() counted. */
struct ms_heatmap_totals {
	uint64_t samples;                 /* of every band, whatever keep: what shares are of */
	size_t bands;                     /* the bands keep and min_share accept, before the limit */
	size_t under_share;               /* the bands keep accepts that min_share left out */
};

/* opts may be NULL: every process. NULL with errno set. */
struct ms_heatmap *ms_heatmap_new(const struct ms_heatmap_opts *opts);

/* The analysis (ctx: the heatmap). */
extern const struct ms_analysis ms_heatmap_analysis;

/*
 * After the run: the bands of the regions with samples (or access), in
 * the order opts asked for, and the grid's time axis (the first event's time and the width
 * of a column). Borrowed: *bands, their cells and marks stay valid until
 * the next ms_heatmap_bands() or ms_heatmap_free(). 0, or -ENOMEM with
 * the bands of the call before released.
 */
int ms_heatmap_bands(struct ms_heatmap *hm, const struct ms_heatmap_band **bands, size_t *n,
		     uint64_t *start_ns, uint64_t *col_ns);

/*
 * The same bands one at a time, for a caller that draws every band of
 * many: ms_heatmap_select() chooses and orders them as ms_heatmap_bands()
 * does (their number in *n, the time axis as there), and
 * ms_heatmap_band() makes band i (i < *n) public. Borrowed: a band, its
 * cells and marks stay valid until the next ms_heatmap_band(),
 * ms_heatmap_select(), ms_heatmap_bands() or ms_heatmap_free(); each of
 * the two ways ends what the other handed out. ms_heatmap_select(): 0, or
 * -ENOMEM; ms_heatmap_band(): NULL with errno ERANGE (i past the bands)
 * or ENOMEM.
 */
int ms_heatmap_select(struct ms_heatmap *hm, size_t *n, uint64_t *start_ns, uint64_t *col_ns);
const struct ms_heatmap_band *ms_heatmap_band(struct ms_heatmap *hm, size_t i);

/*
 * Which ongoing access the bands' access_cells hold, in words ("accessed
 * bits per interval (record --referenced)"), or NULL where the recording
 * has none and only samples (first touches, for page faults) are drawn.
 */
const char *ms_heatmap_evidence(const struct ms_heatmap *hm);

/* The largest cell of all bands, whatever keep (as of the last ms_heatmap_bands()). */
uint32_t ms_heatmap_max(const struct ms_heatmap *hm);

/* As of the last ms_heatmap_bands(): zeros before it. */
void ms_heatmap_totals(const struct ms_heatmap *hm, struct ms_heatmap_totals *t);

/* Accepts NULL. */
void ms_heatmap_free(struct ms_heatmap *hm);

#ifdef __cplusplus
}
#endif
#endif
