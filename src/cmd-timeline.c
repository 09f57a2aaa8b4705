/* mapscope timeline: every address-space change, in time order. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "print-change.h"
#include "replay.h"

static const char usage_text[] =
"usage: mapscope timeline [-i FILE] [--pid PID] [--format text|json]\n"
"\n"
"Lists every address-space change of the recording in time order: map,\n"
"unmap, remap, protect, brk, stack-grow, madvise, fork, exec, exit, lock\n"
"(mlock and the like). Each has its time, pid, tid, range, the new range\n"
"where it moved, the protection it has now (map, protect, remap), the\n"
"advice (madvise) or the lock state (lock: locked, onfault, unlocked), and\n"
"the name of the region concerned.\n"
"\n"
"  -i, --input FILE   the recording (default mapscope.data; '-': stdin)\n"
"      --pid PID      only this process's changes\n"
"      --format FMT   text (default) or json (one object per line, fields\n"
"                     time_ns, pid, tid, op, start, end, new_start, new_end,\n"
"                     prot, advice, lock, name)\n"
"  -h, --help         show this help\n"
"\n"
"EXAMPLES\n"
"  mapscope timeline\n"
"  mapscope timeline --pid 1234 --format json | jq 'select(.op == \"unmap\")'\n";

struct tl {
	long pid;
	bool json;
};

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct tl *t = ctx;

	(void)s;
	(void)ev;
	if (t->pid < 0 || c->pid == (uint32_t)t->pid)
		print_change(stdout, c, t->json);
	return 0;
}

static const struct ms_analysis timeline_analysis = { .name = "timeline", .change = on_change };

int cmd_timeline(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tl t = { .pid = -1 };
	struct ms_session *s = NULL;
	const char *input = "mapscope.data";
	uint64_t v;
	int c, ret, fmt;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'P':
			if (cli_parse_u64(optarg, 1, 4194304, &v))
				return cli_usage_error("timeline", "invalid PID '%s'", optarg);
			t.pid = (long)v;
			break;
		case 'F':
			if ((ret = parse_format("timeline", optarg, &fmt, false)))
				return ret;
			t.json = fmt == CLI_FORMAT_JSON;
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		case ':': return cli_usage_error("timeline", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("timeline", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("timeline", "unexpected argument '%s'", argv[optind]);
	cli_log_init(0);
	if ((ret = replay_open(&s, input, NULL)))
		goto out;
	if (ms_session_add(s, &timeline_analysis, &t)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!t.json)
		print_change_header(stdout);
	if ((ret = replay_run(s, input)))
		goto out;
	replay_warnings(s, input);
	ret = ms_session_corrupt(s) ? EXIT_RUNTIME : 0;
out:
	ms_session_free(s);
	return ret;
}
