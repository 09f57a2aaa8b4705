/*
 * mapscope report --format html: one self-contained page. The same pass as
 * the table runs the heatmap, hugepage, unmapped-access and change
 * analyses; what they found is written as one JSON object into the page
 * (lib/output/report.html, built into the library), whose script renders it. Only
 * aggregates go in: rows, heatmap cells, changes (at most HTML_MAX_CHANGES),
 * never a sample each.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/heatmap.h>
#include <mapscope/hugepages.h>
#include <mapscope/symbols.h>
#include <mapscope/unmapped.h>

#include "output/format.h"
#include "output/json.h"
#include "ms_version.h"
#include "output/html.h"
#include "util/grow.h"
#include "util/strpool.h"

/* The page, with "/ *MAPSCOPE-DATA* /" (no spaces) where the data goes. */
__asm__(".pushsection .rodata\n"
	".balign 16\n"
	"ms_report_page:\n"
	".incbin \"" MS_REPORT_PAGE "\"\n"
	".byte 0\n"
	".popsection\n");
extern const char ms_report_page[] __attribute__((visibility("hidden")));

#define DATA_MARK "/*MAPSCOPE-DATA*/"
#define HTML_MAX_CHANGES 100000
#define HTML_MAX_UNADVISED 500
#define HTML_MAX_BANDS 5000          /* the busiest heatmap bands in the page: a browser draws 500 at a time */

struct html_change {
	uint64_t time_ns, start, end, new_start, new_end;
	uint32_t pid, tid;
	int region;                  /* its id, or -1 */
	enum ms_aspace_op op;
	char what[16];
	const char *name;            /* the pool's: a name shared by many changes is kept once */
};

/* A packed change's bytes at most: nine varints of ten bytes, the op, what's length and bytes, the name. */
#define CHANGE_MAX (9 * 10 + 1 + 16 + sizeof(char *))

struct ms_html {
	struct ms_session *s;
	long pid;
	const char *comm;
	struct ms_heatmap *hm;
	struct ms_hugepages *hp;
	struct ms_unmapped *un;
	/*
	 * The changes kept, packed one after another (pack_change): about 35
	 * bytes each, where the struct is 80, and 100,000 of them wait for
	 * the page's end.
	 */
	uint8_t *changes;
	size_t len_changes, cap_changes, nr_changes, changes_total;
	uint64_t last_time;          /* of the change packed last: times are packed as the step from it */
	struct ms_strpool names;
};

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	return p;
}

static const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
	unsigned int shift = 0;

	for (*v = 0; *p & 0x80; shift += 7)
		*v |= (uint64_t)(*p++ & 0x7f) << shift;
	*v |= (uint64_t)*p++ << shift;
	return p;
}

/* Change x onto the packed list: ends and steps as differences (wrapping), which are small. */
static void pack_change(struct ms_html *h, const struct html_change *x)
{
	uint8_t *p = h->changes + h->len_changes;
	size_t n = strlen(x->what);

	p = put_varint(p, x->time_ns - h->last_time);
	p = put_varint(p, x->pid);
	p = put_varint(p, x->tid);
	p = put_varint(p, (uint64_t)(x->region + 1));
	p = put_varint(p, x->start);
	p = put_varint(p, x->end - x->start);
	p = put_varint(p, x->new_start);
	p = put_varint(p, x->new_end - x->new_start);
	*p++ = (uint8_t)x->op;
	*p++ = (uint8_t)n;
	memcpy(p, x->what, n);
	memcpy(p + n, &x->name, sizeof(x->name));
	h->len_changes = (size_t)(p + n + sizeof(x->name) - h->changes);
	h->last_time = x->time_ns;
}

