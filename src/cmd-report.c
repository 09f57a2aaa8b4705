/*
 * mapscope report: the file source, the model and the per-region analysis.
 * One row per region: the samples charged to it while it held their
 * addresses, its pages touched, its extent, kind and name.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <mapscope/pdreader.h>
#include <mapscope/pprof.h>
#include <mapscope/report.h>
#include <mapscope/symbols.h>

#include "cli.h"
#include "outfile.h"
#include "commands.h"
#include "analysis/reportsites.h"
#include "analysis/touched.h"
#include "output/csv.h"
#include "output/format.h"
#include "output/html.h"
#include "output/json.h"
#include "output/text.h"
#include "parse-options.h"
#include "replay.h"
#include "textout.h"
#include "report-memlevel.h"
#include "report-prefetch.h"

static const struct cli_usage usage = {
	.cmd = "report",
	.column = 24,
	.head =
"usage: mapscope report [-i FILE] [--sort KEY,...] [--pid PID] [--comm NAME]\n"
"                       [--time START,END] [--all] [--abs]\n"
"                       [--format text|json|csv|pprof|html] [-o FILE]\n"
"\n"
"Replays a recording through the address-space model and charges every\n"
"sampled data address to the region (one mapping's life) that held it at\n"
"that instant. One row per region; samples no mapping held are 'unmapped'.\n"
"\n",
	.tail =
"\n"
"Row fields: samples and share, pid, comm, start-end and its size (the\n"
"region's last extent: reserved) beside the memory its samples touched,\n"
"perms (of the memory the samples touched: '+' where of more than one;\n"
"a line under the row gives those of most of the region, where they\n"
"differ), kind (heap, stack, thread-stack, anon, file, shm, vdso, other),\n"
"name, distinct 4 KiB pages touched, first and last sample time (seconds\n"
"from the start; --abs: ns on the recording's clock). Regions with no\n"
"samples are left out (--all shows them). Shares are of all the\n"
"recording's samples, under every filter. JSON fields are documented in\n"
"docs/json-schema.md.\n"
"\n"
"The header counts every sample of the file, of any event, and those set\n"
"aside rather than charged: at address 0 (perf -d writes it for events\n"
"without a data address), at kernel addresses, of no known event, damaged.\n"
"\n"
"Any perf.data from perf 3.2 on is read, file or pipe mode, compressed\n"
"(perf record -z) too. A recording from perf record has no unmap records: a\n"
"later map then replaces an earlier one where they overlap, and the report\n"
"says that its attribution is uncertain, as it does when records were lost.\n"
"A recording whose recorder was killed, or whose disk filled up, is read as\n"
"far as it was written, and the report says so.\n"
"\n"
"EXAMPLES\n"
"  mapscope report\n"
"  mapscope report -i run.data --sort pages --format json\n"
"  mapscope report --sort region,symbol\n"
"  mapscope report --sort daddr-symbol\n"
"  mapscope report --pid 1234 --time +1.5,+3\n"
"  mapscope report --time 1110.5,1110.52 --all\n"
"  mapscope report --format html -o report.html\n"
"  mapscope report -i perf.data          (a perf record -d recording)\n",
};

struct report_opts {
	const char *input;
	enum ms_report_key keys[8];
	size_t nr_keys;
	unsigned int group;          /* MS_GROUP_* from --sort */
	int children;
	long pid;
	const char *comm;
	uint64_t from, to;
	bool from_rel, to_rel;
	enum cli_format format;
	bool pprof, html;
	bool sites_aside;            /* the symbols name sites (and chains) alone: on a thread of their own */
	const char *output;
	const char *window;          /* --time as given */
	bool all, abs;               /* --all: rows with no samples too; --abs: times in ns */
	/* Known once the replay ran. */
	uint64_t base;               /* the samples shares are of: all of the recording's */
	uint64_t t0;                 /* its start */
	size_t hidden;               /* rows left out for having no samples */
	struct ms_touched *touched;  /* the perms of what the samples touched, per region */
};

static int opt_sort(const struct cli_option *opt, const char *s)
{
	struct report_opts *o = opt->value;
	static const struct { const char *name; enum ms_report_key key; unsigned int group; } names[] = {
		{ "samples", MS_SORT_SAMPLES, 0 }, { "region", MS_SORT_REGION, MS_GROUP_REGION },
		{ "kind", MS_SORT_KIND, 0 }, { "name", MS_SORT_NAME, 0 }, { "pid", MS_SORT_PID, 0 },
		{ "pages", MS_SORT_PAGES, 0 }, { "symbol", MS_SORT_SAMPLES, MS_GROUP_SYMBOL },
		{ "dso", MS_SORT_SAMPLES, MS_GROUP_DSO }, { "daddr-symbol", MS_SORT_SAMPLES, MS_GROUP_DADDR },
		{ "alloc", MS_SORT_SAMPLES, MS_GROUP_ALLOC },
	};
	char buf[256], *tok, *save = NULL;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", s);
	o->nr_keys = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return cli_usage_error("report", "unknown sort key '%s': use samples, region, "
					       "kind, name, pid, pages, symbol, dso, daddr-symbol or alloc", tok);
		o->group |= names[i].group;
		if (o->nr_keys < 8 && !(names[i].group & ~MS_GROUP_REGION))
			o->keys[o->nr_keys++] = names[i].key;
	}
	if (!o->nr_keys)
		o->keys[o->nr_keys++] = MS_SORT_SAMPLES;
	return 0;
}

