/*
 * mapscope unmapped: accesses to memory no mapping held (or a PROT_NONE
 * page), classified, grouped by the code that made them, and for freed
 * memory: when it was unmapped, by which call, from where.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/symbols.h>
#include <mapscope/unmapped.h>

#include "cli.h"
#include "commands.h"
#include "output/format.h"
#include "output/json.h"
#include "parse-options.h"
#include "print-change.h"
#include "replay.h"
#include "report-prefetch.h"
#include "output/text.h"

static const struct cli_usage usage = {
	.cmd = "unmapped",
	.column = 21,
	.head =
"usage: mapscope unmapped [-i FILE] [--format text|json] [--abs]\n"
"\n"
"Reports every sampled access to memory that no mapping held at that\n"
"instant, or that was PROT_NONE, grouped by the code that made it\n"
"(function+offset, file:line), with counts and first and last times.\n"
"Classes:\n"
"  freed         a mapping held it before: when it was unmapped, by which\n"
"                call (munmap, mremap, brk, shmdt) and from where (with\n"
"                record --call-graph fp)\n"
"  guard         a PROT_NONE page: a guard page, a thread stack's guard\n"
"  below-stack   below the main stack, where it did not grow\n"
"  beyond-heap   past the end of the heap\n"
"  never-mapped  nothing ever held it\n"
"  null-page     below vm.mmap_min_addr (the recording machine's, which\n"
"                record writes into the recording; 64 KiB for other\n"
"                files, and the output says so): a NULL pointer, or a\n"
"                field of a NULL struct pointer, read or written\n"
"  uncertain     in a recording that lost records: the map that held it\n"
"                may be among them, whichever process the loss names\n"
"  past-end      prefetches only: up to 1 MiB past the end of the mapping\n"
"                below it (a loop prefetching ahead ran past its data)\n"
"With hardware load samples (where a PMU exists), loads and software\n"
"prefetches to unmapped addresses (bad prefetches) are reported the same way,\n"
"and so are the prefetches of record --prefetches (access \"prefetch\"), each\n"
"with the mapping nearest to it and how far; a table of the prefetch\n"
"instructions then says how many of each one's prefetches were bad.\n"
"\n",
	.tail =
"\n"
"EXAMPLES\n"
"  mapscope record --call-graph fp -- ./myprog && mapscope unmapped\n"
"  mapscope unmapped -i run.data --format json\n"
"  mapscope record --prefetches -- ./myprog && mapscope unmapped\n",
};

struct un_run {
	struct ms_unmapped *u;
	struct ms_symbols *syms;
	const struct ms_session *s;
};

struct code {
	char sym[256];
	const char *file;
	int line;
};

static void json_access(struct ms_json *w, const struct ms_unmapped_access *a, const struct code *code,
			const char *site, const char *chain)
{
	ms_json_object_begin(w);
	ms_json_key_str(w, "class", ms_unmapped_class_name(a->cls));
	ms_json_key_str(w, "access", ms_access_kind_name(a->kind));
	ms_json_key_addr(w, "address", a->address);
	ms_json_key_addr(w, "ip", a->ip);
	ms_json_key_str(w, "symbol", code->sym);
	ms_json_key_str(w, "file", code->file);
	ms_json_key_int(w, "line", code->line);
	ms_json_key_u64(w, "count", a->count);
	ms_json_key_u64(w, "pid", a->pid);
	ms_json_key_u64(w, "tid", a->tid);
	ms_json_key_u64(w, "first_ns", a->first_ns);
	ms_json_key_u64(w, "last_ns", a->last_ns);
	if (a->cls == MS_UNMAPPED_FREED) {
		ms_json_key(w, "freed");
		ms_json_object_begin(w);
		ms_json_key_u64(w, "time_ns", a->freed_ns);
		ms_json_key_str(w, "op", ms_aspace_op_name(a->freed_op));
		ms_json_key_str(w, "call", a->freed_call);
		ms_json_key_u64(w, "tid", a->freed_tid);
		ms_json_key_str(w, "site", site[0] ? site : NULL);
		ms_json_key_str(w, "chain", chain[0] ? chain : NULL);
		ms_json_object_end(w);
	}
	if (a->kind == MS_ACCESS_PREFETCH && a->near_name) {
		ms_json_key(w, "nearest");
		ms_json_object_begin(w);
		ms_json_key_str(w, "name", a->near_name);
		ms_json_key_addr(w, "start", a->near_start);
		ms_json_key_addr(w, "end", a->near_end);
		ms_json_key_u64(w, "distance", a->near_distance);
		ms_json_object_end(w);
	}
	ms_json_object_end(w);
}

static void text_access(const struct ms_unmapped_access *a, const struct code *code, const char *site, uint64_t t0,
			bool abs)
{
	char addr[24], first[32], last[32], range[40];
	int w = abs ? 20 : 11;

	snprintf(addr, sizeof(addr), "0x%" PRIx64, a->address);
	printf("%-12s %-8s %7" PRIu64 " %7u %18s %*s %*s  %s", ms_unmapped_class_name(a->cls),
	       ms_access_kind_name(a->kind), a->count, a->pid, addr, w, cli_time_text(first, a->first_ns, t0, abs),
	       w, cli_time_text(last, a->last_ns, t0, abs), MS_TEXT(code->sym));
	if (code->file)
		printf(" (%s:%d)", MS_TEXT(code->file), code->line);
	printf("\n");
	if (a->cls == MS_UNMAPPED_FREED)
		printf("%12s unmapped %.6f s earlier by %s in thread %u%s%s\n", "", (double)(a->first_ns - a->freed_ns) / 1e9,
		       MS_TEXT(a->freed_call), a->freed_tid, site[0] ? ", called from " : "", MS_TEXT(site));
	if (a->kind == MS_ACCESS_PREFETCH && a->near_name)
		printf("%12s %" PRIu64 " bytes %s %s %s\n", "", a->near_distance,
		       a->cls == MS_UNMAPPED_PAST_END ? "past the end of" : "from the nearest mapping,",
		       a->near_name[0] ? MS_TEXT(a->near_name) : "anonymous memory",
		       (ms_format_range(a->near_start, a->near_end, range), range));
}

/*
 * Every prefetch instruction that was recorded (record --prefetches, or
 * hardware samples): how many of its prefetches were bad, of how many.
 * Nothing where the recording has none.
 */
