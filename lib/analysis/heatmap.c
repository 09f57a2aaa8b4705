/*
 * The heatmap: per region with samples, a grid of time columns by offset
 * rows, filled as samples are charged. The time axis starts at the
 * recording's first event with columns of 1 us, and doubles their width
 * (merging neighbours) whenever a sample lies past the last; a region's
 * rows start at a page each and double the same way when an offset lies
 * past the last row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/heatmap.h>

#include "analysis/access.h"
#include "util/grow.h"
#include "util/log.h"

#define CELLS (MS_HEATMAP_ROWS * MS_HEATMAP_COLS)

struct band {
	struct ms_heatmap_band pub;
	uint32_t *cells;
	uint32_t *acc;                /* access shares, or NULL: none charged */
	struct ms_heatmap_mark *marks;
	size_t cap_marks;
};

struct ms_heatmap {
	uint32_t pid;
	uint64_t t0, col_ns;
	bool windowed;                /* the session has a window: samples outside it are left out */
	uint64_t from, to;
	struct band **by_region;          /* region id -> its band, or NULL */
	size_t cap;
	struct ms_heatmap_band *out;      /* the last ms_heatmap_bands(), lent to the caller */
	uint32_t max;
	unsigned int sources;         /* of access: 1 << MS_ACCESS_* each seen */
	int error;
};

MS_EXPORT struct ms_heatmap *ms_heatmap_new(const struct ms_heatmap_opts *opts)
{
	struct ms_heatmap *hm = calloc(1, sizeof(*hm));

	if (!hm)
		return NULL;
	hm->pid = opts ? opts->pid : 0;
	hm->col_ns = 1000;
	return hm;
}

static struct band *band_of(struct ms_heatmap *hm, const struct ms_region *r)
{
	struct band *b;

	if (MS_GROW(hm->by_region, (size_t)r->id + 1, hm->cap, 256, SIZE_MAX, true))
		return NULL;
	if ((b = hm->by_region[r->id]))
		return b;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->cells = calloc(CELLS, sizeof(*b->cells)))) {
		free(b);
		return NULL;
	}
	b->pub.region = r;
	b->pub.row_bytes = 4096;
	return hm->by_region[r->id] = b;
}