/* The change packed at p into *x, after one whose time was *time; where the next begins. */
static const uint8_t *unpack_change(const uint8_t *p, uint64_t *time, struct html_change *x)
{
	uint64_t v[8];
	int k;

	for (k = 0; k < 8; k++)
		p = get_varint(p, &v[k]);
	*time += v[0];
	*x = (struct html_change){ .time_ns = *time, .pid = (uint32_t)v[1], .tid = (uint32_t)v[2],
				   .region = (int)v[3] - 1, .start = v[4], .end = v[4] + v[5], .new_start = v[6],
				   .new_end = v[6] + v[7], .op = (enum ms_aspace_op)p[0] };
	memcpy(x->what, p + 2, p[1]);
	memcpy(&x->name, p + 2 + p[1], sizeof(x->name));
	return p + 2 + p[1] + sizeof(x->name);
}

static bool keep(const struct ms_html *h, const struct ms_region *r, uint32_t pid)
{
	if (h->pid >= 0 && pid != (uint32_t)h->pid)
		return false;
	return !h->comm || (r && !strcmp(r->comm, h->comm));
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct ms_html *h = ctx;
	struct html_change x;
	uint64_t from, to;
	char buf[16];

	if (!keep(h, c->region, c->pid))
		return 0;
	if (ms_session_window(s, &from, &to) && (c->time_ns < from || c->time_ns > to))
		return 0;
	h->changes_total++;
	if (h->nr_changes == HTML_MAX_CHANGES)
		return 0;
	if (MS_GROW(h->changes, h->len_changes + CHANGE_MAX, h->cap_changes, 1 << 16, SIZE_MAX, false))
		return -ENOMEM;
	x = (struct html_change){
		.time_ns = c->time_ns, .start = c->start, .end = c->end, .new_start = c->new_start,
		.new_end = c->new_end, .pid = c->pid, .tid = c->tid, .op = c->op,
		.region = c->region ? (int)c->region->id : -1, .name = ms_strpool_intern(&h->names, c->name),
	};
	if (!x.name)
		return -ENOMEM;
	snprintf(x.what, sizeof(x.what), "%s", ms_format_change_word(c, buf));   /* advice and lock: a name of its own */
	pack_change(h, &x);
	h->nr_changes++;
	return 0;
}

static bool keep_band(const struct ms_region *r, void *ctx)
{
	return keep(ctx, r, r->pid);
}

static const struct ms_analysis changes_analysis = { .name = "html-changes", .change = on_change };

struct ms_html *ms_html_new(struct ms_session *s, long pid, const char *comm)
{
	struct ms_html *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->s = s;
	h->pid = pid;
	h->comm = comm;
	h->hm = ms_heatmap_new(&(struct ms_heatmap_opts){ .pid = pid >= 0 ? (uint32_t)pid : 0, .keep = keep_band,
							 .keep_ctx = h, .limit = HTML_MAX_BANDS });
	h->hp = ms_hugepages_new(NULL);
	h->un = ms_unmapped_new();
	if (!h->hm || !h->hp || !h->un || ms_session_add(s, &ms_heatmap_analysis, h->hm) ||
	    ms_session_add(s, &ms_hugepages_analysis, h->hp) || ms_session_add(s, &ms_unmapped_analysis, h->un) ||
	    ms_session_add(s, &changes_analysis, h)) {
		ms_html_free(h);
		return NULL;
	}
	return h;
}

/* The changes, once written: the parts of the page after them need the memory more. */
static void release_changes(struct ms_html *h)
{
	free(h->changes);
	ms_strpool_release(&h->names);
	h->changes = NULL;
	h->nr_changes = h->len_changes = h->cap_changes = 0;
}

void ms_html_free(struct ms_html *h)
{
	if (!h)
		return;
	release_changes(h);
	ms_heatmap_free(h->hm);
	ms_hugepages_free(h->hp);
	ms_unmapped_free(h->un);
	free(h);
}

/* The key_* helpers leave out a key that has no value: the page reads it as null, and 10,000 regions weigh less. */
static void key_str(struct ms_json *w, const char *key, const char *v)
{
	if (v)
		ms_json_key_str(w, key, v);
}

/* An address as 16 hex digits, so that the page sorts them as strings. */
static void key_addr(struct ms_json *w, const char *key, uint64_t a, bool present)
{
	if (!present)
		return;
	ms_json_key(w, key);
	ms_json_addr16(w, a);
}

