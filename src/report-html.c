/*
 * mapscope report --format html: one self-contained page. The same pass as
 * the table runs the heatmap, hugepage, unmapped-access and change
 * analyses; what they found is written as one JSON object into the page
 * (src/report.html, built into the binary), whose script renders it. Only
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

#include "cli.h"
#include "ms_version.h"
#include "print-change.h"
#include "replay.h"
#include "report-html.h"

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

struct html_change {
	uint64_t time_ns, start, end, new_start, new_end;
	uint32_t pid, tid;
	int region;                  /* its id, or -1 */
	enum ms_aspace_op op;
	char what[16];
	char *name;
};

struct html_run {
	struct ms_session *s;
	long pid;
	const char *comm;
	struct ms_heatmap *hm;
	struct ms_hugepages *hp;
	struct ms_unmapped *un;
	struct html_change *changes;
	size_t nr_changes, cap_changes, changes_total;
};

static bool keep(const struct html_run *h, const struct ms_region *r, uint32_t pid)
{
	if (h->pid >= 0 && pid != (uint32_t)h->pid)
		return false;
	return !h->comm || (r && !strcmp(r->comm, h->comm));
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct html_run *h = ctx;
	struct html_change *x;
	uint64_t from, to;

	if (!keep(h, c->region, c->pid))
		return 0;
	if (ms_session_window(s, &from, &to) && (c->time_ns < from || c->time_ns > to))
		return 0;
	h->changes_total++;
	if (h->nr_changes == HTML_MAX_CHANGES)
		return 0;
	if (h->nr_changes == h->cap_changes) {
		size_t cap = h->cap_changes ? 2 * h->cap_changes : 1024;
		void *p = realloc(h->changes, cap * sizeof(*h->changes));

		if (!p)
			return -ENOMEM;
		h->changes = p;
		h->cap_changes = cap;
	}
	x = &h->changes[h->nr_changes];
	*x = (struct html_change){
		.time_ns = c->time_ns, .start = c->start, .end = c->end, .new_start = c->new_start,
		.new_end = c->new_end, .pid = c->pid, .tid = c->tid, .op = c->op,
		.region = c->region ? (int)c->region->id : -1, .name = strdup(c->name),
	};
	if (!x->name)
		return -ENOMEM;
	change_what(c, x->what);
	h->nr_changes++;
	return 0;
}

static const struct ms_analysis changes_analysis = { .name = "html-changes", .change = on_change };

struct html_run *html_new(struct ms_session *s, long pid, const char *comm)
{
	struct html_run *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->s = s;
	h->pid = pid;
	h->comm = comm;
	h->hm = ms_heatmap_new(pid >= 0 ? (uint32_t)pid : 0);
	h->hp = ms_hugepages_new(NULL);
	h->un = ms_unmapped_new();
	if (!h->hm || !h->hp || !h->un || ms_session_add(s, &ms_heatmap_analysis, h->hm) ||
	    ms_session_add(s, &ms_hugepages_analysis, h->hp) || ms_session_add(s, &ms_unmapped_analysis, h->un) ||
	    ms_session_add(s, &changes_analysis, h)) {
		html_free(h);
		return NULL;
	}
	return h;
}

void html_free(struct html_run *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->nr_changes; i++)
		free(h->changes[i].name);
	free(h->changes);
	ms_heatmap_free(h->hm);
	ms_hugepages_free(h->hp);
	ms_unmapped_free(h->un);
	free(h);
}