static inline uint32_t max_of(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* Access shares merge by the most: a cell shows the busiest interval it covers. */
static void widen_access(uint32_t *acc)
{
	size_t row, col;
	uint32_t *c;

	for (row = 0; row < MS_HEATMAP_ROWS; row++) {
		c = acc + row * MS_HEATMAP_COLS;
		for (col = 0; col < MS_HEATMAP_COLS / 2; col++)
			c[col] = max_of(c[2 * col], c[2 * col + 1]);
		memset(c + MS_HEATMAP_COLS / 2, 0, MS_HEATMAP_COLS / 2 * sizeof(*c));
	}
}

static void deepen_access(uint32_t *acc)
{
	size_t row, col;

	for (row = 0; row < MS_HEATMAP_ROWS / 2; row++)
		for (col = 0; col < MS_HEATMAP_COLS; col++)
			acc[row * MS_HEATMAP_COLS + col] = max_of(acc[2 * row * MS_HEATMAP_COLS + col],
								  acc[(2 * row + 1) * MS_HEATMAP_COLS + col]);
	memset(acc + MS_HEATMAP_ROWS / 2 * MS_HEATMAP_COLS, 0, CELLS / 2 * sizeof(*acc));
}

/* Columns twice as wide, in every band: column 2i and 2i+1 become i. */
static void widen(struct ms_heatmap *hm)
{
	struct band *b;
	size_t i, row, col;
	uint32_t *c;

	hm->col_ns *= 2;
	for (i = 0; i < hm->cap; i++) {
		if (!(b = hm->by_region[i]))
			continue;
		if (b->acc)
			widen_access(b->acc);
		for (row = 0; row < MS_HEATMAP_ROWS; row++) {
			c = b->cells + row * MS_HEATMAP_COLS;
			for (col = 0; col < MS_HEATMAP_COLS / 2; col++)
				c[col] = c[2 * col] + c[2 * col + 1];
			memset(c + MS_HEATMAP_COLS / 2, 0, MS_HEATMAP_COLS / 2 * sizeof(*c));
		}
	}
}

/* Rows twice as tall, in band b: row 2i and 2i+1 become i. */
static void deepen(struct band *b)
{
	size_t row, col;

	b->pub.row_bytes *= 2;
	if (b->acc)
		deepen_access(b->acc);
	for (row = 0; row < MS_HEATMAP_ROWS / 2; row++)
		for (col = 0; col < MS_HEATMAP_COLS; col++)
			b->cells[row * MS_HEATMAP_COLS + col] = b->cells[2 * row * MS_HEATMAP_COLS + col] +
								 b->cells[(2 * row + 1) * MS_HEATMAP_COLS + col];
	memset(b->cells + MS_HEATMAP_ROWS / 2 * MS_HEATMAP_COLS, 0, CELLS / 2 * sizeof(*b->cells));
}

/* Whether a sample at time t is one the map shows. */
static inline bool shown(const struct ms_heatmap *hm, uint64_t t)
{
	return t >= hm->t0 && (!hm->windowed || (t >= hm->from && t <= hm->to));
}

/* Counts a sample of r, at time t and address addr, in its cell of r's band b. */
static void count(struct ms_heatmap *hm, struct band *b, const struct ms_region *r, uint64_t t, uint64_t addr)
{
	uint64_t col, row, off, size = r->end - r->start;

	while ((col = (t - hm->t0) / hm->col_ns) >= MS_HEATMAP_COLS)
		widen(hm);
	if (size > b->pub.size)
		b->pub.size = size;
	off = addr >= r->start ? addr - r->start : 0;
	while ((row = off / b->pub.row_bytes) >= MS_HEATMAP_ROWS)
		deepen(b);
	b->cells[row * MS_HEATMAP_COLS + col]++;
	b->pub.samples++;
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_heatmap *hm = ctx;
	struct band *b;

	if (!r || (hm->pid && r->pid != hm->pid) || !shown(hm, ev->time))
		return;
	if (!(b = band_of(hm, r))) {
		hm->error = -ENOMEM;
		return;
	}
	count(hm, b, r, ev->time, ev->sample.addr);
}

/* A run, all in r: its band is found once (where a sample of it is shown), not for each sample. */
static void on_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_heatmap *hm = ctx;
	struct band *b = NULL;
	uint64_t t;
	size_t i;

	if (hm->pid && r->pid != hm->pid)
		return;
	for (i = 0; i < run->n; i++) {
		t = ms_samples_time(run, i);
		if (!shown(hm, t))
			continue;
		if (!b && !(b = band_of(hm, r))) {
			hm->error = -ENOMEM;
			return;
		}
		count(hm, b, r, t, ms_samples_addr(run, i));
	}
}

static void on_start(void *ctx, struct ms_session *s)
{
	struct ms_heatmap *hm = ctx;

	hm->t0 = ms_session_first_time(s);
	hm->windowed = ms_session_window(s, &hm->from, &hm->to);
}

/* Map, unmap, remap and madvise: marks on the edge of their region's band. */
static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct ms_heatmap *hm = ctx;
	struct band *b;

	(void)s;
	(void)ev;
	if ((c->op != MS_OP_MAP && c->op != MS_OP_UNMAP && c->op != MS_OP_REMAP && c->op != MS_OP_MADVISE) ||
	    !c->region || (hm->pid && c->region->pid != hm->pid))
		return 0;
	if (!(b = band_of(hm, c->region)))
		return -ENOMEM;
	if (c->region->end - c->region->start > b->pub.size)
		b->pub.size = c->region->end - c->region->start;
	if (MS_GROW(b->marks, b->pub.nr_marks + 1, b->cap_marks, 8, SIZE_MAX, false))
		return -ENOMEM;
	b->marks[b->pub.nr_marks++] = (struct ms_heatmap_mark){ .time_ns = c->time_ns, .op = c->op };
	return 0;
}

