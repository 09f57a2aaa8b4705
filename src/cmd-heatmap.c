/*
 * mapscope heatmap: time along x, each region's offsets along y, a cell's
 * colour its samples (lib/analysis/heatmap.c aggregates them). Only the
 * regions with samples are drawn, one band each, so the gaps between them
 * take no room. A character grid for a terminal, or an SVG.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mapscope/heatmap.h>

#include "cli.h"
#include "outfile.h"
#include "commands.h"
#include "output/format.h"
#include "output/svg.h"
#include "parse-options.h"
#include "replay.h"
#include "output/text.h"

static const struct cli_usage usage = {
	.cmd = "heatmap",
	.column = 21,
	.head =
"usage: mapscope heatmap [-i FILE] [--pid PID] [--region ID|NAME] [--format text|svg]\n"
"                        [-o FILE]\n"
"\n"
"Where in each region, and when, the recording's data accesses landed:\n"
"time runs along x (from the first event), the region's offsets along y\n"
"(its start at the bottom), and a cell's colour is its samples (log scale).\n"
"Only regions with samples are drawn, one band each: the gaps between them\n"
"take no room, and memory that moved (mremap) keeps its band. Map, unmap,\n"
"remap and madvise are marked on the band's top edge: M, U, R, A.\n"
"\n"
"Where the recording has ongoing access (record --referenced, --damon), the\n"
"heat is that instead: each cell the share of its bytes found accessed in\n"
"the interval that covers it (with --referenced, a region's whole band\n"
"shows its referenced share per interval), and the output says so; the\n"
"regions drawn are then those with access or samples.\n"
"\n",
	.tail =
"\n"
"EXAMPLES\n"
"  mapscope heatmap\n"
"  mapscope heatmap --region '[heap]'\n"
"  mapscope heatmap --format svg -o heat.svg\n",
};

#define TEXT_ROWS 8                   /* a band's rows in a terminal: 4 of the grid's each */
#define TEXT_BANDS 24                 /* bands shown in a terminal, the busiest */

struct hm_opts {
	const char *input, *output, *region;
	uint32_t pid;
	bool svg;
};

static int parse_args(int argc, char **argv, struct hm_opts *o)
{
	static const char *const formats[] = { "text", "svg", NULL };
	uint64_t pid = 0;
	int svg = 0;
	const struct cli_option options[] = {
		OPT_INPUT(&o->input, CLI_INPUT_HELP),
		OPT_PID(0, "pid", &pid, "only this process's regions"),
		OPT_STRING(0, "region", &o->region, "R", "only this region: its id (report --format json's \"id\")\n"
			   "or a name (\"[heap]\", \"[stack:1234]\", a file's path)"),
		OPT_CHOICE(0, "format", &svg, "FMT", "text (default): a character grid, coloured on a\n"
			   "terminal (not when NO_COLOR is set or stdout is not a\nterminal); svg: an SVG image",
			   formats, "unknown format", ": use text or svg"),
		OPT_STRING('o', "output", &o->output, "FILE", "write there instead of stdout"),
		OPT_END(),
	};
	int n;

	o->input = CLI_DEFAULT_DATA;
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	o->pid = (uint32_t)pid;
	o->svg = svg;
	return 0;
}

/* A region --region names: its id, or its name. */
static bool chosen(const struct hm_opts *o, const struct ms_region *r)
{
	uint64_t id;

	if (!o->region)
		return true;
	if (!cli_parse_u64(o->region, 0, UINT32_MAX, &id))
		return r->id == id;
	return !strcmp(r->name, o->region) || !strcmp(r->proc_name, o->region);
}

static char mark_char(enum ms_aspace_op op)
{
	return op == MS_OP_MAP ? 'M' : op == MS_OP_UNMAP ? 'U' : op == MS_OP_REMAP ? 'R' : 'A';
}

