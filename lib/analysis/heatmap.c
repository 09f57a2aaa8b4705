/*
 * The heatmap: per region with samples, a grid of time columns by offset
 * rows, filled as samples are charged. The time axis starts at the
 * recording's first event with columns of 1 us, and doubles their width
 * (merging neighbours) whenever a sample lies past the last; a region's
 * rows start at a page each and double the same way when an offset lies
 * past the last row.
 *
 * A recording can hold 500,000 regions: a band costs 32 bytes and what its
 * filled cells cost past the first (lib/analysis/heatgrid.c), a region
 * without samples only its slot in by_region and its changes' marks; what
 * few bands need (access shares, a place among those handed out) lies
 * beside the bands, not in each, and a band's samples are the sum of its
 * cells, not kept apart; a doubling of the columns reaches each
 * band only when it is next touched (its col_shift lags the map's until
 * then), never every band at once; and only the bands handed out are made
 * into public bands with marks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/heatmap.h>

#include "analysis/access.h"
#include "analysis/heatgrid.h"
#include "analysis/marklist.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/u32map.h"

struct band {
	const struct ms_region *region;
	uint64_t size;
	struct hg cells;                  /* their sum: the band's samples; in its owner bytes, the band's scale */
};

/* A band's columns are 1 us << its col shift, its rows a page << its row shift; with access shares or not. */
#define COL_SHIFT(b) ((b)->cells.owner[0])
#define ROW_SHIFT(b) ((b)->cells.owner[1])
#define HAS_ACC(b) ((b)->cells.owner[2])

_Static_assert(sizeof(struct band) == 32, "500,000 mappings make 500,000 bands");

/* A band's access shares and the charges that filled them: only recordings of ongoing access have any. */
struct band_acc {
	struct hg grid;
	uint64_t events;
};

/* Bands live in chunks: no copy of them all as they grow, no allocation of each. */
#define CHUNK 4096

struct ms_heatmap {
	struct ms_heatmap_opts opts;
	uint64_t t0;
	unsigned int col_shift;           /* columns of 1 us << col_shift */
	bool windowed;                    /* the session has a window: samples outside it are left out */
	uint64_t from, to;
	uint32_t *by_region;              /* region id -> its band's number + 1, or 0 */
	size_t cap;
	struct band **chunks;             /* band i: chunks[i / CHUNK][i % CHUNK] */
	size_t nr_bands, cap_chunks;
	struct ms_u32map accs;            /* band number -> its struct band_acc, where it has access shares */
	/* Band i's place among those the last selection handed out + 1 (0: none); made by each selection. */
	uint32_t *place;
	struct ms_marklist marks;         /* every change that may mark a band (lib/analysis/marklist.c) */
	/* The last ms_heatmap_bands(), lent to the caller: bands, their marks, dense grids' cells. */
	struct ms_heatmap_band *out;
	struct ms_heatmap_mark *out_marks;
	struct ms_heatmap_cell **out_cells;
	size_t nr_out;
	/* The last ms_heatmap_select(): the bands in order, each one's marks as a list, the band lent last. */
	struct band **sel;
	size_t nr_sel;
	uint32_t *mark_head, *mark_next;  /* band k's first mark + 1; a mark's next of its band + 1 */
	struct ms_heatmap_band one;
	struct ms_heatmap_mark *one_marks;
	size_t cap_one_marks;
	struct ms_heatmap_cell *one_cells[2];
	struct ms_heatmap_totals totals;
	uint32_t max;
	unsigned int sources;             /* of access: 1 << MS_ACCESS_* each seen */
	int error;
};

#define COL_NS(hm) (1000ULL << (hm)->col_shift)

MS_EXPORT struct ms_heatmap *ms_heatmap_new(const struct ms_heatmap_opts *opts)
{
	struct ms_heatmap *hm = calloc(1, sizeof(*hm));

	if (!hm)
		return NULL;
	if (opts)
		hm->opts = *opts;
	return hm;
}

/* Band b's number: its region's slot in by_region says it. */
static inline uint32_t band_no(const struct ms_heatmap *hm, const struct band *b)
{
	return hm->by_region[b->region->id] - 1;
}