/* ns from the recording's start. */
static void key_time(struct ms_json *w, const char *key, uint64_t ns, uint64_t t0, bool present)
{
	if (present)
		ms_json_key_u64(w, key, ns > t0 ? ns - t0 : 0);
}

static void html_region(struct ms_json *w, const struct ms_html_report *in, const struct ms_report_row *row,
			uint64_t t0)
{
	const struct ms_region *r = row->region;
	char perms[5];
	int k;

	ms_format_perms(r->prot, r->flags, perms);
	ms_json_object_begin(w);
	ms_json_key_u64(w, "id", r->id);
	ms_json_key_u64(w, "pid", r->pid);
	key_str(w, "comm", r->comm);
	key_addr(w, "start", r->start, true);
	key_addr(w, "end", r->end, true);
	ms_json_key_u64(w, "size", r->end - r->start);
	ms_json_key_str(w, "perms", perms);
	ms_json_key_str(w, "kind", ms_region_kind_name(r->kind));
	key_str(w, "name", r->name);
	ms_json_key_u64(w, "pages", row->pages);
	ms_json_key_u64(w, "samples", row->samples);
	key_time(w, "first", row->first_ns, t0, row->samples);
	key_time(w, "last", row->last_ns, t0, row->samples);
	key_time(w, "created", r->created_ns, t0, true);
	key_time(w, "ended", r->ended_ns, t0, r->ended_ns);
	key_str(w, "alloc", row->alloc);
	key_str(w, "alloc_chain", ms_session_alloc_chain(in->h->s, r));
	if (r->records_lost)
		ms_json_key_bool(w, "lost", true);
	if (row->access_intervals) {                 /* ongoing access: record --referenced, --damon */
		ms_json_key_u64(w, "ref_mean", row->ref_pages_mean);
		ms_json_key_u64(w, "ref_peak", row->ref_pages_peak);
		ms_json_key_u64(w, "accesses", row->accesses);
		ms_json_key_u64(w, "hot_ppm", (uint64_t)(row->hot_share * 1e6 + 0.5));
	}
	if (row->nr_children) {
		ms_json_key(w, "code");
		ms_json_array_begin(w);
	}
	for (k = 0; k < row->nr_children; k++) {
		ms_json_object_begin(w);
		ms_json_key_u64(w, "samples", row->children[k].samples);
		key_str(w, "symbol", row->children[k].symbol);
		key_str(w, "dso", row->children[k].dso);
		ms_json_object_end(w);
	}
	if (row->nr_children)
		ms_json_array_end(w);
	ms_json_object_end(w);
}

static void write_regions(struct ms_json *w, const struct ms_html_report *in, uint64_t t0)
{
	size_t i;

	ms_json_newline(w, 0);
	ms_json_key(w, "regions");
	ms_json_array_begin(w);
	for (i = 0; i < in->n; i++) {
		const struct ms_report_row *row = ms_report_row(in->rep, i);
		const struct ms_region *r = row->region;

		if (!r || !keep(in->h, r, r->pid))
			continue;
		ms_json_newline(w, 0);
		html_region(w, in, row, t0);
	}
	ms_json_array_end(w);
	ms_json_newline(w, 0);
	ms_json_key(w, "unmapped");
	ms_json_object_begin(w);
	ms_json_key_u64(w, "samples", in->un->samples);
	ms_json_key_u64(w, "pages", in->un->pages);
	key_time(w, "first", in->un->first_ns, t0, in->un->samples);
	key_time(w, "last", in->un->last_ns, t0, in->un->samples);
	ms_json_object_end(w);
	if (in->release) {
		ms_report_free(*in->release);
		*in->release = NULL;
	}
}