static int parse_window(const char *s, struct report_opts *o)
{
	return replay_parse_window(s, &o->from, &o->from_rel, &o->to, &o->to_rel);
}

static int opt_time(const struct cli_option *opt, const char *s)
{
	struct report_opts *o = opt->value;
	int err;

	o->window = s;
	if ((err = parse_window(s, o)))
		return cli_usage_error("report", err == -ERANGE ?
				       "invalid time window '%s': it ends before it starts" :
				       "invalid time window '%s': expected START,END, "
				       "each SECONDS.FRACTION, ns, +SECONDS or empty", s);
	return 0;
}

#define STRINGIFY(x) #x
#define STR(x) STRINGIFY(x)

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	/* text, json and csv are enum cli_format's; pprof and html follow. */
	static const char *const formats[] = { "text", "json", "csv", "pprof", "html", NULL };
	enum { FORMAT_PPROF = CLI_FORMAT_CSV + 1, FORMAT_HTML };
	uint64_t pid = 0, children = 5;
	int fmt = CLI_FORMAT_TEXT, n;
	const struct cli_option options[] = {
		OPT_INPUT(&o->input, "the recording (default " CLI_DEFAULT_DATA "; '-' reads a\n"
			  "pipe-mode recording from stdin); perf record -d files too"),
		OPT_CALLBACK('s', "sort", o, "KEYS", "comma-separated: samples (default), region, kind,\n"
			     "name, pid, pages; and, to group rows by them as\n"
			     "well as or instead of by region: symbol (code),\n"
			     "dso (code binary), daddr-symbol (data object),\n"
			     "alloc (the call that made the region)", opt_sort),
		OPT_U64(0, "children", &children, "N", "top N code symbols under each region (default 5; 0: none)",
			0, MS_REPORT_MAX_CHILDREN, "invalid --children", ": expected 0 to " STR(MS_REPORT_MAX_CHILDREN)),
		OPT_PID(0, "pid", &pid, "only regions of this process"),
		OPT_STRING(0, "comm", &o->comm, "NAME", "only regions of processes with this name"),
		OPT_CALLBACK(0, "time", o, "START,END", "only samples in this window; each end is seconds\n"
			     "on the recording's clock with a point, as perf has\n"
			     "them (1110.5), ns on it (1110500000000), +SECONDS\n"
			     "from its start, or empty", opt_time),
		OPT_CHOICE(0, "format", &fmt, "FMT", "text (default), json or csv; or pprof: a gzipped\n"
			   "profile.proto for go tool pprof, Pyroscope or Parca\n"
			   "(needs -o), each stack the code that touched the data\n"
			   "topped by the data region's frame; or html: one\n"
			   "self-contained page (no network, no external file)\n"
			   "with the sortable region table, the heatmap (a\n"
			   "click on a band selects its region), the timeline\n"
			   "of changes, hugepage advice and unmapped accesses",
			   formats, "unknown format", ": use text, json, csv, pprof or html"),
		OPT_BOOL(0, "all", &o->all, "also the regions with no samples (left out, and\n"
			 "counted in the header, by default)"),
		OPT_ABS(&o->abs),
		OPT_STRING('o', "output", &o->output, "FILE", "write there instead of stdout"),
		OPT_END(),
	};

	o->input = CLI_DEFAULT_DATA;
	o->keys[0] = MS_SORT_SAMPLES;
	o->nr_keys = 1;
	o->to = UINT64_MAX;
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	o->children = (int)children;
	o->pid = pid ? (long)pid : -1;
	o->pprof = fmt == FORMAT_PPROF;
	o->html = fmt == FORMAT_HTML;
	o->format = o->pprof || o->html ? CLI_FORMAT_TEXT : (enum cli_format)fmt;
	if (o->pprof && !o->output)
		return cli_usage_error("report", "--format pprof writes a gzipped binary: name the file with -o");
	if (o->html && (o->group & ~MS_GROUP_REGION))
		return cli_usage_error("report", "--format html has one row per region: sort by samples, region, "
				       "kind, name, pid or pages");
	if (o->html && !o->output && isatty(STDOUT_FILENO))
		return cli_usage_error("report", "--format html writes a page: name the file with -o");
	if (o->pprof && (o->group & ~MS_GROUP_REGION))
		return cli_usage_error("report", "--format pprof has its own stacks (code, then the region): "
				       "no --sort symbol, dso, daddr-symbol or alloc");
	return 0;
}

static bool wanted(const struct report_opts *o, const struct ms_region *r)
{
	if (!r)
		return o->pid < 0 && !o->comm;
	return (o->pid < 0 || r->pid == (uint32_t)o->pid) && (!o->comm || !strcmp(o->comm, r->comm));
}

