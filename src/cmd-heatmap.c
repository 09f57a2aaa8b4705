/*
 * mapscope heatmap: time along x, each region's offsets along y, a cell's
 * colour its samples (lib/analysis/heatmap.c aggregates them). Only the
 * regions with samples are drawn, one band each, so the gaps between them
 * take no room, the busiest first so that the hot memory is what a reader
 * meets first. A character grid for a terminal, or an SVG; each says what
 * its colours and characters count and what a cell covers.
 */
#include <errno.h>
#include <math.h>
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
"                        [--sort samples|address|size] [--min-share PCT] [-o FILE]\n"
"\n"
"Where in each region, and when, the recording's data accesses landed:\n"
"time runs along x (seconds from the recording's start), the region's\n"
"offsets along y (its start at the bottom), and a cell's colour is its\n"
"samples (log scale; the legend gives each colour's counts). Only regions\n"
"with samples are drawn, one band each, the busiest first: the gaps between\n"
"them take no room, and memory that moved (mremap) keeps its band. Map,\n"
"unmap, remap and madvise are marked on the band's top edge: M, U, R, A.\n"
"\n"
"Where the recording has ongoing access (record --referenced, --damon), the\n"
"heat is that instead: each cell the share of its bytes found accessed in\n"
"the interval that covers it (with --referenced, a region's whole band\n"
"shows its referenced share per interval), and the output says so; the\n"
"regions drawn are then those with access or samples.\n"
"\n",
	.tail =
"\n"
"A band's share is of the samples of every band (of --pid where given),\n"
"whatever --region and --min-share leave out.\n"
"\n"
"EXAMPLES\n"
"  mapscope heatmap\n"
"  mapscope heatmap --region '[heap]'\n"
"  mapscope heatmap --min-share 1 --format svg -o heat.svg\n",
};

#define TEXT_ROWS 8                   /* a band's rows in a terminal: 4 of the grid's each */
#define TEXT_BANDS 24                 /* bands shown in a terminal, the busiest */
#define GRID_ROWS_PER_TEXT (MS_HEATMAP_ROWS / TEXT_ROWS)

struct hm_opts {
	const char *input, *output, *region;
	uint32_t pid;
	bool svg;
	int sort;                     /* enum ms_heatmap_order */
	double min_share;             /* a share of all samples, 0 to 1 */
};

/* --min-share PCT: a percentage, "0.5" or "0.5%". */
static int parse_share(const struct cli_option *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno || end == arg || *end || !(v >= 0 && v <= 100)) {
		cli_error("invalid share '%s': expected a percentage from 0 to 100, such as 0.5", arg);
		return EXIT_USAGE;
	}
	*(double *)opt->value = v / 100;
	return 0;
}