/* With ongoing access, a band's heat is its access shares (a band charged none: no cells). */
static void heat_band(struct ms_json *w, const struct ms_heatmap_band *b, bool access)
{
	const struct ms_heatmap_cell *cells = access ? b->access_cells : b->cells;
	size_t k, n = access ? b->nr_access_cells : b->nr_cells;

	ms_json_object_begin(w);
	ms_json_key_u64(w, "region", b->region->id);
	ms_json_key_u64(w, "size", b->size);
	ms_json_key_u64(w, "row_bytes", b->row_bytes);
	ms_json_key_u64(w, "samples", b->samples);
	/* Sparse: cell index, count; most of a band is empty. */
	ms_json_key(w, "cells");
	ms_json_array_begin_tight(w);
	for (k = 0; k < n; k++) {
		ms_json_u64(w, cells[k].index);
		ms_json_u64(w, cells[k].value);
	}
	ms_json_array_end(w);
	ms_json_key(w, "marks");
	ms_json_array_begin_tight(w);
	for (k = 0; k < b->nr_marks; k++) {
		ms_json_array_begin(w);
		ms_json_u64(w, b->marks[k].col);
		ms_json_str(w, ms_aspace_op_name(b->marks[k].op));
		ms_json_array_end(w);
	}
	ms_json_array_end(w);
	ms_json_object_end(w);
}

static int write_heat(struct ms_json *w, const struct ms_html_report *in)
{
	const char *access = ms_heatmap_evidence(in->h->hm);
	const struct ms_heatmap_band *b;
	struct ms_heatmap_totals tot;
	uint64_t start, col_ns;
	size_t n, i;
	int err;

	if ((err = ms_heatmap_bands(in->h->hm, &b, &n, &start, &col_ns)))
		return err;
	ms_heatmap_totals(in->h->hm, &tot);
	if (access) {
		ms_json_newline(w, 0);
		ms_json_key_str(w, "access", access);
	}
	ms_json_newline(w, 0);
	ms_json_key(w, "heat");
	ms_json_object_begin(w);
	ms_json_key_int(w, "cols", MS_HEATMAP_COLS);
	ms_json_key_int(w, "rows", MS_HEATMAP_ROWS);
	ms_json_key_u64(w, "col_ns", col_ns);
	ms_json_key_u64(w, "max", access ? MS_HEATMAP_ACCESS_FULL : ms_heatmap_max(in->h->hm));
	ms_json_key_u64(w, "bands_total", tot.bands);    /* the busiest HTML_MAX_BANDS are in bands */
	ms_json_key(w, "bands");
	ms_json_array_begin(w);
	for (i = 0; i < n; i++) {
		ms_json_newline(w, 0);
		heat_band(w, &b[i], access != NULL);
	}
	ms_json_array_end(w);
	ms_json_object_end(w);
	/* The run is over and the bands are written: their memory goes to the hugepage advice that follows. */
	ms_heatmap_free(in->h->hm);
	in->h->hm = NULL;
	return 0;
}

static void write_changes(struct ms_json *w, struct ms_html *h, uint64_t t0)
{
	const uint8_t *p = h->changes;
	struct html_change one, *c = &one;
	uint64_t time = 0;
	size_t i;

	ms_json_newline(w, 0);
	ms_json_key(w, "changes");
	ms_json_array_begin(w);
	for (i = 0; i < h->nr_changes; i++) {
		p = unpack_change(p, &time, &one);

		ms_json_newline(w, 0);
		ms_json_object_begin(w);
		ms_json_key_u64(w, "pid", c->pid);
		ms_json_key_u64(w, "tid", c->tid);
		ms_json_key_str(w, "op", ms_aspace_op_name(c->op));
		key_time(w, "t", c->time_ns, t0, true);
		/* A range where the change has one (0, 0: none), as print_change() says it. */
		key_addr(w, "start", c->start, c->start || c->end);
		key_addr(w, "end", c->end, c->start || c->end);
		key_addr(w, "new_start", c->new_start, c->new_start || c->new_end);
		key_addr(w, "new_end", c->new_end, c->new_start || c->new_end);
		key_str(w, "what", c->what);
		key_str(w, "name", c->name);
		if (c->region >= 0)
			ms_json_key_int(w, "region", c->region);
		ms_json_object_end(w);
	}
	ms_json_array_end(w);
	ms_json_newline(w, 0);
	ms_json_key_u64(w, "changes_total", h->changes_total);
	release_changes(h);
}