/* The cells an access charge covers: its overlap's rows, its interval's columns, at its share. */
static void fill_access(struct ms_heatmap *hm, struct band *b, const struct ms_region *r, const struct ms_event *ev,
			uint64_t start, uint64_t end)
{
	uint64_t t = ev->time, from = t - (ev->access.interval_ns < t ? ev->access.interval_ns : t);
	uint64_t c0, c1, r0, r1, row, col, share;

	while ((t - hm->t0) / hm->col_ns >= MS_HEATMAP_COLS)
		widen(hm);
	if (r->end - r->start > b->pub.size)
		b->pub.size = r->end - r->start;
	start = start > r->start ? start - r->start : 0;
	end = end > r->start ? end - r->start : 0;
	while (end && (end - 1) / b->pub.row_bytes >= MS_HEATMAP_ROWS)
		deepen(b);
	share = end > start ? (uint64_t)((unsigned __int128)ms_access_hot_bytes(ev, start + r->start, end + r->start) *
					 MS_HEATMAP_ACCESS_FULL / (end - start)) : 0;
	if (share > MS_HEATMAP_ACCESS_FULL)
		share = MS_HEATMAP_ACCESS_FULL;
	c0 = from > hm->t0 ? (from - hm->t0) / hm->col_ns : 0;
	c1 = (t - hm->t0) / hm->col_ns;
	r0 = start / b->pub.row_bytes;
	r1 = end ? (end - 1) / b->pub.row_bytes : 0;
	for (row = r0; row <= r1 && row < MS_HEATMAP_ROWS; row++)
		for (col = c0; col <= c1; col++)
			b->acc[row * MS_HEATMAP_COLS + col] = max_of(b->acc[row * MS_HEATMAP_COLS + col], (uint32_t)share);
	b->pub.access_events++;
}

static void on_access(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end)
{
	struct ms_heatmap *hm = ctx;
	struct band *b;

	if (!r || end <= start || (hm->pid && r->pid != hm->pid) || !shown(hm, ev->time))
		return;
	if (!(b = band_of(hm, r)) || (!b->acc && !(b->acc = calloc(CELLS, sizeof(*b->acc))))) {
		hm->error = -ENOMEM;
		return;
	}
	hm->sources |= 1u << ev->access.source;
	fill_access(hm, b, r, ev, start, end);
}

MS_EXPORT const struct ms_analysis ms_heatmap_analysis = {
	.name = "heatmap", .charge = on_charge, .charge_run = on_charge_run, .change = on_change,
	.start = on_start, .access = on_access,
};

MS_EXPORT const char *ms_heatmap_evidence(const struct ms_heatmap *hm)
{
	return ms_access_evidence(hm->sources);
}

static int by_place(const void *pa, const void *pb)
{
	const struct ms_heatmap_band *a = pa, *b = pb;

	if (a->region->pid != b->region->pid)
		return a->region->pid < b->region->pid ? -1 : 1;
	if (a->region->start != b->region->start)
		return a->region->start < b->region->start ? -1 : 1;
	return a->region->id < b->region->id ? -1 : a->region->id > b->region->id;
}

MS_EXPORT int ms_heatmap_bands(struct ms_heatmap *hm, const struct ms_heatmap_band **bands, size_t *n,
			       uint64_t *start_ns, uint64_t *col_ns)
{
	struct band *b;
	size_t i, k, m = 0;

	free(hm->out);
	hm->out = NULL;
	if (hm->error)
		return hm->error;
	hm->out = malloc((hm->cap ? hm->cap : 1) * sizeof(*hm->out));
	if (!hm->out)
		return -ENOMEM;
	hm->max = 0;
	for (i = 0; i < hm->cap; i++) {
		if (!(b = hm->by_region[i]) || (!b->pub.samples && !b->pub.access_events))
			continue;
		b->pub.cells = b->cells;
		b->pub.access_cells = b->acc;
		b->pub.marks = b->marks;
		for (k = 0; k < b->pub.nr_marks; k++) {
			b->marks[k].col = (uint32_t)((b->marks[k].time_ns > hm->t0 ? b->marks[k].time_ns - hm->t0 : 0) /
						     hm->col_ns);
			if (b->marks[k].col >= MS_HEATMAP_COLS)
				b->marks[k].col = MS_HEATMAP_COLS - 1;
		}
		for (k = 0; k < CELLS; k++)
			if (b->cells[k] > hm->max)
				hm->max = b->cells[k];
		hm->out[m++] = b->pub;
	}
	qsort(hm->out, m, sizeof(*hm->out), by_place);
	*bands = hm->out;
	*n = m;
	*start_ns = hm->t0;
	*col_ns = hm->col_ns;
	return 0;
}

MS_EXPORT uint32_t ms_heatmap_max(const struct ms_heatmap *hm)
{
	return hm->max;
}

MS_EXPORT void ms_heatmap_free(struct ms_heatmap *hm)
{
	size_t i;

	if (!hm)
		return;
	for (i = 0; i < hm->cap; i++)
		if (hm->by_region[i]) {
			free(hm->by_region[i]->cells);
			free(hm->by_region[i]->acc);
			free(hm->by_region[i]->marks);
			free(hm->by_region[i]);
		}
	free(hm->by_region);
	free(hm->out);
	free(hm);
}