/* Most samples first; among equals, and by_place, the order of kept (address order). */
static int by_samples(const void *pa, const void *pb)
{
	const struct ms_heatmap_band *a = *(const struct ms_heatmap_band *const *)pa;
	const struct ms_heatmap_band *b = *(const struct ms_heatmap_band *const *)pb;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return a < b ? -1 : a > b;
}

static int by_place(const void *pa, const void *pb)
{
	const struct ms_heatmap_band *a = *(const struct ms_heatmap_band *const *)pa;
	const struct ms_heatmap_band *b = *(const struct ms_heatmap_band *const *)pb;

	return a < b ? -1 : a > b;
}

/* A text cell: the sum of the grid rows it covers. */
static uint32_t text_cell(const struct ms_heatmap_band *b, size_t r, size_t col)
{
	uint32_t v = 0;
	size_t row;

	for (row = r * (MS_HEATMAP_ROWS / TEXT_ROWS); row < (r + 1) * (MS_HEATMAP_ROWS / TEXT_ROWS); row++)
		v += b->cells[row * MS_HEATMAP_COLS + col];
	return v;
}

static void print_text(FILE *f, const struct ms_heatmap_band **b, size_t n, size_t all,
		       uint64_t col_ns, bool colour, const char *what)
{
	static const char ramp[] = " .:-=+*#%@";
	/* A heat ramp of 256-colour backgrounds: blue to red to yellow. */
	static const int heat[] = { 0, 17, 19, 21, 57, 93, 129, 165, 161, 197, 202, 208, 214, 220, 226 };
	const int levels = colour ? (int)(sizeof(heat) / sizeof(heat[0])) : (int)sizeof(ramp) - 1;
	char size[32], edge[MS_HEATMAP_COLS + 1];
	size_t i, k, col, r;
	uint64_t used;
	uint32_t v, max = 0;
	int lv;

	if (what)
		fprintf(f, "heat: the share of each cell found accessed per interval, from %s\n", what);
	/* The scale's top: the largest text cell (a sum of grid rows) of the bands shown. */
	for (i = 0; i < n; i++)
		for (r = 0; r < TEXT_ROWS; r++)
			for (col = 0; col < MS_HEATMAP_COLS; col++)
				if ((v = text_cell(b[i], r, col)) > max)
					max = v;
	for (i = 0; i < n; i++) {
		ms_size_text(b[i]->size, size, sizeof(size));
		fprintf(f, "%s  %s, %s, pid %u, region %u: %" PRIu64 " samples\n", b[i]->region->name[0] ?
			MS_TEXT(b[i]->region->name) : "[anon]", ms_region_kind_name(b[i]->region->kind), size,
			b[i]->region->pid, b[i]->region->id, b[i]->samples);
		memset(edge, '-', MS_HEATMAP_COLS);
		edge[MS_HEATMAP_COLS] = '\0';
		for (k = 0; k < b[i]->nr_marks; k++)
			edge[b[i]->marks[k].col] = mark_char(b[i]->marks[k].op);
		fprintf(f, "%10s +%s+\n", "", edge);
		/* As many text rows as the region's size fills, of 4 grid rows each. */
		used = (b[i]->size + b[i]->row_bytes - 1) / b[i]->row_bytes;
		used = used > MS_HEATMAP_ROWS ? MS_HEATMAP_ROWS : used ? used : 1;
		for (r = (used + MS_HEATMAP_ROWS / TEXT_ROWS - 1) / (MS_HEATMAP_ROWS / TEXT_ROWS); r-- > 0;) {
			snprintf(size, sizeof(size), "+%#" PRIx64, (uint64_t)(r * (MS_HEATMAP_ROWS / TEXT_ROWS)) * b[i]->row_bytes);
			fprintf(f, "%10s |", size);
			for (col = 0; col < MS_HEATMAP_COLS; col++) {
				lv = ms_heat_level(text_cell(b[i], r, col), max, levels);
				if (colour)
					fprintf(f, lv ? "\033[48;5;%dm \033[0m" : " ", heat[lv]);
				else
					fputc(ramp[lv], f);
			}
			fputs("|\n", f);
		}
	}
	memset(edge, '-', MS_HEATMAP_COLS);
	edge[MS_HEATMAP_COLS] = '\0';
	fprintf(f, "%10s +%s+\n", "", edge);
	fprintf(f, "%10s  0 s%*s%.6f s (a column: %.6f s)\n", "", MS_HEATMAP_COLS - 14, "",
		(double)(col_ns * MS_HEATMAP_COLS) / 1e9, (double)col_ns / 1e9);
	if (all > n)
		fprintf(f, "(%zu more regions with samples: --region names one, --format svg draws all)\n", all - n);
}