/* A JSON string that is safe inside a <script> element: '<' never appears. */
static void js_str(FILE *f, const char *s)
{
	const unsigned char *c;

	fputc('"', f);
	for (c = (const unsigned char *)(s ? s : ""); *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&')
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

/* The key_* helpers leave out a key that has no value: the page reads it as null, and 10,000 regions weigh less. */
static void key_str(FILE *f, const char *key, const char *v)
{
	if (!v)
		return;
	fprintf(f, ", \"%s\": ", key);
	js_str(f, v);
}

/* An address as 16 hex digits, so that the page sorts them as strings. */
static void key_addr(FILE *f, const char *key, uint64_t a, bool present)
{
	if (present)
		fprintf(f, ", \"%s\": \"%016" PRIx64 "\"", key, a);
}

/* ns from the recording's start. */
static void key_time(FILE *f, const char *key, uint64_t ns, uint64_t t0, bool present)
{
	if (present)
		fprintf(f, ", \"%s\": %" PRIu64, key, ns > t0 ? ns - t0 : 0);
}

static void write_regions(FILE *f, const struct html_report *in, uint64_t t0)
{
	char perms[5];
	bool first = true;
	size_t i;
	int k;

	fputs(",\n\"regions\": [", f);
	for (i = 0; i < in->n; i++) {
		const struct ms_report_row *row = &in->rows[i];
		const struct ms_region *r = row->region;

		if (!r || !keep(in->h, r, r->pid))
			continue;
		format_perms(r->prot, r->flags, perms);
		fprintf(f, "%s\n{\"id\": %u, \"pid\": %u", first ? "" : ",", r->id, r->pid);
		first = false;
		key_str(f, "comm", r->comm);
		key_addr(f, "start", r->start, true);
		key_addr(f, "end", r->end, true);
		fprintf(f, ", \"size\": %" PRIu64 ", \"perms\": \"%s\", \"kind\": \"%s\"", r->end - r->start, perms,
			ms_region_kind_name(r->kind));
		key_str(f, "name", r->name);
		fprintf(f, ", \"pages\": %" PRIu64 ", \"samples\": %" PRIu64, row->pages, row->samples);
		key_time(f, "first", row->first_ns, t0, row->samples);
		key_time(f, "last", row->last_ns, t0, row->samples);
		key_time(f, "created", r->created_ns, t0, true);
		key_time(f, "ended", r->ended_ns, t0, r->ended_ns);
		key_str(f, "alloc", row->alloc);
		key_str(f, "alloc_chain", ms_session_alloc_chain(in->h->s, r));
		if (r->records_lost)
			fputs(", \"lost\": true", f);
		if (row->nr_children)
			fputs(", \"code\": [", f);
		for (k = 0; k < row->nr_children; k++) {
			fprintf(f, "%s{\"samples\": %" PRIu64, k ? ", " : "", row->children[k].samples);
			key_str(f, "symbol", row->children[k].symbol);
			key_str(f, "dso", row->children[k].dso);
			fputc('}', f);
		}
		fputs(row->nr_children ? "]}" : "}", f);
	}
	fprintf(f, "],\n\"unmapped\": {\"samples\": %" PRIu64 ", \"pages\": %" PRIu64, in->un->samples, in->un->pages);
	key_time(f, "first", in->un->first_ns, t0, in->un->samples);
	key_time(f, "last", in->un->last_ns, t0, in->un->samples);
	fputc('}', f);
}

static int write_heat(FILE *f, const struct html_report *in)
{
	const struct ms_heatmap_band *b;
	uint64_t start, col_ns;
	size_t n, i, k, m = 0, cells;
	int err;

	if ((err = ms_heatmap_bands(in->h->hm, &b, &n, &start, &col_ns)))
		return err;
	fprintf(f, ",\n\"heat\": {\"cols\": %d, \"rows\": %d, \"col_ns\": %" PRIu64 ", \"max\": %u, \"bands\": [",
		MS_HEATMAP_COLS, MS_HEATMAP_ROWS, col_ns, ms_heatmap_max(in->h->hm));
	for (i = 0; i < n; i++) {
		if (!keep(in->h, b[i].region, b[i].region->pid))
			continue;
		fprintf(f, "%s\n{\"region\": %u, \"size\": %" PRIu64 ", \"row_bytes\": %" PRIu64 ", \"samples\": %" PRIu64
			", \"cells\": [", m++ ? "," : "", b[i].region->id, b[i].size, b[i].row_bytes, b[i].samples);
		/* Sparse: cell index, count; most of a band is empty. */
		for (k = 0, cells = 0; k < MS_HEATMAP_ROWS * MS_HEATMAP_COLS; k++)
			if (b[i].cells[k])
				fprintf(f, "%s%zu,%u", cells++ ? "," : "", k, b[i].cells[k]);
		fputs("], \"marks\": [", f);
		for (k = 0; k < b[i].nr_marks; k++)
			fprintf(f, "%s[%u, \"%s\"]", k ? "," : "", b[i].marks[k].col, ms_aspace_op_name(b[i].marks[k].op));
		fputs("]}", f);
	}
	fputs("]}", f);
	return 0;
}

static void write_changes(FILE *f, const struct html_run *h, uint64_t t0)
{
	size_t i;

	fputs(",\n\"changes\": [", f);
	for (i = 0; i < h->nr_changes; i++) {
		const struct html_change *c = &h->changes[i];

		fprintf(f, "%s\n{\"pid\": %u, \"tid\": %u, \"op\": \"%s\"", i ? "," : "", c->pid, c->tid,
			ms_aspace_op_name(c->op));
		key_time(f, "t", c->time_ns, t0, true);
		/* A range where the change has one (0, 0: none), as print_change() says it. */
		key_addr(f, "start", c->start, c->start || c->end);
		key_addr(f, "end", c->end, c->start || c->end);
		key_addr(f, "new_start", c->new_start, c->new_start || c->new_end);
		key_addr(f, "new_end", c->new_end, c->new_start || c->new_end);
		key_str(f, "what", c->what);
		key_str(f, "name", c->name);
		if (c->region >= 0)
			fprintf(f, ", \"region\": %d", c->region);
		fputc('}', f);
	}
	fprintf(f, "],\n\"changes_total\": %zu", h->changes_total);
}

static int write_huge(FILE *f, const struct html_report *in)
{
	struct ms_huge_advice *v = NULL;
	size_t n = 0, i, m = 0, left = 0, others = 0;
	int err;

	err = ms_hugepages_advice(in->h->hp, ms_session_aspace(in->h->s), in->st->last_time, &v, &n);
	if (err)
		return err;
	fprintf(f, ",\n\"huge\": {\"tlb\": %s, \"advice\": [", ms_hugepages_have_tlb(in->h->hp) ? "true" : "false");
	for (i = 0; i < n; i++) {
		const struct ms_huge_advice *a = &v[i];

		if (!keep(in->h, a->region, a->region->pid))
			continue;
		/* Every advised region; of the others (one per small region), the first HTML_MAX_UNADVISED. */
		if (!a->advised && others++ >= HTML_MAX_UNADVISED) {
			left++;
			continue;
		}
		fprintf(f, "%s\n{\"region\": %u, \"advised\": %s", m++ ? "," : "", a->region->id,
			a->advised ? "true" : "false");
		key_addr(f, "start", a->start, a->advised && a->end);
		key_addr(f, "end", a->end, a->advised && a->end);
		fprintf(f, ", \"spans\": %u, \"aligned_spans\": %u, \"pages\": %" PRIu64 ", \"faults\": %" PRIu64
			", \"samples\": %" PRIu64 ", \"benefit\": %" PRIu64, a->spans, a->aligned_spans, a->pages,
			a->faults, a->samples, a->benefit);
		key_str(f, "reason", a->reason);
		fputc('}', f);
	}
	fprintf(f, "], \"left_out\": %zu}", left);
	free(v);
	return 0;
}

static int write_unmapped(FILE *f, const struct html_report *in, uint64_t t0)
{
	struct ms_symbols *syms = ms_session_symbols(in->h->s);
	const struct ms_unmapped_access *acc;
	char code[512], site[256], chain[1024];
	const char *file;
	size_t n = 0, i, m = 0;
	int err, line;

	if ((err = ms_unmapped_results(in->h->un, &acc, &n)))
		return err;
	fputs(",\n\"unmapped_accesses\": [", f);
	for (i = 0; i < n; i++) {
		const struct ms_unmapped_access *a = &acc[i];

		/* No region holds the address: the process's name is its stack's. */
		if (!keep(in->h, ms_aspace_stack(ms_session_aspace(in->h->s), a->pid), a->pid))
			continue;
		replay_code(syms, a->pid, a->ip, code, sizeof(code), &file, &line);
		if (file)
			snprintf(code + strlen(code), sizeof(code) - strlen(code), " (%s:%d)", file, line);
		fprintf(f, "%s\n{\"class\": \"%s\", \"access\": \"%s\", \"count\": %" PRIu64 ", \"pid\": %u, \"tid\": %u",
			m++ ? "," : "", ms_unmapped_class_name(a->cls), ms_access_kind_name(a->kind), a->count, a->pid,
			a->tid);
		key_addr(f, "address", a->address, true);
		key_time(f, "first", a->first_ns, t0, true);
		key_time(f, "last", a->last_ns, t0, true);
		key_str(f, "code", code);
		if (a->cls == MS_UNMAPPED_FREED) {
			site[0] = chain[0] = '\0';
			if (a->freed_chain_len && syms)
				ms_symbols_call_site(syms, a->pid, a->freed_chain, a->freed_chain_len, site, sizeof(site),
						     chain, sizeof(chain));
			fprintf(f, ", \"freed\": {\"call\": \"%s\", \"tid\": %u", a->freed_call, a->freed_tid);
			key_time(f, "t", a->freed_ns, t0, true);
			key_str(f, "site", site[0] ? site : NULL);
			fputs("}", f);
		}
		fputc('}', f);
	}
	fputc(']', f);
	return 0;
}

int html_write(FILE *f, const struct html_report *in)
{
	const char *mark = strstr(ms_report_page, DATA_MARK);
	uint64_t t0 = in->st->first_time;
	char aside[512];
	int err;

	if (!mark)
		return -EINVAL;             /* the built-in page lost its data mark: a build error */
	fwrite(ms_report_page, 1, (size_t)(mark - ms_report_page), f);
	fputs("{\"input\": ", f);
	js_str(f, in->input);
	key_str(f, "version", MS_VERSION_STRING);
	key_str(f, "window", in->window);
	replay_set_aside(in->st, aside, sizeof(aside));
	key_str(f, "set_aside", aside[0] ? aside : NULL);
	fprintf(f, ", \"samples\": %" PRIu64 ", \"file_samples\": %" PRIu64 ", \"lost\": %" PRIu64
		", \"duration_ns\": %" PRIu64 ", \"uncertain\": %s", in->total, replay_file_samples(in->st),
		in->st->lost, in->st->last_time > t0 ? in->st->last_time - t0 : 0, in->uncertain ? "true" : "false");
	write_regions(f, in, t0);
	if ((err = write_heat(f, in)))
		return err;
	write_changes(f, in->h, t0);
	if ((err = write_huge(f, in)) || (err = write_unmapped(f, in, t0)))
		return err;
	fputs("}\n", f);
	fputs(mark + strlen(DATA_MARK), f);
	return ferror(f) ? -EIO : 0;
}
