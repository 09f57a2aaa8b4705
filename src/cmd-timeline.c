/* mapscope timeline: every address-space change, in time order. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output/format.h"
#include "output/json.h"
#include "parse-options.h"
#include "print-change.h"
#include "index-use.h"
#include "replay.h"
#include "session/index.h"

static const struct cli_usage usage = {
	.cmd = "timeline",
	.column = 21,
	.head =
"usage: mapscope timeline [-i FILE] [--pid PID] [--time START,END] [--format text|json]\n"
"                         [--abs]\n"
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
"  mapscope timeline --pid 1234 --format json | jq 'select(.op == \"unmap\")'\n"
"  mapscope timeline --time +2.5,+2.51   # fast after: mapscope index\n",
};

struct tl {
	long pid;
	bool json, abs;
	bool no_index;               /* --no-index */
	uint64_t from, to;           /* --time: the changes of this window only */
	bool from_rel, to_rel;
};

/* The window's ends on the recording's clock, its start t0 known. */
static void window_of(const struct tl *t, uint64_t t0, uint64_t *from, uint64_t *to)
{
	*from = t->from_rel ? t->from + t0 : t->from;
	*to = t->to_rel && t->to != UINT64_MAX ? t->to + t0 : t->to;
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct tl *t = ctx;
	uint64_t from, to;

	(void)ev;
	window_of(t, ms_session_first_time(s), &from, &to);
	if (c->time_ns < from || c->time_ns > to)
		return 0;
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

static int opt_time(const struct cli_option *opt, const char *arg)
{
	struct tl *t = opt->value;
	int err = replay_parse_window(arg, &t->from, &t->from_rel, &t->to, &t->to_rel);

	if (err)
		return cli_usage_error("timeline", err == -ERANGE ?
				       "invalid time window '%s': it ends before it starts" :
				       "invalid time window '%s': expected START,END, "
				       "each SECONDS.FRACTION, ns, +SECONDS or empty", arg);
	return 0;
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
		OPT_CALLBACK(0, "time", t, "START,END", "only the changes in this window (ends included); each\n"
			     "end is seconds on the recording's clock with a point\n"
			     "(1110.5), ns on it, +SECONDS from its start, or empty", opt_time),
		OPT_ABS(&t->abs),
		OPT_BOOL(0, "no-index", &t->no_index, "read the whole recording even where FILE.msidx\n"
			 "(mapscope index) is there"),
		OPT_END(),
	};

	*input = CLI_DEFAULT_DATA;
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	t->pid = pid ? (long)pid : -1;
	t->json = fmt == CLI_FORMAT_JSON;
	return 0;
}

static void print_indexed(const struct ms_change *c, void *ctx)
{
	struct tl *t = ctx;

	print_change(stdout, c, t->json, t->from, t->abs);
}

/*
 * The changes from the recording's index, where it has one: 0 with them
 * printed and s given the replay's statistics; 1 where the replay must run.
 */
static int from_index(struct ms_session *s, const char *input, struct tl *t)
{
	struct ms_index *ix = t->no_index ? NULL : index_use(input);
	uint64_t t0 = ix ? ms_index_first_time(ix) : 0, from, to;
	struct tl w = *t;
	int ret = 1;

	if (!ix || ((t->from_rel || t->to_rel) && !t0))
		goto out;
	window_of(t, t0, &from, &to);
	w.from = t0;                 /* what print_indexed passes as the start */
	if (!t->json)
		print_change_header(stdout, t->abs);
	ret = ms_index_changes(ix, from, to, t->pid, print_indexed, &w);
	if (!ret)
		ms_index_restore(ix, s);
out:
	ms_index_free(ix);
	return ret;
}

int cmd_timeline(int argc, char **argv)
{
	struct tl t = { .pid = -1, .to = UINT64_MAX };
	struct ms_session *s = NULL;
	const char *input;
	int ret;

	ret = parse_args(argc, argv, &input, &t);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	if ((ret = replay_open(&s, input, NULL)))
		goto out;
	if (!from_index(s, input, &t))
		goto done;
	if (ms_session_add(s, &timeline_analysis, &t)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!t.json)
		print_change_header(stdout, t.abs);
	if ((ret = replay_run(s, input)))
		goto out;
done:
	replay_warnings(s, input);
	timeline_losses(s, t.json);
	ret = replay_status(s);
out:
	replay_close(s);
	return ret;
}
