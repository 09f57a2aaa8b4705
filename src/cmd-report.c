/*
 * mapscope report: the file source, the model and the per-region analysis.
 * One row per region: the samples charged to it while it held their
 * addresses, its pages touched, its extent, kind and name.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mapscope/report.h>

#include "cli.h"
#include "commands.h"
#include "output/json.h"
#include "replay.h"

static const char usage_text[] =
"usage: mapscope report [-i FILE] [--sort KEY,...] [--pid PID] [--comm NAME]\n"
"                       [--time START,END] [--format text|json|csv]\n"
"\n"
"Replays a recording through the address-space model and charges every\n"
"sampled data address to the region (one mapping's life) that held it at\n"
"that instant. One row per region; samples no mapping held are 'unmapped'.\n"
"\n"
"  -i, --input FILE      the recording (default mapscope.data; '-' reads a\n"
"                        pipe-mode recording from stdin); perf record -d files too\n"
"  -s, --sort KEYS       comma-separated: samples (default), region, kind,\n"
"                        name, pid, pages\n"
"      --pid PID         only regions of this process\n"
"      --comm NAME       only regions of processes with this name\n"
"      --time START,END  only samples in this window; each end is ns on the\n"
"                        recording's clock, +SECONDS from its start, or empty\n"
"      --format FMT      text (default), json or csv\n"
"  -h, --help            show this help\n"
"\n"
"Row fields: samples and share, pid, comm, start-end and size (the region's\n"
"last extent), perms, kind (heap, stack, thread-stack, anon, file, shm,\n"
"vdso, other), name, distinct 4 KiB pages touched, first and last sample\n"
"time. JSON fields are documented in docs/json-schema.md.\n"
"\n"
"A recording from perf record has no unmap records: a later map then\n"
"replaces an earlier one where they overlap, and the report says that its\n"
"attribution is uncertain.\n"
"\n"
"EXAMPLES\n"
"  mapscope report\n"
"  mapscope report -i run.data --sort pages --format json\n"
"  mapscope report --pid 1234 --time +1.5,+3\n"
"  mapscope report -i perf.data          (a perf record -d recording)\n";

enum format { FMT_TEXT, FMT_JSON, FMT_CSV };

struct report_opts {
	const char *input;
	enum ms_report_key keys[8];
	size_t nr_keys;
	long pid;
	const char *comm;
	uint64_t from, to;
	bool from_rel, to_rel;
	enum format format;
};

static int parse_sort(const char *s, struct report_opts *o)
{
	static const struct { const char *name; enum ms_report_key key; } names[] = {
		{ "samples", MS_SORT_SAMPLES }, { "region", MS_SORT_REGION }, { "kind", MS_SORT_KIND },
		{ "name", MS_SORT_NAME }, { "pid", MS_SORT_PID }, { "pages", MS_SORT_PAGES },
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
					       "kind, name, pid or pages", tok);
		if (o->nr_keys < 8)
			o->keys[o->nr_keys++] = names[i].key;
	}
	return o->nr_keys ? 0 : cli_usage_error("report", "--sort needs at least one key");
}

static int parse_window(const char *s, struct report_opts *o)
{
	const char *comma = strchr(s, ',');
	char a[64], b[64];

	if (!comma || (size_t)(comma - s) >= sizeof(a) || strlen(comma + 1) >= sizeof(b))
		return -EINVAL;
	snprintf(a, sizeof(a), "%.*s", (int)(comma - s), s);
	snprintf(b, sizeof(b), "%s", comma + 1);
	if (a[0] && parse_time(a, &o->from, &o->from_rel))
		return -EINVAL;
	if (b[0] && parse_time(b, &o->to, &o->to_rel))
		return -EINVAL;
	return 0;
}

int parse_format(const char *cmd, const char *s, int *fmt, bool allow_csv)
{
	if (!strcmp(s, "text"))
		*fmt = FMT_TEXT;
	else if (!strcmp(s, "json"))
		*fmt = FMT_JSON;
	else if (allow_csv && !strcmp(s, "csv"))
		*fmt = FMT_CSV;
	else
		return cli_usage_error(cmd, "unknown format '%s': use text, json%s", s,
				       allow_csv ? " or csv" : "");
	return 0;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'P' },
		{ "comm", required_argument, NULL, 'C' },
		{ "time", required_argument, NULL, 'T' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, fmt, err;

	o->input = "mapscope.data";
	o->keys[0] = MS_SORT_SAMPLES;
	o->nr_keys = 1;
	o->pid = -1;
	o->to = UINT64_MAX;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 's': if ((err = parse_sort(optarg, o))) return err; break;
		case 'P':
			if (cli_parse_u64(optarg, 1, 4194304, &v))
				return cli_usage_error("report", "invalid PID '%s'", optarg);
			o->pid = (long)v;
			break;
		case 'C': o->comm = optarg; break;
		case 'T':
			if (parse_window(optarg, o))
				return cli_usage_error("report", "invalid time window '%s': expected START,END, "
						       "each ns, +SECONDS or empty", optarg);
			break;
		case 'F':
			if ((err = parse_format("report", optarg, &fmt, true)))
				return err;
			o->format = (enum format)fmt;
			break;
		case 'h': fputs(usage_text, stdout); return -1;
		case ':': return cli_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
	return 0;
}

static const char *kind_name(enum ms_region_kind k)
{
	static const char *const n[] = { "heap", "stack", "thread-stack", "anon", "file", "shm", "vdso", "other" };

	return (size_t)k < sizeof(n) / sizeof(n[0]) ? n[k] : "other";
}

void format_perms(uint32_t prot, uint32_t flags, char out[5])
{
	out[0] = prot & PROT_READ ? 'r' : '-';
	out[1] = prot & PROT_WRITE ? 'w' : '-';
	out[2] = prot & PROT_EXEC ? 'x' : '-';
	out[3] = flags & MAP_SHARED ? 's' : 'p';
	out[4] = '\0';
}

static bool wanted(const struct report_opts *o, const struct ms_region *r)
{
	return (o->pid < 0 || r->pid == (uint32_t)o->pid) && (!o->comm || !strcmp(o->comm, r->comm));
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static void print_text(const struct report_opts *o, struct ms_report_row *rows, size_t n,
		       const struct ms_report_row *un, uint64_t total, const struct ms_stream_stats *st,
		       bool uncertain)
{
	double t0 = (double)st->first_time;
	char perms[5];
	size_t i;

	printf("# samples: %" PRIu64 "  lost records: %" PRIu64 "  duration: %.6f s%s\n", total, st->lost,
	       (double)(st->last_time - st->first_time) / 1e9, uncertain ? "  (attribution uncertain)" : "");
	printf("# times are seconds from the start of the recording\n");
	printf("%9s %7s %7s %-15s %-33s %10s %-5s %-12s %7s %11s %11s  %s\n", "samples", "share", "pid", "comm",
	       "start-end", "size", "perms", "kind", "pages", "first", "last", "name");
	for (i = 0; i < n; i++) {
		const struct ms_region *r = rows[i].region;

		if (!wanted(o, r))
			continue;
		format_perms(r->prot, r->flags, perms);
		printf("%9" PRIu64 " %6.2f%% %7u %-15s %016" PRIx64 "-%016" PRIx64 " %10" PRIu64 " %-5s %-12s %7" PRIu64,
		       rows[i].samples, share(rows[i].samples, total), r->pid, r->comm, r->start, r->end,
		       r->end - r->start, perms, kind_name(r->kind), rows[i].pages);
		if (rows[i].samples)
			printf(" %11.6f %11.6f", ((double)rows[i].first_ns - t0) / 1e9, ((double)rows[i].last_ns - t0) / 1e9);
		else
			printf(" %11s %11s", "-", "-");
		printf("  %s\n", r->name[0] ? r->name : "[anon]");
	}
	printf("%9" PRIu64 " %6.2f%% %7s %-15s %-33s %10s %-5s %-12s %7" PRIu64, un->samples,
	       share(un->samples, total), "-", "-", "-", "-", "-", "unmapped", un->pages);
	if (un->samples)
		printf(" %11.6f %11.6f", ((double)un->first_ns - t0) / 1e9, ((double)un->last_ns - t0) / 1e9);
	else
		printf(" %11s %11s", "-", "-");
	printf("  [unmapped]\n");
}

static void print_json(const struct report_opts *o, struct ms_report_row *rows, size_t n,
		       const struct ms_report_row *un, uint64_t total, const struct ms_stream_stats *st,
		       bool uncertain)
{
	char perms[5];
	size_t i;
	bool first = true;

	printf("{\"samples\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"duration_ns\": %" PRIu64
	       ", \"start_ns\": %" PRIu64 ", \"uncertain\": %s,\n \"regions\": [", total, st->lost,
	       st->last_time - st->first_time, st->first_time, uncertain ? "true" : "false");
	for (i = 0; i < n; i++) {
		const struct ms_region *r = rows[i].region;

		if (!wanted(o, r))
			continue;
		format_perms(r->prot, r->flags, perms);
		printf("%s\n  {\"id\": %u, \"pid\": %u, \"comm\": ", first ? "" : ",", r->id, r->pid);
		ms_json_str(stdout, r->comm);
		printf(", \"start\": ");
		ms_json_addr(stdout, r->start);
		printf(", \"end\": ");
		ms_json_addr(stdout, r->end);
		printf(", \"size\": %" PRIu64 ", \"perms\": \"%s\", \"kind\": \"%s\", \"name\": ",
		       r->end - r->start, perms, kind_name(r->kind));
		ms_json_str(stdout, r->name);
		printf(", \"samples\": %" PRIu64 ", \"pages\": %" PRIu64 ", \"first_ns\": %" PRIu64
		       ", \"last_ns\": %" PRIu64 ", \"created_ns\": %" PRIu64 ", \"ended_ns\": %" PRIu64 "}",
		       rows[i].samples, rows[i].pages, rows[i].first_ns, rows[i].last_ns, r->created_ns, r->ended_ns);
		first = false;
	}
	printf("],\n \"unmapped\": {\"samples\": %" PRIu64 ", \"pages\": %" PRIu64 ", \"first_ns\": %" PRIu64
	       ", \"last_ns\": %" PRIu64 "}}\n", un->samples, un->pages, un->first_ns, un->last_ns);
}

static void print_csv(const struct report_opts *o, struct ms_report_row *rows, size_t n,
		      const struct ms_report_row *un, uint64_t total)
{
	char perms[5];
	size_t i;

	printf("samples,share,pid,comm,start,end,size,perms,kind,name,pages,first_ns,last_ns\n");
	for (i = 0; i < n; i++) {
		const struct ms_region *r = rows[i].region;

		if (!wanted(o, r))
			continue;
		format_perms(r->prot, r->flags, perms);
		printf("%" PRIu64 ",%.4f,%u,", rows[i].samples, share(rows[i].samples, total), r->pid);
		ms_csv_str(stdout, r->comm);
		printf(",0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu64 ",%s,%s,", r->start, r->end, r->end - r->start,
		       perms, kind_name(r->kind));
		ms_csv_str(stdout, r->name);
		printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", rows[i].pages, rows[i].first_ns, rows[i].last_ns);
	}
	printf("%" PRIu64 ",%.4f,,,,,,,unmapped,[unmapped],%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
	       un->samples, share(un->samples, total), un->pages, un->first_ns, un->last_ns);
}

struct report_run {
	struct ms_report *rep;
	struct report_opts *o;
};

/* Relative window ends are known once the first event is seen. */
static int resolve_window(struct replay *rp, const struct ms_event *ev)
{
	struct report_run *run = rp->ctx;

	(void)ev;
	if ((run->o->from_rel || run->o->to_rel) && rp->first_time) {
		if (run->o->from_rel)
			run->o->from += rp->first_time;
		if (run->o->to_rel && run->o->to != UINT64_MAX)
			run->o->to += rp->first_time;
		run->o->from_rel = run->o->to_rel = false;
		ms_report_set_window(run->rep, run->o->from, run->o->to);
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct replay rp = { 0 };
	struct ms_report *rep = NULL;
	struct ms_report_row *rows = NULL, un;
	struct ms_stream_stats st;
	struct report_run run;
	size_t n;
	int ret, err;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	ret = replay_open(&rp, o.input);
	if (ret)
		goto out;
	rep = ms_report_new(o.from, o.to);
	if (!rep) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	run.rep = rep;
	run.o = &o;
	rp.ctx = &run;
	rp.pre = resolve_window;
	ms_report_attach(rep, rp.as);
	ret = replay_run(&rp);
	if (ret)
		goto out;
	err = ms_report_rows(rep, rp.as, o.keys, o.nr_keys, &rows, &n, &un);
	if (err) {
		cli_error("cannot build the report: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	ms_stream_stats(rp.stream, &st);
	replay_warnings(&rp);
	if (o.format == FMT_JSON)
		print_json(&o, rows, n, &un, ms_report_total(rep), &st, !ms_stream_has_syscalls(rp.stream));
	else if (o.format == FMT_CSV)
		print_csv(&o, rows, n, &un, ms_report_total(rep));
	else
		print_text(&o, rows, n, &un, ms_report_total(rep), &st, !ms_stream_has_syscalls(rp.stream));
	ret = rp.corrupt ? EXIT_RUNTIME : 0;
out:
	free(rows);
	ms_report_free(rep);
	replay_close(&rp);
	return ret;
}