/* A region's row with nothing to say: no samples, and no ongoing access where the recording has it. */
static bool empty(const struct ms_report_row *row)
{
	return row->region && !row->samples && !row->access_intervals;
}

/* Whether a row is printed: of a process the filters keep, not empty unless --all. */
static bool shown(const struct report_opts *o, const struct ms_report_row *row)
{
	if (!(o->group & MS_GROUP_REGION))
		return true;
	return wanted(o, row->region) && (o->all || !empty(row));
}

/* The rows the filters keep that are empty: what --all would add. */
static size_t count_hidden(const struct report_opts *o, struct ms_report *rep, size_t n)
{
	const struct ms_report_row *r;
	size_t i, hidden = 0;

	for (i = 0; !o->all && (o->group & MS_GROUP_REGION) && i < n; i++) {
		r = ms_report_row_counts(rep, i);
		hidden += empty(r) && wanted(o, r->region);
	}
	return hidden;
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/*
 * n's share of total as printf writes it ("%*.*f": width, prec), remembered
 * for the last n and total: most rows of a big report have a few sample
 * counts, and formatting a double is a tenth of printing a row.
 */
struct share_memo {
	uint64_t n, total;
	bool set;
	char text[32];
};

static const char *share_text(struct share_memo *m, int width, int prec, uint64_t n, uint64_t total)
{
	if (!m->set || m->n != n || m->total != total) {
		snprintf(m->text, sizeof(m->text), "%*.*f", width, prec, share(n, total));
		m->n = n;
		m->total = total;
		m->set = true;
	}
	return m->text;
}

static const char *base(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : (path ? path : "");
}

static void text_times(const struct report_opts *o, const struct ms_report_row *r)
{
	int w = o->abs ? 20 : 11;
	char a[32], b[32];
	const char *first = "-", *last = "-";

	/* A row of one sample, or of one instant, formats its time once. */
	if (r->samples) {
		first = cli_time_text(a, r->first_ns, o->t0, o->abs);
		last = r->last_ns == r->first_ns ? first : cli_time_text(b, r->last_ns, o->t0, o->abs);
	}
	fputc_unlocked(' ', stdout);
	text_s(first, w);
	fputc_unlocked(' ', stdout);
	text_s(last, w);
}

/*
 * The perms of the memory r's samples touched (most of them, where they
 * touched more than one protection: a '+' says so), or r's own where it
 * has none. False where that is r's own perms and no other.
 */
static bool touched_perms(const struct report_opts *o, const struct ms_region *r, char perms[6])
{
	int kinds = 0, prot = o->touched ? ms_touched_region_main(o->touched, r->id, &kinds) : -1;

	ms_format_perms(prot < 0 ? r->prot : (uint32_t)prot, r->flags, perms);
	if (prot < 0)
		return false;
	if (kinds > 1)
		strcat(perms, "+");
	return kinds > 1 || (uint32_t)prot != (r->prot & (MS_TOUCHED_PROTS - 1));
}

/* ms_format_size(bytes), remembered for the last bytes: most regions of a big report have a few sizes. */
struct size_memo {
	uint64_t bytes;
	bool set;
	char text[16];
};

static const char *size_text(struct size_memo *m, uint64_t bytes)
{
	if (!m->set || m->bytes != bytes) {
		ms_format_size(bytes, m->text);
		m->bytes = bytes;
		m->set = true;
	}
	return m->text;
}

/* " %7u %-15s %-29s %10s %10s %-5s %-12s": pid, comm, range, reserved, touched, perms, kind. */
static void text_region(const struct report_opts *o, const struct ms_report_row *row)
{
	static struct size_memo reserved, touched;
	const struct ms_region *r = row->region;
	char perms[6];

	if (!r) {
		printf(" %7s %-15s %-29s %10s %10s %-5s %-12s", "-", "-", "-", "-", "-", "-", "unmapped");
		return;
	}
	touched_perms(o, r, perms);
	fputc_unlocked(' ', stdout);
	text_u64(r->pid, 7);
	fputc_unlocked(' ', stdout);
	text_s(MS_TEXT(r->comm), -15);
	fputc_unlocked(' ', stdout);
	text_range(r->start, r->end, -29);
	fputc_unlocked(' ', stdout);
	text_s(size_text(&reserved, r->end - r->start), 10);
	fputc_unlocked(' ', stdout);
	text_s(size_text(&touched, row->pages << 12), 10);
	fputc_unlocked(' ', stdout);
	text_s(perms, -5);
	fputc_unlocked(' ', stdout);
	text_s(ms_region_kind_name(r->kind), -12);
}

/* Under a row whose samples touched other perms than most of the region has: which, how many, from when. */
static void text_touched_line(const struct report_opts *o, const struct ms_region *r)
{
	struct ms_touched_stat st;
	char perms[6], t[32];
	int p, n;

	if (!touched_perms(o, r, perms) || !ms_touched_region(o->touched, r->id, &st))
		return;
	ms_format_perms(r->prot, r->flags, perms);
	text_s(" perms of most of it ", 38);             /* printf's "%17s perms of most of it %s" */
	text_s(perms, 0);
	text_s("; its samples touched", 0);
	for (p = 0, n = 0; p < MS_TOUCHED_PROTS; p++) {
		if (!st.samples[p])
			continue;
		ms_format_perms((uint32_t)p, r->flags, perms);
		text_s(n++ ? ", " : " ", 0);
		text_s(perms, 0);
		text_s(" (", 0);
		text_u64(st.samples[p], 0);
		text_s(" samples, the first at ", 0);
		text_s(cli_time_text(t, st.first_ns[p], o->t0, o->abs), 0);
		text_s(o->abs ? " ns)" : " s)", 0);
	}
	fputc_unlocked('\n', stdout);
}

/* The columns of ongoing access, where the recording has it (access: its evidence). */
static void text_access_head(const char *access)
{
	if (access)
		printf(" %8s %8s %8s %6s", "ref-mean", "ref-peak", "accesses", "hot");
}

static void text_access(const char *access, const struct ms_report_row *r)
{
	if (!access)
		return;
	if (!r || !r->access_intervals)
		printf(" %8s %8s %8s %6s", "-", "-", "-", "-");
	else
		printf(" %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %5.1f%%", r->ref_pages_mean, r->ref_pages_peak,
		       r->accesses, 100.0 * r->hot_share);
}

/* The header of the table: counts, what the samples are, what times and shares mean. */
static void text_header(const struct report_opts *o, uint64_t total, const struct ms_session_stats *st,
			bool uncertain, const struct ms_session *s)
{
	char aside[512];

	printf("# samples: %" PRIu64 "  lost records: %" PRIu64 "  duration: %.6f s%s\n", total, st->lost,
	       (double)(st->last_time - st->first_time) / 1e9, uncertain ? "  (attribution uncertain)" : "");
	ms_format_set_aside(st, aside, sizeof(aside));
	printf("# samples in the file: %" PRIu64 " (%" PRIu64 " with a data address)%s%s\n",
	       ms_format_file_samples(st), st->samples, aside[0] ? "; set aside: " : "", aside);
	replay_event_line(s, stdout, "# ");
	printf("# times are %s\n", o->abs ? "nanoseconds on the recording's clock (--abs)" :
	       "seconds from the start of the recording (--abs: nanoseconds on its clock)");
	printf("# shares are of all %" PRIu64 " samples of the recording, under any --pid, --comm or --time\n",
	       o->base);
	if (o->hidden)
		printf("# %zu regions with no samples%s are not shown (--all shows them)\n", o->hidden,
		       o->window ? " in the window" : "");
}

static void text_columns(const struct report_opts *o, const char *access)
{
	bool by_region = o->group & MS_GROUP_REGION;
	int w = o->abs ? 20 : 11;

	printf("%9s %7s", "samples", "share");
	if (by_region)
		printf(" %7s %-15s %-29s %10s %10s %-5s %-12s", "pid", "comm", "start-end", "reserved", "touched",
		       "perms", "kind");
	printf(" %7s %*s %*s", "pages", w, "first", w, "last");
	text_access_head(access);
	if (by_region)
		report_memlevel_text_header();
	printf(" ");
	if (by_region)
		printf(" name");
	if (o->group & MS_GROUP_SYMBOL)
		printf(" symbol");
	if (o->group & MS_GROUP_DSO)
		printf(" dso");
	if (o->group & MS_GROUP_DADDR)
		printf(" daddr-symbol");
	if (o->group & MS_GROUP_ALLOC)
		printf(" alloc");
	printf("\n");
}

/* A child line: "%17s %9" PRIu64 " %6.2f%%  %s  (%s)\n". */
static void text_child(const struct ms_report_row *r, const struct ms_report_child *c)
{
	static struct share_memo memo;

	text_s("", 17);
	fputc_unlocked(' ', stdout);
	text_u64(c->samples, 9);
	fputc_unlocked(' ', stdout);
	text_s(share_text(&memo, 6, 2, c->samples, r->samples), 0);
	text_s("%  ", 0);
	text_s(MS_TEXT(c->symbol), 0);
	text_s("  (", 0);
	text_s(MS_TEXT(base(c->dso)), 0);
	text_s(")\n", 0);
}

/* "  " and a name, escaped: printf's "  %s" without the format, a column or two of every row. */
static void text_column(const char *name)
{
	text_s("  ", 0);
	text_s(MS_TEXT(name), 0);
}

static void text_row(const struct report_opts *o, const struct ms_report_row *r, const char *access)
{
	static struct share_memo memo;
	bool by_region = o->group & MS_GROUP_REGION;
	int k;

	text_u64(r->samples, 9);
	fputc_unlocked(' ', stdout);
	text_s(share_text(&memo, 6, 2, r->samples, o->base), 0);
	fputc_unlocked('%', stdout);
	if (by_region)
		text_region(o, r);
	fputc_unlocked(' ', stdout);
	text_u64(r->pages, 7);
	text_times(o, r);
	text_access(access, r);
	if (by_region)
		report_memlevel_text(r->region);
	if (by_region) {
		text_s("  ", 0);
		text_s(!r->region ? "[unmapped]" : r->region->name[0] ? MS_TEXT(r->region->name) : "[anon]", 0);
		text_s(r->region && r->region->records_lost ? " (records were lost in its life)" : "", 0);
	}
	if (o->group & MS_GROUP_SYMBOL)
		text_column(r->symbol);
	if (o->group & MS_GROUP_DSO)
		text_column(base(r->dso));
	if (o->group & MS_GROUP_DADDR)
		text_column(r->daddr_symbol);
	if (o->group & MS_GROUP_ALLOC)
		text_column(r->alloc);
	fputc_unlocked('\n', stdout);
	if (by_region && r->region && r->samples)
		text_touched_line(o, r->region);
	if (o->group == MS_GROUP_REGION && r->alloc && r->samples) {
		text_s(" allocated by ", 31);                    /* printf's "%17s allocated by %s\n" */
		text_s(MS_TEXT(r->alloc), 0);
		fputc_unlocked('\n', stdout);
	}
	for (k = 0; k < r->nr_children; k++)
		text_child(r, &r->children[k]);
}

static void print_text(const struct report_opts *o, struct ms_report *rep, size_t n,
		       const struct ms_report_row *un, uint64_t total, const struct ms_session_stats *st,
		       bool uncertain, const char *access, const struct ms_session *s)
{
	bool by_region = o->group & MS_GROUP_REGION;
	size_t i;

	text_header(o, total, st, uncertain, s);
	if (access && by_region)
		printf("# ongoing access from %s: referenced 4 KiB pages per interval (mean, peak), "
		       "accesses counted, share of the region hot per interval\n", access);
	if (!by_region)
		access = NULL;
	text_columns(o, access);
	for (i = 0; i < n; i++) {
		const struct ms_report_row *r = ms_report_row(rep, i);

		if ((by_region && !shown(o, r)) || (!by_region && o->group == MS_GROUP_REGION))
			continue;
		text_row(o, r, access);
	}
	if (o->group == MS_GROUP_REGION) {
		printf("%9" PRIu64 " %6.2f%%", un->samples, share(un->samples, o->base));
		text_region(o, un);
		printf(" %7" PRIu64, un->pages);
		text_times(o, un);
		text_access(access, NULL);
		report_memlevel_text(NULL);
		printf("  [unmapped]\n");
	}
}

/* The perms of the memory the samples touched: [{"perms", "samples", "first_ns"}, ...]. */
static void json_touched(struct ms_json *w, const struct report_opts *o, const struct ms_report_row *row)
{
	struct ms_touched_stat st;
	bool any = o->touched && ms_touched_region(o->touched, row->region->id, &st);
	char perms[5];
	int p;

	ms_json_key_u64(w, "touched_size", row->pages << 12);
	ms_json_key(w, "touched_perms");
	ms_json_array_begin(w);
	for (p = 0; any && p < MS_TOUCHED_PROTS; p++) {
		if (!st.samples[p])
			continue;
		ms_format_perms((uint32_t)p, row->region->flags, perms);
		ms_json_object_begin(w);
		ms_json_key_str(w, "perms", perms);
		ms_json_key_u64(w, "samples", st.samples[p]);
		ms_json_key_u64(w, "first_ns", st.first_ns[p]);
		ms_json_object_end(w);
	}
	ms_json_array_end(w);
}

static void json_region(struct ms_json *w, const struct ms_region *r)
{
	char perms[5];

	ms_format_perms(r->prot, r->flags, perms);
	ms_json_key_u64(w, "id", r->id);
	ms_json_key_u64(w, "pid", r->pid);
	ms_json_key_str(w, "comm", r->comm);
	ms_json_key_addr(w, "start", r->start);
	ms_json_key_addr(w, "end", r->end);
	ms_json_key_u64(w, "size", r->end - r->start);
	ms_json_key_str(w, "perms", perms);
	ms_json_key_str(w, "kind", ms_region_kind_name(r->kind));
	ms_json_key_str(w, "name", r->name);
	ms_json_key_u64(w, "created_ns", r->created_ns);
	ms_json_key_u64(w, "ended_ns", r->ended_ns);
	ms_json_key_bool(w, "records_lost", r->records_lost);
}

/* The region's top code symbols: [{"symbol", "dso", "samples"}, ...]. */
static void json_children(struct ms_json *w, const struct ms_report_row *r)
{
	int k;

	ms_json_key(w, "symbols");
	ms_json_array_begin(w);
	for (k = 0; k < r->nr_children; k++) {
		ms_json_object_begin(w);
		ms_json_key_str(w, "symbol", r->children[k].symbol);
		ms_json_key_str(w, "dso", r->children[k].dso);
		ms_json_key_u64(w, "samples", r->children[k].samples);
		ms_json_object_end(w);
	}
	ms_json_array_end(w);
}

/* Ongoing access, in a row of a recording that has it. */
static void json_access(struct ms_json *w, const struct ms_report_row *r)
{
	ms_json_key_u64(w, "access_intervals", r->access_intervals);
	ms_json_key_u64(w, "referenced_pages_mean", r->ref_pages_mean);
	ms_json_key_u64(w, "referenced_pages_peak", r->ref_pages_peak);
	ms_json_key_u64(w, "accesses", r->accesses);
	ms_json_key_u64(w, "hot_share_ppm", (uint64_t)(r->hot_share * 1e6 + 0.5));
}

static void json_row(struct ms_json *w, const struct report_opts *o, const struct ms_report_row *r,
		     const struct ms_session *s, const char *access)
{
	ms_json_object_begin(w);
	if (r->region)
		json_region(w, r->region);
	else
		ms_json_key_null(w, "region");
	ms_json_key_u64(w, "samples", r->samples);
	ms_json_key_u64(w, "pages", r->pages);
	ms_json_key_u64(w, "first_ns", r->first_ns);
	ms_json_key_u64(w, "last_ns", r->last_ns);
	if (o->group & MS_GROUP_SYMBOL)
		ms_json_key_str(w, "symbol", r->symbol);
	if (o->group & MS_GROUP_DSO)
		ms_json_key_str(w, "dso", r->dso);
	if (o->group & MS_GROUP_DADDR)
		ms_json_key_str(w, "daddr_symbol", r->daddr_symbol);
	if (o->group & MS_GROUP_ALLOC || o->group == MS_GROUP_REGION)
		ms_json_key_str(w, "alloc", r->alloc);
	if ((o->group & MS_GROUP_REGION) && r->region)
		json_touched(w, o, r);
	if (o->group == MS_GROUP_REGION) {
		ms_json_key_str(w, "alloc_chain", ms_session_alloc_chain(s, r->region));
		json_children(w, r);
		if (access)
			json_access(w, r);
		report_memlevel_json(w, r->region);
	}
	ms_json_object_end(w);
}

/* The header's counts, and why samples were set aside. */
static void json_totals(struct ms_json *w, uint64_t total, const struct ms_session_stats *st, bool uncertain)
{
	ms_json_key_u64(w, "samples", total);
	ms_json_key_u64(w, "lost", st->lost);
	ms_json_key_u64(w, "duration_ns", st->last_time - st->first_time);
	ms_json_key_u64(w, "start_ns", st->first_time);
	ms_json_key_bool(w, "uncertain", uncertain);
	ms_json_newline(w, 1);
	ms_json_key_u64(w, "file_samples", ms_format_file_samples(st));
	ms_json_key(w, "set_aside");
	ms_json_object_begin(w);
	ms_json_key_u64(w, "zero_address", st->zero_addr);
	ms_json_key_u64(w, "kernel_address", st->kernel_addr);
	ms_json_key_u64(w, "unknown_event", st->unknown_id);
	ms_json_key_u64(w, "malformed", st->bad_samples);
	ms_json_object_end(w);
}

static void print_json(const struct report_opts *o, struct ms_report *rep, size_t n,
		       const struct ms_report_row *un, uint64_t total, const struct ms_session_stats *st,
		       bool uncertain, const struct ms_session *s, const char *access)
{
	struct ms_json w;
	size_t i;

	ms_json_init(&w, stdout, 0);
	ms_json_object_begin(&w);
	json_totals(&w, total, st, uncertain);
	replay_loss_json(s, &w);
	replay_mode_json(s, &w);
	replay_event_json(s, &w);
	if (o->group & MS_GROUP_REGION)
		ms_json_key_u64(&w, "hidden_regions", o->hidden);
	if (access)
		ms_json_key_str(&w, "access_evidence", access);
	ms_json_newline(&w, 1);
	ms_json_key(&w, "regions");
	ms_json_array_begin(&w);
	for (i = 0; i < n; i++) {
		const struct ms_report_row *r = ms_report_row(rep, i);

		if (!shown(o, r))
			continue;
		ms_json_newline(&w, 2);
		json_row(&w, o, r, s, access);
	}
	ms_json_array_end(&w);
	ms_json_newline(&w, 1);
	ms_json_key(&w, "unmapped");
	ms_json_object_begin(&w);
	ms_json_key_u64(&w, "samples", un->samples);
	ms_json_key_u64(&w, "pages", un->pages);
	ms_json_key_u64(&w, "first_ns", un->first_ns);
	ms_json_key_u64(&w, "last_ns", un->last_ns);
	if (o->group == MS_GROUP_REGION)
		report_memlevel_json(&w, NULL);
	ms_json_object_end(&w);
	report_prefetch_json(&w, s);
	ms_json_object_end(&w);
	putchar('\n');
}

static void csv_access(const char *access, const struct ms_report_row *r)
{
	if (access && r && r->access_intervals)
		printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f", r->ref_pages_mean, r->ref_pages_peak, r->accesses,
		       r->hot_share);
	else if (access)
		printf(",,,,");
}