static int parse_args(int argc, char **argv, struct hm_opts *o)
{
	static const char *const formats[] = { "text", "svg", NULL };
	/* In enum ms_heatmap_order's order. */
	static const char *const sorts[] = { "samples", "address", "size", NULL };
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
		OPT_CHOICE(0, "sort", &o->sort, "KEY", "the bands' order: samples (default: the busiest\n"
			   "first), address (by pid and start address), size\n(the largest first)",
			   sorts, "unknown sort key", ": use samples, address or size"),
		OPT_CALLBACK(0, "min-share", &o->min_share, "PCT", "hide the bands with less than PCT percent of the\n"
			     "samples (0.5: one in 200)", parse_share),
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

/* What the text grid draws: the bands, each a dense grid of text cells, and the scale's top. */
struct text_map {
	const struct ms_heatmap_band *b;
	size_t n, all, hidden;
	uint32_t (*cells)[TEXT_ROWS * MS_HEATMAP_COLS];
	uint32_t max;
	uint64_t col_ns, total;
	bool colour;
	const char *what;             /* the access evidence (the bands' access_cells are drawn), or NULL */
};

static const char ramp[] = " .:-=+*#%@";
/* A heat ramp of 256-colour backgrounds: blue to red to yellow. */
static const int heat_colours[] = { 0, 17, 19, 21, 57, 93, 129, 165, 161, 197, 202, 208, 214, 220, 226 };

static int text_levels(const struct text_map *t)
{
	return t->colour ? (int)(sizeof(heat_colours) / sizeof(heat_colours[0])) : (int)sizeof(ramp) - 1;
}

/* Each band's text cells (a text cell: the sum of the grid rows it covers), and their largest. */
static void text_fill(struct text_map *t)
{
	const struct ms_heatmap_cell *cells;
	size_t i, k, r, c, nr;

	t->max = 0;
	for (i = 0; i < t->n; i++) {
		cells = t->what ? t->b[i].access_cells : t->b[i].cells;
		nr = t->what ? t->b[i].nr_access_cells : t->b[i].nr_cells;
		memset(t->cells[i], 0, sizeof(t->cells[i]));
		for (k = 0; k < nr; k++) {
			r = cells[k].index / MS_HEATMAP_COLS / GRID_ROWS_PER_TEXT;
			c = cells[k].index % MS_HEATMAP_COLS;
			t->cells[i][r * MS_HEATMAP_COLS + c] += cells[k].value;
		}
		for (k = 0; k < TEXT_ROWS * MS_HEATMAP_COLS; k++)
			if (t->cells[i][k] > t->max)
				t->max = t->cells[i][k];
	}
}

static void text_value(FILE *f, const struct text_map *t, uint32_t v)
{
	if (t->what)
		fprintf(f, "%.4g%%", 100.0 * v / MS_HEATMAP_ACCESS_FULL);
	else
		fprintf(f, "%u", v);
}

/* What each character (or colour) stands for: the range of cell values at each level of the scale. */
static void text_legend(FILE *f, const struct text_map *t)
{
	const int levels = text_levels(t);
	uint32_t lo, hi, x;
	int lv, nx;

	fputs(t->what ? "heat (the most of a cell's bytes accessed in an interval, log scale):" :
	      "heat (samples per cell, log scale):", f);
	fputs(t->colour ? "  none" : "  ' ' none", f);
	for (lv = 1; lv < levels; lv++) {
		if (!(lo = ms_heat_level_min(lv, t->max, levels)))
			continue;                 /* a level no value has (a small max skips some) */
		for (hi = t->max, nx = lv + 1; nx < levels; nx++)
			if ((x = ms_heat_level_min(nx, t->max, levels))) {
				hi = x - 1;
				break;
			}
		if (t->colour)
			fprintf(f, "  \033[48;5;%dm  \033[0m ", heat_colours[lv]);
		else
			fprintf(f, "  '%c' ", ramp[lv]);
		text_value(f, t, lo);
		if (hi > lo) {
			fputc('-', f);
			text_value(f, t, hi);
		}
	}
	fputc('\n', f);
}

/* A band's header, its top edge with the marks, and its rows, the highest offsets first. */
static void text_band(FILE *f, const struct text_map *t, size_t i)
{
	const struct ms_heatmap_band *b = &t->b[i];
	const int levels = text_levels(t);
	char size[32], cell[32], edge[MS_HEATMAP_COLS + 1];
	size_t k, col, r;
	uint64_t used;
	int lv;

	ms_size_text(b->size, size, sizeof(size));
	ms_size_text(b->row_bytes * GRID_ROWS_PER_TEXT, cell, sizeof(cell));
	fprintf(f, "%s  %s, %s, pid %u, region %u: %" PRIu64 " samples (%.2f%%); a cell: %s by %.6f s\n",
		b->region->name[0] ? MS_TEXT(b->region->name) : "[anon]", ms_region_kind_name(b->region->kind), size,
		b->region->pid, b->region->id, b->samples,
		t->total ? 100.0 * (double)b->samples / (double)t->total : 0.0, cell, (double)t->col_ns / 1e9);
	memset(edge, '-', MS_HEATMAP_COLS);
	edge[MS_HEATMAP_COLS] = '\0';
	for (k = 0; k < b->nr_marks; k++)
		edge[b->marks[k].col] = mark_char(b->marks[k].op);
	fprintf(f, "%10s +%s+\n", "", edge);
	/* As many text rows as the region's size fills, of 4 grid rows each. */
	used = (b->size + b->row_bytes - 1) / b->row_bytes;
	used = used > MS_HEATMAP_ROWS ? MS_HEATMAP_ROWS : used ? used : 1;
	for (r = (used + GRID_ROWS_PER_TEXT - 1) / GRID_ROWS_PER_TEXT; r-- > 0;) {
		snprintf(cell, sizeof(cell), "+%#" PRIx64, (uint64_t)(r * GRID_ROWS_PER_TEXT) * b->row_bytes);
		fprintf(f, "%10s |", cell);
		for (col = 0; col < MS_HEATMAP_COLS; col++) {
			lv = ms_heat_level(t->cells[i][r * MS_HEATMAP_COLS + col], t->max, levels);
			if (t->colour)
				fprintf(f, lv ? "\033[48;5;%dm \033[0m" : " ", heat_colours[lv]);
			else
				fputc(ramp[lv], f);
		}
		fputs("|\n", f);
	}
}

/* The time axis under the grid: ticks at round seconds from the recording's start. */
static void text_axis(FILE *f, uint64_t col_ns)
{
	const uint64_t span = col_ns * MS_HEATMAP_COLS, step = ms_time_step(span, 6);
	const int dec = ms_time_decimals(step);
	char ticks[MS_HEATMAP_COLS + 3], labels[MS_HEATMAP_COLS + 40];
	size_t col, at;
	uint64_t t;
	int w;

	memset(ticks, '-', MS_HEATMAP_COLS);
	memset(labels, ' ', sizeof(labels));
	for (t = 0; t <= span; t += step) {
		col = (size_t)(t / col_ns);
		if (col < MS_HEATMAP_COLS)
			ticks[col] = '\'';
		/* The label starts at its tick, the last one ends at the axis's end. */
		w = snprintf(NULL, 0, "%.*f", dec, (double)t / 1e9);
		at = col + (size_t)w > MS_HEATMAP_COLS ? MS_HEATMAP_COLS - (size_t)w : col;
		snprintf(labels + at, sizeof(labels) - at, "%.*f", dec, (double)t / 1e9);
		labels[at + (size_t)w] = ' ';
		if (span - t < step)
			break;
	}
	ticks[MS_HEATMAP_COLS] = '\0';
	for (at = MS_HEATMAP_COLS; at > 0 && labels[at - 1] == ' '; at--)
		;
	labels[at] = '\0';
	fprintf(f, "%10s +%s+\n", "", ticks);
	fprintf(f, "%10s  %s\n", "time (s)", labels);
	fprintf(f, "%10s  (seconds from the recording's start; a column: %.6f s)\n", "", (double)col_ns / 1e9);
}

static void print_text(FILE *f, struct text_map *t)
{
	size_t i;

	if (t->what)
		fprintf(f, "heat: the share of each cell found accessed per interval, from %s\n", t->what);
	text_fill(t);
	text_legend(f, t);
	for (i = 0; i < t->n; i++)
		text_band(f, t, i);
	text_axis(f, t->col_ns);
	if (t->all > t->n)
		fprintf(f, "(%zu more regions with samples: --region names one, --format svg draws all)\n",
			t->all - t->n);
	if (t->hidden)
		fprintf(f, "(%zu regions under --min-share left out)\n", t->hidden);
}

/* The text grid of the bands handed out (the busiest TEXT_BANDS, in --sort order). 0, or EXIT_RUNTIME. */
static int draw_text(FILE *f, const struct hm_opts *o, struct ms_session *s, struct text_map *t)
{
	const char *nc = getenv("NO_COLOR");

	if (!(t->cells = malloc((t->n ? t->n : 1) * sizeof(*t->cells))))
		return EXIT_RUNTIME;
	t->colour = !o->output && isatty(STDOUT_FILENO) && !(nc && nc[0]);
	replay_loss_line(s, f, "# ");
	print_text(f, t);
	free(t->cells);
	return 0;
}

static bool keep_chosen(const struct ms_region *r, void *ctx)
{
	return chosen(ctx, r);
}

/* Nothing to draw: says why. */
static void say_empty(const struct hm_opts *o, const struct ms_heatmap_totals *tot)
{
	if (tot->under_share)
		cli_error("no region with %g%% of the samples or more in '%s': a lower --min-share shows more",
			  100 * o->min_share, o->input);
	else if (o->region)
		cli_error("no region '%s' with samples in '%s'", o->region, o->input);
	else
		cli_error("no samples in '%s'", o->input);
}

static const char *const order_words[] = {
	[MS_HEATMAP_BY_SAMPLES] = "the busiest first",
	[MS_HEATMAP_BY_PLACE] = "by pid and address",
	[MS_HEATMAP_BY_SIZE] = "the largest first",
};

/* Band i of the heatmap (ctx), made as the image draws it. */
static const struct ms_heatmap_band *band_of(void *ctx, size_t i)
{
	return ms_heatmap_band(ctx, i);
}

int cmd_heatmap(int argc, char **argv)
{
	struct hm_opts o = { 0 };
	struct ms_session *s = NULL;
	struct ms_heatmap *hm = NULL;
	const struct ms_heatmap_band *bands = NULL;
	struct ms_heatmap_totals tot;
	uint64_t start, col_ns;
	size_t n;
	FILE *f = stdout;
	struct outfile out;
	int ret, err;
	const char *heat;
	char losses[1024];

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	if ((ret = replay_open(&s, o.input, NULL)))
		goto out;
	/* A terminal shows the busiest TEXT_BANDS: only those are made into bands. */
	hm = ms_heatmap_new(&(struct ms_heatmap_opts){ .pid = o.pid, .order = (enum ms_heatmap_order)o.sort,
			    .keep = o.region ? keep_chosen : NULL, .keep_ctx = &o, .min_share = o.min_share,
			    .limit = o.svg ? 0 : TEXT_BANDS });
	if (!hm || ms_session_add(s, &ms_heatmap_analysis, hm)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if ((ret = replay_run(s, o.input)))
		goto out;
	/* An image draws every band: made one at a time, not all at once. */
	err = o.svg ? ms_heatmap_select(hm, &n, &start, &col_ns) : ms_heatmap_bands(hm, &bands, &n, &start, &col_ns);
	if (err) {
		cli_error("cannot build the heatmap: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	ms_heatmap_totals(hm, &tot);
	replay_warnings(s, o.input);      /* before any error: they say why there may be no samples */
	if (!n) {
		say_empty(&o, &tot);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (o.output && !(f = outfile_fopen(&out, o.output))) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	heat = ms_heatmap_evidence(hm);
	if (o.svg && ms_svg_heatmap_write(f, &(struct ms_svg_heatmap){
			.band = band_of, .band_ctx = hm, .n = n, .max = heat ? MS_HEATMAP_ACCESS_FULL : ms_heatmap_max(hm),
			.col_ns = col_ns, .total = tot.samples, .order = order_words[o.sort], .hidden = tot.under_share,
			.hidden_why = "--min-share", .heat = heat, .access = heat != NULL,
			.losses = ms_format_losses(s, losses, sizeof(losses)) ? losses : NULL }) == -ENOMEM) {
		cli_error("cannot draw the heatmap: %s", strerror(ENOMEM));
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!o.svg && (ret = draw_text(f, &o, s, &(struct text_map){
			.b = bands, .n = n, .all = tot.bands, .hidden = tot.under_share, .col_ns = col_ns,
			.total = tot.samples, .what = heat, .max = 0 })))
		goto out;
	if (f != stdout && (ret = outfile_fclose(&out, f)))
		goto out;
	ret = replay_status(s);
out:
	ms_heatmap_free(hm);
	replay_close(s);
	return ret;
}