/* Band b's access shares, or NULL: few bands have any, so they lie beside the bands, by number. */
static inline struct band_acc *acc_of(const struct ms_heatmap *hm, const struct band *b)
{
	return HAS_ACC(b) ? ms_u32map_get(&hm->accs, band_no(hm, b)) : NULL;
}

static inline uint64_t access_events(const struct ms_heatmap *hm, const struct band *b)
{
	return HAS_ACC(b) ? acc_of(hm, b)->events : 0;
}

/* Brings band b to the map's columns: the doublings it missed since it was last touched. */
static void band_sync(const struct ms_heatmap *hm, struct band *b)
{
	unsigned int k = hm->col_shift - COL_SHIFT(b);

	if (!k)
		return;
	hg_scale(&b->cells, k, 0, HG_SUM);
	if (HAS_ACC(b))
		hg_scale(&acc_of(hm, b)->grid, k, 0, HG_MAX);
	COL_SHIFT(b) = (uint8_t)hm->col_shift;
}

static inline struct band *band_at(const struct ms_heatmap *hm, size_t i)
{
	return &hm->chunks[i / CHUNK][i % CHUNK];
}

/* Band b's place among those handed out + 1 (0: none), in the selection being made. */
static inline uint32_t *place_of(const struct ms_heatmap *hm, const struct band *b)
{
	return &hm->place[band_no(hm, b)];
}

/* Region id's band, or NULL where it has none. */
static struct band *band_of_id(const struct ms_heatmap *hm, uint32_t id)
{
	return id < hm->cap && hm->by_region[id] ? band_at(hm, hm->by_region[id] - 1) : NULL;
}

static struct band *band_of(struct ms_heatmap *hm, const struct ms_region *r)
{
	struct band *b;

	if ((b = band_of_id(hm, r->id))) {
		band_sync(hm, b);
		return b;
	}
	if (hm->nr_bands == UINT32_MAX - 1 ||
	    MS_GROW(hm->by_region, (size_t)r->id + 1, hm->cap, 256, SIZE_MAX, true) ||
	    MS_GROW(hm->chunks, hm->nr_bands / CHUNK + 1, hm->cap_chunks, 16, SIZE_MAX, true))
		return NULL;
	if (!hm->chunks[hm->nr_bands / CHUNK] && !(hm->chunks[hm->nr_bands / CHUNK] = calloc(CHUNK, sizeof(*b))))
		return NULL;
	b = band_at(hm, hm->nr_bands++);
	b->region = r;
	COL_SHIFT(b) = (uint8_t)hm->col_shift;
	hm->by_region[r->id] = (uint32_t)hm->nr_bands;
	return b;
}

/* The column of time t, the columns widened until it fits. */
static uint32_t column(struct ms_heatmap *hm, uint64_t t)
{
	uint64_t col;

	while ((col = (t - hm->t0) / COL_NS(hm)) >= MS_HEATMAP_COLS)
		hm->col_shift++;
	return (uint32_t)col;
}

/* The row of offset off in band b, its rows made taller until it fits. */
static uint32_t row_of(struct ms_heatmap *hm, struct band *b, uint64_t off)
{
	uint64_t row;
	unsigned int k = 0;

	while ((row = off / (4096ULL << (ROW_SHIFT(b) + k))) >= MS_HEATMAP_ROWS)
		k++;
	if (k) {
		hg_scale(&b->cells, 0, k, HG_SUM);
		if (HAS_ACC(b))
			hg_scale(&acc_of(hm, b)->grid, 0, k, HG_MAX);
		ROW_SHIFT(b) = (uint8_t)(ROW_SHIFT(b) + k);
	}
	return (uint32_t)row;
}

/* Whether a sample at time t is one the map shows. */
static inline bool shown(const struct ms_heatmap *hm, uint64_t t)
{
	return t >= hm->t0 && (!hm->windowed || (t >= hm->from && t <= hm->to));
}