static void print_csv(const struct report_opts *o, struct ms_report *rep, size_t n,
		      const struct ms_report_row *un, const char *access)
{
	static struct share_memo memo;
	char perms[5], perms6[6];
	size_t i;

	/* No comment lines of its own: a CSV reader takes the first line for the header. */
	printf("samples,share,pid,comm,start,end,size,perms,kind,name,pages,first_ns,last_ns,symbol,dso,daddr_symbol,alloc,"
	       "touched_size,touched_perms%s",
	       access ? ",referenced_pages_mean,referenced_pages_peak,accesses,hot_share" : "");
	if (o->group == MS_GROUP_REGION)
		report_memlevel_csv_header();
	printf("\n");
	for (i = 0; i < n; i++) {
		const struct ms_report_row *row = ms_report_row(rep, i);
		const struct ms_region *r = row->region;

		if (!shown(o, row))
			continue;
		printf("%" PRIu64 ",%s,", row->samples, share_text(&memo, 0, 4, row->samples, o->base));
		if (r) {
			ms_format_perms(r->prot, r->flags, perms);
			printf("%u,", r->pid);
			ms_csv_str(stdout, r->comm);
			printf(",0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu64 ",%s,%s,", r->start, r->end, r->end - r->start,
			       perms, ms_region_kind_name(r->kind));
			ms_csv_str(stdout, r->name);
		} else
			printf(",,,,,,,");
		printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", row->pages, row->first_ns, row->last_ns);
		ms_csv_str(stdout, row->symbol ? row->symbol : "");
		printf(",");
		ms_csv_str(stdout, row->dso ? row->dso : "");
		printf(",");
		ms_csv_str(stdout, row->daddr_symbol ? row->daddr_symbol : "");
		printf(",");
		ms_csv_str(stdout, row->alloc ? row->alloc : "");
		if (r)
			touched_perms(o, r, perms6);
		printf(",%" PRIu64 ",%s", row->pages << 12, r ? perms6 : "");
		csv_access(access, row);
		if (o->group == MS_GROUP_REGION)
			report_memlevel_csv(r);
		printf("\n");
	}
	if (o->group == MS_GROUP_REGION) {
		printf("%" PRIu64 ",%.4f,,,,,,,unmapped,[unmapped],%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",,,,,%" PRIu64 ",%s",
		       un->samples, share(un->samples, o->base), un->pages, un->first_ns, un->last_ns, un->pages << 12,
		       access ? ",,,," : "");
		report_memlevel_csv(NULL);
		printf("\n");
	}
}