static void huge_advice(struct ms_json *w, const struct ms_huge_advice *a)
{
	ms_json_object_begin(w);
	ms_json_key_u64(w, "region", a->region->id);
	ms_json_key_bool(w, "advised", a->advised);
	key_addr(w, "start", a->start, a->advised && a->end);
	key_addr(w, "end", a->end, a->advised && a->end);
	ms_json_key_u64(w, "spans", a->spans);
	ms_json_key_u64(w, "aligned_spans", a->aligned_spans);
	ms_json_key_u64(w, "pages", a->pages);
	ms_json_key_u64(w, "faults", a->faults);
	ms_json_key_u64(w, "samples", a->samples);
	ms_json_key_u64(w, "benefit", a->benefit);
	key_str(w, "reason", a->reason);
	ms_json_object_end(w);
}

/* The advice one region at a time: 500,000 regions' advice would be 72 MB at once. */
static int write_huge(struct ms_json *w, const struct ms_html_report *in)
{
	const struct ms_huge_advice *a;
	size_t n = 0, i, left = 0, others = 0;
	int err;

	err = ms_hugepages_sort(in->h->hp, ms_session_aspace(in->h->s), in->st->last_time, &n);
	if (err)
		return err;
	ms_json_newline(w, 0);
	ms_json_key(w, "huge");
	ms_json_object_begin(w);
	ms_json_key_bool(w, "tlb", ms_hugepages_have_tlb(in->h->hp));
	ms_json_key(w, "advice");
	ms_json_array_begin(w);
	for (i = 0; i < n; i++) {
		if (!(a = ms_hugepages_advice_at(in->h->hp, i)))
			return -EINVAL;          /* i < n: cannot be */
		if (!keep(in->h, a->region, a->region->pid))
			continue;
		/* Every advised region; of the others (one per small region), the first HTML_MAX_UNADVISED. */
		if (!a->advised && others++ >= HTML_MAX_UNADVISED) {
			left++;
			continue;
		}
		ms_json_newline(w, 0);
		huge_advice(w, a);
	}
	ms_json_array_end(w);
	ms_json_key_u64(w, "left_out", left);
	ms_json_object_end(w);
	return 0;
}

static void unmapped_access(struct ms_json *w, const struct ms_html_report *in, const struct ms_unmapped_access *a,
			    uint64_t t0)
{
	struct ms_symbols *syms = ms_session_symbols(in->h->s);
	char code[512], site[256], chain[1024];
	const char *file;
	int line;

	ms_format_code(syms, a->pid, a->ip, code, sizeof(code), &file, &line);
	if (file)
		snprintf(code + strlen(code), sizeof(code) - strlen(code), " (%s:%d)", file, line);
	ms_json_object_begin(w);
	ms_json_key_str(w, "class", ms_unmapped_class_name(a->cls));
	ms_json_key_str(w, "access", ms_access_kind_name(a->kind));
	ms_json_key_u64(w, "count", a->count);
	ms_json_key_u64(w, "pid", a->pid);
	ms_json_key_u64(w, "tid", a->tid);
	key_addr(w, "address", a->address, true);
	key_time(w, "first", a->first_ns, t0, true);
	key_time(w, "last", a->last_ns, t0, true);
	key_str(w, "code", code);
	if (a->cls == MS_UNMAPPED_FREED) {
		site[0] = chain[0] = '\0';
		if (a->freed_chain_len && syms)
			ms_symbols_call_site(syms, a->pid, a->freed_chain, a->freed_chain_len, site, sizeof(site),
					     chain, sizeof(chain));
		ms_json_key(w, "freed");
		ms_json_object_begin(w);
		ms_json_key_str(w, "call", a->freed_call);
		ms_json_key_u64(w, "tid", a->freed_tid);
		key_time(w, "t", a->freed_ns, t0, true);
		key_str(w, "site", site[0] ? site : NULL);
		ms_json_object_end(w);
	}
	ms_json_object_end(w);
}