static void print_prefetch_sites(const struct un_run *run, struct ms_json *w, int fmt)
{
	const struct ms_unmapped_prefetch_site *v;
	struct code code;
	size_t n = 0, i;

	if (ms_unmapped_prefetch_sites(run->u, &v, &n) || !n)
		return;
	if (fmt == CLI_FORMAT_JSON) {
		ms_json_key(w, "prefetch_sites");
		ms_json_array_begin(w);
	} else
		printf("\n%-10s %10s %10s  %s\n", "bad", "prefetches", "wasted", "prefetch instruction");
	for (i = 0; i < n; i++) {
		if (fmt != CLI_FORMAT_JSON) {
			ms_format_code(run->syms, v[i].pid, v[i].ip, code.sym, sizeof(code.sym), &code.file,
				       &code.line);
			printf("%-10" PRIu64 " %10" PRIu64 " %9.1f%%  %s", v[i].bad, v[i].prefetches,
			       100.0 * (double)v[i].bad / (double)v[i].prefetches, MS_TEXT(code.sym));
			if (code.file)
				printf(" (%s:%d)", MS_TEXT(code.file), code.line);
			printf(" pid %u\n", v[i].pid);
			continue;
		}
		ms_json_newline(w, 2);
		report_prefetch_site_json(w, run->syms, &v[i]);
	}
	if (fmt == CLI_FORMAT_JSON)
		ms_json_array_end(w);
}

/*
 * Where null-page accesses are listed, where the null pages ended: the
 * recording machine's vm.mmap_min_addr, or the default the library took
 * for a recording without it (unmapped.h), said so.
 */
static void print_null_limit(const struct un_run *run, const struct ms_unmapped_access *acc, size_t n, int fmt,
			     struct ms_json *w)
{
	uint64_t v = MS_UNMAPPED_NULL_LIMIT;
	bool recorded;
	size_t i;