/* Counts a sample of r, at time t and address addr, in its cell of r's band. */
static void count(struct ms_heatmap *hm, const struct ms_region *r, uint64_t t, uint64_t addr)
{
	uint64_t size = r->end - r->start;
	uint32_t col = column(hm, t), row;
	struct band *b = band_of(hm, r);

	if (!b) {
		hm->error = -ENOMEM;
		return;
	}
	if (size > b->size)
		b->size = size;
	row = row_of(hm, b, addr >= r->start ? addr - r->start : 0);
	if (hg_add(&b->cells, row * MS_HEATMAP_COLS + col, 1, HG_SUM)) {
		hm->error = -ENOMEM;
		return;
	}
}

static void on_charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_heatmap *hm = ctx;

	if (!r || (hm->opts.pid && r->pid != hm->opts.pid) || !shown(hm, ev->time))
		return;
	count(hm, r, ev->time, ev->sample.addr);
}

static void on_charge_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct ms_heatmap *hm = ctx;
	uint64_t t;
	size_t i;

	if (hm->opts.pid && r->pid != hm->opts.pid)
		return;
	for (i = 0; i < run->n; i++) {
		t = ms_samples_time(run, i);
		if (shown(hm, t))
			count(hm, r, t, ms_samples_addr(run, i));
	}
}

static void on_start(void *ctx, struct ms_session *s)
{
	struct ms_heatmap *hm = ctx;

	hm->t0 = ms_session_first_time(s);
	hm->windowed = ms_session_window(s, &hm->from, &hm->to);
}

/* Map, unmap, remap and madvise: marks on the edge of their region's band, should it get one. */
static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct ms_heatmap *hm = ctx;

	(void)s;
	(void)ev;
	if ((c->op != MS_OP_MAP && c->op != MS_OP_UNMAP && c->op != MS_OP_REMAP && c->op != MS_OP_MADVISE) ||
	    !c->region || (hm->opts.pid && c->region->pid != hm->opts.pid))
		return 0;
	return ms_marklist_add(&hm->marks, c->time_ns, c->op, c->region->id, c->region->end - c->region->start);
}

/* The cells an access charge covers: its overlap's rows, its interval's columns, at its share. */
static int fill_access(struct ms_heatmap *hm, struct band *b, const struct ms_region *r, const struct ms_event *ev,
		       uint64_t start, uint64_t end)
{
	uint64_t t = ev->time, from = t - (ev->access.interval_ns < t ? ev->access.interval_ns : t);
	uint64_t c0, c1, r0, r1, row, col, share;

	if (r->end - r->start > b->size)
		b->size = r->end - r->start;
	start = start > r->start ? start - r->start : 0;
	end = end > r->start ? end - r->start : 0;
	if (end)
		row_of(hm, b, end - 1);
	share = end > start ? (uint64_t)((unsigned __int128)ms_access_hot_bytes(ev, start + r->start, end + r->start) *
					 MS_HEATMAP_ACCESS_FULL / (end - start)) : 0;
	if (share > MS_HEATMAP_ACCESS_FULL)
		share = MS_HEATMAP_ACCESS_FULL;
	c0 = from > hm->t0 ? (from - hm->t0) / COL_NS(hm) : 0;
	c1 = (t - hm->t0) / COL_NS(hm);
	r0 = start >> (12 + ROW_SHIFT(b));
	r1 = end ? (end - 1) >> (12 + ROW_SHIFT(b)) : 0;
	for (row = r0; row <= r1 && row < MS_HEATMAP_ROWS; row++)
		for (col = c0; col <= c1; col++)
			if (hg_add(&acc_of(hm, b)->grid, (uint32_t)(row * MS_HEATMAP_COLS + col), (uint32_t)share,
				   HG_MAX))
				return -ENOMEM;
	acc_of(hm, b)->events++;
	return 0;
}

/* Band b's access shares, made empty. 0 or -ENOMEM. */
static int new_acc(struct ms_heatmap *hm, struct band *b)
{
	struct band_acc *a = calloc(1, sizeof(*a));

	if (!a || ms_u32map_put(&hm->accs, band_no(hm, b), a)) {
		free(a);
		return -ENOMEM;
	}
	HAS_ACC(b) = 1;
	return 0;
}