static int write_unmapped(struct ms_json *w, const struct ms_html_report *in, uint64_t t0)
{
	const struct ms_unmapped_access *acc;
	size_t n = 0, i;
	int err;

	if ((err = ms_unmapped_results(in->h->un, &acc, &n)))
		return err;
	ms_json_newline(w, 0);
	ms_json_key(w, "unmapped_accesses");
	ms_json_array_begin(w);
	for (i = 0; i < n; i++) {
		/* No region holds the address: the process's name is its stack's. */
		if (!keep(in->h, ms_aspace_stack(ms_session_aspace(in->h->s), acc[i].pid), acc[i].pid))
			continue;
		ms_json_newline(w, 0);
		unmapped_access(w, in, &acc[i], t0);
	}
	ms_json_array_end(w);
	return 0;
}

/*
 * The prefetch instructions (record --prefetches, hardware prefetch
 * samples), most bad prefetches first, with how many of each one's were
 * bad: only where the recording has any, so other pages are as they were.
 */
static int write_prefetch_sites(struct ms_json *w, const struct ms_html_report *in)
{
	const struct ms_unmapped_prefetch_site *v;
	char code[512];
	const char *file;
	size_t n = 0, i;
	int line, err;

	if ((err = ms_unmapped_prefetch_sites(in->h->un, &v, &n)) || !n)
		return err;
	ms_json_newline(w, 0);
	ms_json_key(w, "prefetch_sites");
	ms_json_array_begin(w);
	for (i = 0; i < n; i++) {
		ms_format_code(ms_session_symbols(in->h->s), v[i].pid, v[i].ip, code, sizeof(code), &file, &line);
		if (file)
			snprintf(code + strlen(code), sizeof(code) - strlen(code), " (%s:%d)", file, line);
		ms_json_newline(w, 0);
		ms_json_object_begin(w);
		key_str(w, "code", code);
		ms_json_key_u64(w, "pid", v[i].pid);
		ms_json_key_u64(w, "prefetches", v[i].prefetches);
		ms_json_key_u64(w, "bad", v[i].bad);
		ms_json_object_end(w);
	}
	ms_json_array_end(w);
	return 0;
}

/* The page's data: one object, escaped for a <script> element. */
static int write_data(struct ms_json *w, const struct ms_html_report *in)
{
	uint64_t t0 = in->st->first_time;
	char aside[512];
	int err;

	ms_json_object_begin(w);
	ms_json_key_str(w, "input", in->input ? in->input : "");
	key_str(w, "version", MS_VERSION_STRING);
	key_str(w, "window", in->window);
	ms_format_set_aside(in->st, aside, sizeof(aside));
	key_str(w, "set_aside", aside[0] ? aside : NULL);
	ms_json_key_u64(w, "samples", in->total);
	ms_json_key_u64(w, "file_samples", ms_format_file_samples(in->st));
	ms_json_key_u64(w, "lost", in->st->lost);
	key_str(w, "losses", in->losses);
	ms_json_key_u64(w, "duration_ns", in->st->last_time > t0 ? in->st->last_time - t0 : 0);
	ms_json_key_bool(w, "uncertain", in->uncertain);
	write_regions(w, in, t0);
	if ((err = write_heat(w, in)))
		return err;
	write_changes(w, in->h, t0);
	if ((err = write_huge(w, in)) || (err = write_unmapped(w, in, t0)) || (err = write_prefetch_sites(w, in)))
		return err;
	ms_json_object_end(w);
	return ms_json_finish(w);
}

int ms_html_write(FILE *f, const struct ms_html_report *in)
{
	const char *mark = strstr(ms_report_page, DATA_MARK);
	struct ms_json w;
	int err;

	if (!mark)
		return -EINVAL;             /* the built-in page lost its data mark: a build error */
	fwrite(ms_report_page, 1, (size_t)(mark - ms_report_page), f);
	ms_json_init(&w, f, MS_JSON_SCRIPT);
	if ((err = write_data(&w, in))) {
		ms_json_finish(&w);         /* what was written reaches f, as before the writer had a buffer */
		return err;
	}
	fputs("\n", f);
	fputs(mark + strlen(DATA_MARK), f);
	return ferror(f) ? -EIO : 0;
}