/* The samples of what --pid and --comm keep, as a pprof profile in o->output. */
static int write_pprof(const struct report_opts *o, struct ms_pprof *pp, const struct ms_session_stats *st,
		       const struct ms_session *s)
{
	struct outfile out;
	char line[1024] = "losses: ";
	int ret, err;

	/* A comment (pprof -comments), as every other format carries the losses. */
	if (ms_format_losses(s, line + 8, sizeof(line) - 8) && ms_pprof_add_comment(pp, line)) {
		cli_error("cannot write '%s': %s", o->output, strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	if ((ret = outfile_open(&out, o->output)))
		return ret;
	err = ms_pprof_write(pp, out.fd, o->pid > 0 ? (uint32_t)o->pid : 0, o->comm,
			     st->last_time > st->first_time ? st->last_time - st->first_time : 0);
	if (!err && close(out.fd))
		err = -errno;
	out.fd = -1;
	if (err)
		cli_error("cannot write '%s': %s", o->output, strerror(-err));
	return outfile_close(&out, !err);
}

/* The report in the format asked for, on stdout (the -o file by then): 0, or EXIT_RUNTIME after the message. */
static int print_report(const struct report_opts *o, const struct ms_html_report *in, const struct ms_session *s)
{
	/* Rows by region only: the figures are a region's. */
	const char *access = o->group & MS_GROUP_REGION ? ms_report_access_evidence(in->rep) : NULL;
	int err;

	if (o->html) {
		if ((err = ms_html_write(stdout, in)) || fflush(stdout)) {
			cli_error("cannot write '%s': %s", o->output ? o->output : "standard output",
				  strerror(err ? -err : errno));
			return EXIT_RUNTIME;
		}
		return 0;
	}
	if (o->format == CLI_FORMAT_JSON) {
		print_json(o, in->rep, in->n, in->un, in->total, in->st, in->uncertain, s, access);
		return 0;
	}
	replay_loss_line(s, stdout, "# ");     /* a comment line in the CSV and the table alike */
	replay_mode_line(s, stdout, "# ");
	if (o->format == CLI_FORMAT_CSV)
		print_csv(o, in->rep, in->n, in->un, access);
	else {
		print_text(o, in->rep, in->n, in->un, in->total, in->st, in->uncertain, access, s);
		report_prefetch_text(s);
	}
	return 0;
}

/*
 * Renames the -o file into place where everything was written, even on a
 * damaged input (what was read is a report, and the exit status says the
 * rest); removes it where the writing failed. 0 or EXIT_RUNTIME.
 */
static int finish_output(struct outfile *out, bool failed)
{
	bool written = out->fd < 0 && !fflush(stdout) && !ferror(stdout);

	if (out->fd < 0 && !written && !failed)
		cli_error("cannot write '%s': %s", out->path, strerror(errno));
	return outfile_close(out, written && !failed);
}

/*
 * Symbols where a code column or children are asked for, and for the call
 * that made each region (alloc), which every table names, also under
 * --children 0, where the recording has the call chains to name it from;
 * and for the prefetch sites outside CSV. pprof asks for them itself. The
 * recording's header is looked at once, here. The window is --time's.
 */
static void session_opts(struct report_opts *o, struct ms_session_opts *so)
{
	struct ms_pdreader *r = o->pprof ? NULL : replay_peek(o->input);
	bool prefetch = o->format != CLI_FORMAT_CSV && report_prefetch_in(r);
	bool code = o->children || (o->group & ~MS_GROUP_REGION) || o->html;

	so->symbols = code || (!o->pprof && (replay_has_call_chains(r) || prefetch));
	/*
	 * The sites are named on a second thread as the recording is read
	 * (mapscope(1), MAPSCOPE_NAMER), also where this one names code (the
	 * children, the page, --sort by code): both then hold the binaries they
	 * read (the default report of chromium's page load 50 to 53 MiB at its
	 * peak), and the report is written sooner (50.1 to 46.5 ms of it; 34.0
	 * to 32.4 of make's). pprof hands that thread the code it names as
	 * well (lib/analysis/pprof.c), so that this one reads no binary's
	 * symbols: with the sites alone aside it took as long (71 against 69
	 * ms) and held 15 MiB more (73 against 58 MiB on the compressed page
	 * load), both threads reading the binaries.
	 */
	o->sites_aside = (so->symbols || o->pprof) && !prefetch;
	ms_pdreader_free(r);
	so->from_ns = o->from;
	so->to_ns = o->to;
	so->from_rel = o->from_rel;
	so->to_rel = o->to_rel;
}

/* The report and what each format adds to it. 0, or EXIT_RUNTIME (out of memory). */
static int add_analyses(struct report_opts *o, struct ms_session *s, struct ms_report **rep, struct ms_html **html,
			struct ms_pprof **pp)
{
	*rep = ms_report_new(&(struct ms_report_opts){ .group = o->group, .children = (unsigned int)o->children });
	if (!*rep || (!o->pprof && ms_session_add(s, &ms_report_analysis, *rep)) ||
	    (o->html && !(*html = ms_html_new(s, o->pid, o->comm))) ||
	    (o->pprof && (!(*pp = ms_pprof_new()) || ms_session_add(s, &ms_pprof_analysis, *pp))) ||
	    report_memlevel_add(s) || report_prefetch_add(s) ||
	    (!o->pprof && !o->html && (!(o->touched = ms_touched_new()) ||
				       ms_session_add(s, &ms_touched_analysis, o->touched))))
		return EXIT_RUNTIME;
	/* text, json and csv print no empty row unless --all: their sites need no names. */
	ms_report_unnamed_empty(*rep, !o->all && !o->html && !o->pprof);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct ms_session_opts so = { 0 };
	struct ms_session *s = NULL;
	struct ms_report *rep = NULL;
	struct ms_html *html = NULL;
	struct ms_pprof *pp = NULL;
	struct ms_session_stats st;
	struct outfile out = { 0 };
	struct ms_html_report in;
	char losses[1024];
	size_t n = 0;
	int ret, err;
	bool uncertain, failed = false;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	session_opts(&o, &so);
	ret = replay_open(&s, o.input, &so);
	if (ret)
		goto out;
	if ((ret = add_analyses(&o, s, &rep, &html, &pp)))
		goto out;
	if (o.sites_aside)
		ms_session_sites_aside(s, o.format == CLI_FORMAT_JSON || o.html);   /* JSON and the page have the chains too */
	if (!o.group)
		o.group = MS_GROUP_REGION;
	ret = replay_run(s, o.input);
	if (ret)
		goto out;
	err = o.pprof ? 0 : ms_report_sort(rep, ms_session_aspace(s), o.keys, o.nr_keys, &n);
	if (err) {
		cli_error("cannot build the report: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	ms_session_stats(s, &st);
	o.base = st.samples;
	o.t0 = st.first_time;
	o.hidden = o.pprof ? 0 : count_hidden(&o, rep, n);
	/* No unmap records, or records lost: maps and unmaps may be missing. */
	uncertain = !ms_session_has_syscalls(s) || st.lost;
	replay_warnings(s, o.input);
	/* A damaged file gives what was read before the damage, and exit 1, in every format. */
	if (o.pprof) {
		ret = write_pprof(&o, pp, &st, s);
		if (!ret)
			ret = replay_status(s);
		goto out;
	}
	if (o.output && ((ret = outfile_open(&out, o.output)) || (ret = outfile_stdout(&out))))
		goto out;
	in = (struct ms_html_report){
		.h = html, .input = o.input, .window = o.window, .rep = rep, .n = n, .un = ms_report_unmapped(rep),
		.total = ms_report_total(rep), .st = &st, .uncertain = uncertain, .release = &rep,
		.losses = ms_format_losses(s, losses, sizeof(losses)) ? losses : NULL,
	};
	if ((ret = print_report(&o, &in, s))) {
		failed = true;
		goto out;
	}
	ret = replay_status(s);
out:
	if (out.path && (err = finish_output(&out, failed)) && !ret)
		ret = err;
	ms_html_free(html);
	ms_pprof_free(pp);
	report_memlevel_free();
	report_prefetch_free();
	ms_report_free(rep);
	ms_touched_free(o.touched);
	replay_close(s);
	return ret;
}