/*
 * With ongoing access, the bands' heat is their access shares: each
 * band's cells point at them (a band charged none, at zeros), and the
 * scale's top is a cell wholly accessed.
 */
static uint32_t draw_access(struct ms_heatmap_band *kept, size_t m)
{
	static const uint32_t none[MS_HEATMAP_ROWS * MS_HEATMAP_COLS];
	size_t i;

	for (i = 0; i < m; i++)
		kept[i].cells = kept[i].access_cells ? kept[i].access_cells : none;
	return MS_HEATMAP_ACCESS_FULL;
}

int cmd_heatmap(int argc, char **argv)
{
	struct hm_opts o = { 0 };
	struct ms_session *s = NULL;
	struct ms_heatmap *hm = NULL;
	const struct ms_heatmap_band *bands, **pick = NULL;
	struct ms_heatmap_band *kept = NULL;
	uint64_t start, col_ns;
	size_t n, i, m = 0;
	FILE *f = stdout;
	struct outfile out;
	int ret, err;
	const char *nc, *heat;
	char losses[1024];
	uint32_t max;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	if ((ret = replay_open(&s, o.input, NULL)))
		goto out;
	hm = ms_heatmap_new(&(struct ms_heatmap_opts){ .pid = o.pid });
	if (!hm || ms_session_add(s, &ms_heatmap_analysis, hm)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if ((ret = replay_run(s, o.input)))
		goto out;
	if ((err = ms_heatmap_bands(hm, &bands, &n, &start, &col_ns))) {
		cli_error("cannot build the heatmap: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	kept = malloc((n ? n : 1) * sizeof(*kept));
	pick = malloc((n ? n : 1) * sizeof(*pick));
	if (!kept || !pick) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (chosen(&o, bands[i].region))
			kept[m++] = bands[i];
	replay_warnings(s, o.input);      /* before any error: they say why there may be no samples */
	if (!m) {
		cli_error(o.region ? "no region '%s' with samples in '%s'" : "no samples%s in '%s'",
			  o.region ? o.region : "", o.input);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (o.output && !(f = outfile_fopen(&out, o.output))) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	heat = ms_heatmap_evidence(hm);
	max = heat ? draw_access(kept, m) : ms_heatmap_max(hm);
	if (o.svg)
		ms_svg_heatmap_write(f, kept, m, max, col_ns, heat,
				     ms_format_losses(s, losses, sizeof(losses)) ? losses : NULL);
	else {
		replay_loss_line(s, f, "# ");
		/* The busiest bands, shown in address order. */
		for (i = 0; i < m; i++)
			pick[i] = &kept[i];
		n = m > TEXT_BANDS ? TEXT_BANDS : m;
		if (m > TEXT_BANDS) {
			qsort(pick, m, sizeof(*pick), by_samples);
			qsort(pick, n, sizeof(*pick), by_place);
		}
		nc = getenv("NO_COLOR");
		print_text(f, pick, n, m, col_ns,
			   !o.output && isatty(STDOUT_FILENO) && !(nc && nc[0]), heat);
	}
	if (f != stdout && (ret = outfile_fclose(&out, f)))
		goto out;
	ret = replay_status(s);
out:
	free(kept);
	free(pick);
	ms_heatmap_free(hm);
	ms_session_free(s);
	return ret;
}