static void on_access(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end)
{
	struct ms_heatmap *hm = ctx;
	struct band *b;

	if (!r || end <= start || (hm->opts.pid && r->pid != hm->opts.pid) || !shown(hm, ev->time))
		return;
	column(hm, ev->time);                /* the columns widened first: the band then syncs to them */
	if (!(b = band_of(hm, r)) || (!HAS_ACC(b) && new_acc(hm, b)) || fill_access(hm, b, r, ev, start, end)) {
		hm->error = -ENOMEM;
		return;
	}
	hm->sources |= 1u << ev->access.source;
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

static int busier(uint64_t sa, uint64_t aa, uint64_t sb, uint64_t ab)
{
	if (sa != sb)
		return sa < sb ? 1 : -1;
	return aa < ab ? 1 : aa > ab ? -1 : 0;
}

static int by_samples(const void *pa, const void *pb)
{
	const struct ms_heatmap_band *a = pa, *b = pb;

	int c = busier(a->samples, a->access_events, b->samples, b->access_events);

	return c ? c : by_place(pa, pb);
}

static int by_size(const void *pa, const void *pb)
{
	const struct ms_heatmap_band *a = pa, *b = pb;

	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	return by_place(pa, pb);
}

/* The heatmap whose bands the comparators below order (qsort has no context): where their access lies. */
static const struct ms_heatmap *cmp_hm;

/* The busiest first, ties by place: the bands a limit keeps. */
static int bands_by_samples(const void *pa, const void *pb)
{
	const struct band *a = *(const struct band *const *)pa, *b = *(const struct band *const *)pb;
	int c = busier(hg_sum(&a->cells), access_events(cmp_hm, a), hg_sum(&b->cells), access_events(cmp_hm, b));

	return c ? c : by_place(&(struct ms_heatmap_band){ .region = a->region },
				&(struct ms_heatmap_band){ .region = b->region });
}

/* Every band brought to the map's columns; the largest cell and the samples of all. */
static void sync_all(struct ms_heatmap *hm)
{
	struct band *b;
	uint32_t v;
	size_t i;

	hm->max = 0;
	hm->totals = (struct ms_heatmap_totals){ 0 };
	for (i = 0; i < hm->nr_bands; i++) {
		b = band_at(hm, i);
		band_sync(hm, b);
		if ((v = hg_max(&b->cells)) > hm->max)
			hm->max = v;
		hm->totals.samples += hg_sum(&b->cells);
	}
}

/*
 * A limit's busiest bands as they are met, in a heap of limit with the
 * least busy of them on top: room for the limit, not for every band (the
 * page keeps 5,000 of 500,000, the text grid 24). The caller orders them.
 */
static bool less_busy(const struct band *a, const struct band *b)
{
	return bands_by_samples(&a, &b) > 0;
}

static void heap_down(struct band **h, size_t n, size_t i)
{
	size_t c;
	struct band *t;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && less_busy(h[c + 1], h[c]))
			c++;
		if (!less_busy(h[c], h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/* Band b among the limit busiest of h[0, *m), met so far. */
static void keep_busiest(struct band **h, size_t *m, size_t limit, struct band *b)
{
	size_t i;

	if (*m < limit) {
		h[(*m)++] = b;
		if (*m == limit)
			for (i = limit / 2; i-- > 0;)
				heap_down(h, limit, i);
	} else if (less_busy(h[0], b)) {
		h[0] = b;
		heap_down(h, limit, 0);
	}
}

/* The bands handed out, into *sel (the caller frees it): keep, min_share, limit. */
static size_t select_bands(struct ms_heatmap *hm, struct band **sel)
{
	const struct ms_heatmap_opts *o = &hm->opts;
	struct band *b;
	size_t i, m = 0;
	uint64_t samples;

	cmp_hm = hm;
	for (i = 0; i < hm->nr_bands; i++) {
		b = band_at(hm, i);
		samples = hg_sum(&b->cells);
		if ((!samples && !HAS_ACC(b)) || (o->keep && !o->keep(b->region, o->keep_ctx)))
			continue;
		if (o->min_share > 0 && (double)samples < o->min_share * (double)hm->totals.samples) {
			hm->totals.under_share++;
			continue;
		}
		hm->totals.bands++;
		if (o->limit)
			keep_busiest(sel, &m, o->limit, b);
		else
			sel[m++] = b;
	}
	for (i = 0; i < m; i++)
		*place_of(hm, sel[i]) = (uint32_t)(i + 1);
	return m;
}

/*
 * The marks of the bands handed out, each band's in the order they came,
 * in one array (*first: where band k's start; *nr: how many). A mark's
 * region size counts toward its band's size, as the region was that large
 * when it changed.
 */
static struct ms_heatmap_mark mark_out(const struct ms_heatmap *hm, size_t i)
{
	const struct ms_mark *mk = &hm->marks.v[i];
	uint64_t col = (mk->time_ns > hm->t0 ? mk->time_ns - hm->t0 : 0) / COL_NS(hm);

	return (struct ms_heatmap_mark){ .time_ns = mk->time_ns, .op = ms_marklist_op(&hm->marks, i),
					 .col = col >= MS_HEATMAP_COLS ? MS_HEATMAP_COLS - 1 : (uint32_t)col };
}

static int gather_marks(struct ms_heatmap *hm, size_t m, size_t *first, size_t *nr)
{
	struct band *b;
	size_t i, k, total = 0;

	memset(nr, 0, m * sizeof(*nr));
	for (i = 0; i < hm->marks.n; i++)
		if ((b = band_of_id(hm, hm->marks.v[i].region)) && *place_of(hm, b))
			nr[*place_of(hm, b) - 1]++;
	for (k = 0; k < m; k++) {
		first[k] = total;
		total += nr[k];
		nr[k] = 0;
	}
	free(hm->out_marks);
	if (!(hm->out_marks = malloc((total ? total : 1) * sizeof(*hm->out_marks))))
		return -ENOMEM;
	for (i = 0; i < hm->marks.n; i++) {
		if (!(b = band_of_id(hm, hm->marks.v[i].region)) || !*place_of(hm, b))
			continue;
		k = *place_of(hm, b) - 1;
		hm->out_marks[first[k] + nr[k]++] = mark_out(hm, i);
		if (ms_marklist_size(&hm->marks, i) > b->size)
			b->size = ms_marklist_size(&hm->marks, i);
	}
	return 0;
}

/* Band b as the caller sees it; a dense grid's cells made into cells[0], its access's into cells[1]. */
static int publish(const struct ms_heatmap *hm, const struct band *b, struct ms_heatmap_cell **cells,
		   struct ms_heatmap_band *pub)
{
	const struct band_acc *a = acc_of(hm, b);

	*pub = (struct ms_heatmap_band){
		.region = b->region, .size = b->size, .row_bytes = 4096ULL << ROW_SHIFT(b),
		.samples = hg_sum(&b->cells),
		.access_events = a ? a->events : 0,
	};
	if (hg_cells(&b->cells, &pub->cells, &pub->nr_cells, &cells[0]) ||
	    (a && hg_cells(&a->grid, &pub->access_cells, &pub->nr_access_cells, &cells[1])))
		return -ENOMEM;
	return 0;
}

static void release_out(struct ms_heatmap *hm)
{
	size_t i;

	for (i = 0; hm->out_cells && i < 2 * hm->nr_out; i++)
		free(hm->out_cells[i]);
	free(hm->out_cells);
	free(hm->out);
	free(hm->out_marks);
	hm->out_cells = NULL;
	hm->out = NULL;
	hm->out_marks = NULL;
	hm->nr_out = 0;
}

/* The bands of sel[0, m) made public into hm->out, with their marks, in the order asked for. */
static int publish_all(struct ms_heatmap *hm, struct band **sel, size_t m)
{
	static int (*const order[])(const void *, const void *) = {
		[MS_HEATMAP_BY_SAMPLES] = by_samples, [MS_HEATMAP_BY_PLACE] = by_place, [MS_HEATMAP_BY_SIZE] = by_size,
	};
	size_t *first = malloc((m ? m : 1) * sizeof(*first)), *nr = malloc((m ? m : 1) * sizeof(*nr)), k;
	int err = -ENOMEM;

	hm->out = malloc((m ? m : 1) * sizeof(*hm->out));
	hm->out_cells = calloc(2 * (m ? m : 1), sizeof(*hm->out_cells));
	if (!first || !nr || !hm->out || !hm->out_cells || (err = gather_marks(hm, m, first, nr)))
		goto out;
	hm->nr_out = m;
	for (k = 0; k < m; k++) {
		if ((err = publish(hm, sel[k], &hm->out_cells[2 * k], &hm->out[k])))
			goto out;
		hm->out[k].marks = hm->out_marks + first[k];
		hm->out[k].nr_marks = nr[k];
	}
	qsort(hm->out, m, sizeof(*hm->out),
	      (unsigned int)hm->opts.order < sizeof(order) / sizeof(order[0]) ? order[hm->opts.order] : by_samples);
out:
	free(first);
	free(nr);
	return err;
}

/* The last ms_heatmap_select() and the band it lent, released. */
static void select_release(struct ms_heatmap *hm)
{
	free(hm->sel);
	free(hm->mark_head);
	free(hm->mark_next);
	free(hm->one_marks);
	free(hm->one_cells[0]);
	free(hm->one_cells[1]);
	free(hm->place);
	hm->place = NULL;
	hm->sel = NULL;
	hm->nr_sel = 0;
	hm->mark_head = hm->mark_next = NULL;
	hm->one_marks = NULL;
	hm->cap_one_marks = 0;
	hm->one_cells[0] = hm->one_cells[1] = NULL;
}

/* A new selection begun: what either way handed out released, every band synced, room in *sel for those kept. */
static int begin_select(struct ms_heatmap *hm, struct band ***sel)
{
	size_t n;

	release_out(hm);
	select_release(hm);
	if (hm->error)
		return hm->error;
	sync_all(hm);
	n = hm->opts.limit && hm->opts.limit < hm->nr_bands ? hm->opts.limit : hm->nr_bands;
	*sel = malloc((n ? n : 1) * sizeof(**sel));
	hm->place = calloc(hm->nr_bands ? hm->nr_bands : 1, sizeof(*hm->place));
	return *sel && hm->place ? 0 : -ENOMEM;
}

MS_EXPORT int ms_heatmap_bands(struct ms_heatmap *hm, const struct ms_heatmap_band **bands, size_t *n,
			       uint64_t *start_ns, uint64_t *col_ns)
{
	struct band **sel;
	size_t m;
	int err;

	if ((err = begin_select(hm, &sel)))
		return err;
	m = select_bands(hm, sel);
	err = publish_all(hm, sel, m);
	free(sel);
	select_release(hm);              /* the places: what was handed out holds all it needs */
	if (err) {
		release_out(hm);
		return err;
	}
	*bands = hm->out;
	*n = m;
	*start_ns = hm->t0;
	*col_ns = COL_NS(hm);
	return 0;
}

/*
 * The bands one at a time (ms_heatmap_select, ms_heatmap_band): the
 * selected bands' pointers in order and each one's marks as a list
 * through the marks, 8 bytes a band and 4 a mark, in place of 96 bytes a
 * band and its marks copied: drawing every band of 500,000 costs one.
 */
static int (*sel_order)(const void *, const void *);

static int cmp_sel(const void *pa, const void *pb)
{
	const struct band *a = *(const struct band *const *)pa, *b = *(const struct band *const *)pb;

	return sel_order(&(struct ms_heatmap_band){ .region = a->region, .size = a->size,
						   .samples = hg_sum(&a->cells),
						   .access_events = access_events(cmp_hm, a) },
			 &(struct ms_heatmap_band){ .region = b->region, .size = b->size,
						   .samples = hg_sum(&b->cells),
						   .access_events = access_events(cmp_hm, b) });
}

/* The selected bands (out set) in the order asked for, each band's size grown by its marks' as publish_all does. */
static void order_selected(struct ms_heatmap *hm)
{
	static int (*const order[])(const void *, const void *) = {
		[MS_HEATMAP_BY_SAMPLES] = by_samples, [MS_HEATMAP_BY_PLACE] = by_place, [MS_HEATMAP_BY_SIZE] = by_size,
	};
	struct band *b;
	size_t i;

	for (i = 0; i < hm->marks.n; i++)
		if ((b = band_of_id(hm, hm->marks.v[i].region)) && *place_of(hm, b) && ms_marklist_size(&hm->marks, i) > b->size)
			b->size = ms_marklist_size(&hm->marks, i);
	sel_order = (unsigned int)hm->opts.order < sizeof(order) / sizeof(order[0]) ? order[hm->opts.order] :
		    by_samples;
	cmp_hm = hm;
	qsort(hm->sel, hm->nr_sel, sizeof(*hm->sel), cmp_sel);
	for (i = 0; i < hm->nr_sel; i++)
		*place_of(hm, hm->sel[i]) = (uint32_t)(i + 1);
}

/* Each selected band's marks, linked in the order they came. */
static int link_marks(struct ms_heatmap *hm)
{
	struct band *b;
	size_t i;

	if (hm->marks.n >= UINT32_MAX)
		return -ENOMEM;
	hm->mark_head = calloc(hm->nr_sel ? hm->nr_sel : 1, sizeof(*hm->mark_head));
	hm->mark_next = calloc(hm->marks.n ? hm->marks.n : 1, sizeof(*hm->mark_next));
	if (!hm->mark_head || !hm->mark_next)
		return -ENOMEM;
	for (i = hm->marks.n; i-- > 0;) {
		if (!(b = band_of_id(hm, hm->marks.v[i].region)) || !*place_of(hm, b))
			continue;
		hm->mark_next[i] = hm->mark_head[*place_of(hm, b) - 1];
		hm->mark_head[*place_of(hm, b) - 1] = (uint32_t)i + 1;
	}
	free(hm->place);                 /* the lists hold the places from here */
	hm->place = NULL;
	return 0;
}

MS_EXPORT int ms_heatmap_select(struct ms_heatmap *hm, size_t *n, uint64_t *start_ns, uint64_t *col_ns)
{
	int err;

	*n = 0;
	if ((err = begin_select(hm, &hm->sel)))
		return err;
	hm->nr_sel = select_bands(hm, hm->sel);
	order_selected(hm);
	if ((err = link_marks(hm))) {
		select_release(hm);
		return err;
	}
	*n = hm->nr_sel;
	*start_ns = hm->t0;
	*col_ns = COL_NS(hm);
	return 0;
}

MS_EXPORT const struct ms_heatmap_band *ms_heatmap_band(struct ms_heatmap *hm, size_t i)
{
	size_t nr = 0;
	uint32_t j;

	if (i >= hm->nr_sel) {
		errno = ERANGE;
		return NULL;
	}
	for (j = hm->mark_head[i]; j; j = hm->mark_next[j - 1])
		nr++;
	free(hm->one_cells[0]);
	free(hm->one_cells[1]);
	hm->one_cells[0] = hm->one_cells[1] = NULL;
	if (MS_GROW(hm->one_marks, nr ? nr : 1, hm->cap_one_marks, 16, SIZE_MAX, false) ||
	    publish(hm, hm->sel[i], hm->one_cells, &hm->one)) {
		errno = ENOMEM;
		return NULL;
	}
	for (nr = 0, j = hm->mark_head[i]; j; j = hm->mark_next[j - 1])
		hm->one_marks[nr++] = mark_out(hm, j - 1);
	hm->one.marks = hm->one_marks;
	hm->one.nr_marks = nr;
	return &hm->one;
}

MS_EXPORT uint32_t ms_heatmap_max(const struct ms_heatmap *hm)
{
	return hm->max;
}

MS_EXPORT void ms_heatmap_totals(const struct ms_heatmap *hm, struct ms_heatmap_totals *t)
{
	*t = hm->totals;
}

MS_EXPORT void ms_heatmap_free(struct ms_heatmap *hm)
{
	struct band_acc *a;
	size_t i, pos;

	if (!hm)
		return;
	for (i = 0; i < hm->nr_bands; i++)
		hg_release(&band_at(hm, i)->cells);
	for (pos = 0; (a = ms_u32map_next(&hm->accs, &pos, NULL));) {
		hg_release(&a->grid);
		free(a);
	}
	ms_u32map_release(&hm->accs);
	for (i = 0; i < hm->cap_chunks; i++)
		free(hm->chunks[i]);
	free(hm->chunks);
	free(hm->by_region);
	ms_marklist_release(&hm->marks);
	release_out(hm);
	select_release(hm);
	free(hm);
}