	for (i = 0; i < n && acc[i].cls != MS_UNMAPPED_NULL; i++)
		;
	if (i == n)
		return;
	recorded = !ms_session_sysctl(run->s, "vm.mmap_min_addr", &v);
	if (fmt == CLI_FORMAT_JSON) {
		ms_json_key_u64(w, "null_page_limit", v);
		ms_json_key_bool(w, "null_page_limit_recorded", recorded);
	} else if (recorded) {
		printf("# null-page: below 0x%" PRIx64 ", the recording machine's vm.mmap_min_addr\n", v);
	} else {
		printf("# null-page: below 0x%" PRIx64 ", the usual vm.mmap_min_addr: the recording does not say the "
		       "recording machine's (mapscope record writes it)\n", v);
	}
}

/* The accesses as a table or as {"accesses": [...]}; t0 is the recording's first time. */
static void print_accesses(const struct un_run *run, const struct ms_unmapped_access *acc, size_t n, int fmt,
			   uint64_t t0, bool abs)
{
	char site[256], chain[1024];
	struct ms_json w;
	struct code code;
	size_t i;

	ms_json_init(&w, stdout, 0);
	if (fmt == CLI_FORMAT_JSON) {
		ms_json_object_begin(&w);
		replay_loss_json(run->s, &w);
		print_null_limit(run, acc, n, fmt, &w);
		ms_json_key(&w, "accesses");
		ms_json_array_begin(&w);
	} else {
		replay_loss_line(run->s, stdout, "# ");
		print_null_limit(run, acc, n, fmt, &w);
		printf("%-12s %-8s %7s %7s %18s %*s %*s  %s\n", "class", "access", "count", "pid", "address", abs ? 20 : 11,
		       "first", abs ? 20 : 11, "last", "code");
	}
	for (i = 0; i < n; i++) {
		const struct ms_unmapped_access *a = &acc[i];

		ms_format_code(run->syms, a->pid, a->ip, code.sym, sizeof(code.sym), &code.file, &code.line);
		site[0] = chain[0] = '\0';
		if (a->freed_chain_len)
			ms_symbols_call_site(run->syms, a->pid, a->freed_chain, a->freed_chain_len, site, sizeof(site),
					     chain, sizeof(chain));
		if (fmt != CLI_FORMAT_JSON) {
			text_access(a, &code, site, t0, abs);
			continue;
		}
		ms_json_newline(&w, 2);
		json_access(&w, a, &code, site, chain);
	}
	if (fmt == CLI_FORMAT_JSON)
		ms_json_array_end(&w);
	print_prefetch_sites(run, &w, fmt);
	if (fmt == CLI_FORMAT_JSON) {
		ms_json_object_end(&w);
		putchar('\n');
	}
}

static int parse_args(int argc, char **argv, const char **input, int *fmt, bool *abs)
{
	const struct cli_option options[] = {
		OPT_INPUT(input, "the recording (default " CLI_DEFAULT_DATA ")"),
		OPT_FORMAT_TEXT_JSON(fmt, "text (default) or json"),
		OPT_ABS(abs),
		OPT_END(),
	};
	int n;

	*input = CLI_DEFAULT_DATA;
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	return 0;
}

int cmd_unmapped(int argc, char **argv)
{
	const struct ms_unmapped_access *acc;
	struct un_run run = { 0 };
	struct ms_session_opts so = { .symbols = true, .to_ns = UINT64_MAX };
	struct ms_session *s = NULL;
	const char *input;
	size_t n = 0;
	int fmt = CLI_FORMAT_TEXT, ret, err;
	bool abs = false;

	ret = parse_args(argc, argv, &input, &fmt, &abs);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	if ((ret = replay_open(&s, input, &so)))
		goto out;
	/* Code is named, allocation sites never are: a freed access's site is its unmap's own chain. */
	ms_session_no_sites(s);
	run.u = ms_unmapped_new();
	run.syms = ms_session_symbols(s);
	run.s = s;
	if (!run.u || ms_session_add(s, &ms_unmapped_analysis, run.u)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if ((ret = replay_run(s, input)))
		goto out;
	if ((err = ms_unmapped_results(run.u, &acc, &n))) {
		cli_error("cannot build the report: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	replay_warnings(s, input);
	print_accesses(&run, acc, n, fmt, ms_session_first_time(s), abs);
	ret = replay_status(s);
out:
	ms_unmapped_free(run.u);
	replay_close(s);
	return ret;
}

