/* mapscope timeline: every address-space change, in time order. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output/format.h"
#include "output/json.h"
#include "parse-options.h"
#include "print-change.h"
#include "replay.h"

static const struct cli_usage usage = {
	.cmd = "timeline",
	.column = 21,
	.head =
"usage: mapscope timeline [-i FILE] [--pid PID] [--format text|json] [--abs]\n"
"\n"
"Lists every address-space change of the recording in time order: map,\n"
"unmap, remap, protect, brk, stack-grow, madvise, fork, exec, exit, lock\n"
"(mlock and the like). Each has its time (seconds from the start; --abs:\n"
"ns on the recording's clock), pid, tid, range (0x, low-high), the new range\n"
"where it moved, the protection it has now (map, protect, remap), the\n"
"advice (madvise) or the lock state (lock: locked, onfault, unlocked), and\n"
"the name of the region concerned.\n"
"\n",
	.tail =
"\n"
"EXAMPLES\n"
"  mapscope timeline\n"
"  mapscope timeline --pid 1234 --format json | jq 'select(.op == \"unmap\")'\n",
};

struct tl {
	long pid;
	bool json, abs;
};

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct tl *t = ctx;

	(void)ev;
	if (t->pid < 0 || c->pid == (uint32_t)t->pid)
		print_change(stdout, c, t->json, ms_session_first_time(s), t->abs);
	return 0;
}

static const struct ms_analysis timeline_analysis = { .name = "timeline", .change = on_change };

/* After the changes: what the recording lost, a comment line, or a JSON line of its own. */
static void timeline_losses(const struct ms_session *s, bool json)
{
	struct ms_json w;
	char line[1024];

	if (!json) {
		replay_loss_line(s, stdout, "# ");
		return;
	}
	if (!ms_format_losses(s, line, sizeof(line)))
		return;
	ms_json_init(&w, stdout, 0);
	ms_json_object_begin(&w);
	ms_json_key_str(&w, "losses", line);
	ms_json_object_end(&w);
	putchar('\n');
}

static int parse_args(int argc, char **argv, const char **input, struct tl *t)
{
	uint64_t pid = 0;
	int fmt = CLI_FORMAT_TEXT, n;
	const struct cli_option options[] = {
		OPT_INPUT(input, CLI_INPUT_HELP),
		OPT_PID(0, "pid", &pid, "only this process's changes"),
		OPT_FORMAT_TEXT_JSON(&fmt, "text (default) or json (one object per line, fields\n"
				     "time_ns, pid, tid, op, start, end, new_start, new_end,\n"
				     "prot, advice, lock, name)"),
		OPT_ABS(&t->abs),
		OPT_END(),
	};

	*input = CLI_DEFAULT_DATA;
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	t->pid = pid ? (long)pid : -1;
	t->json = fmt == CLI_FORMAT_JSON;
	return 0;
}

int cmd_timeline(int argc, char **argv)
{
	struct tl t = { .pid = -1 };
	struct ms_session *s = NULL;
	const char *input;
	int ret;

	ret = parse_args(argc, argv, &input, &t);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	if ((ret = replay_open(&s, input, NULL)))
		goto out;
	if (ms_session_add(s, &timeline_analysis, &t)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!t.json)
		print_change_header(stdout, t.abs);
	if ((ret = replay_run(s, input)))
		goto out;
	replay_warnings(s, input);
	timeline_losses(s, t.json);
	ret = replay_status(s);
out:
	ms_session_free(s);
	return ret;
}
