/*
 * mapscope maps: a process's mappings at one instant, printed exactly as
 * /proc/PID/maps prints them, so that diff against a snapshot works.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"
#include "commands.h"
#include "parse-options.h"
#include "index-use.h"
#include "replay.h"
#include "session/source.h"
#include "session/index.h"
#include "output/text.h"

static const struct cli_usage usage = {
	.cmd = "maps",
	.column = 21,
	.head =
"usage: mapscope maps [-i FILE] --pid PID --at TIME\n"
"\n"
"Prints the mappings process PID had at TIME, in the format of\n"
"/proc/PID/maps (start-end perms offset dev inode name), one line per\n"
"kernel VMA, as the kernel would have merged them.\n"
"\n",
	.tail =
"\n"
"[vsyscall] is shown as /proc shows it (the kernel writes no record of it:\n"
"mapscope record adds one at each exec). Thread stacks carry no name, as in\n"
"/proc; 'mapscope report' names them [stack:TID].\n"
"\n"
"EXAMPLES\n"
"  mapscope maps --pid 1234 --at end\n"
"  mapscope maps --pid 1234 --at last     # a process that has exited\n"
"  mapscope maps -i run.data --pid 1234 --at +2.5\n"
"  mapscope maps --pid 1234 --at 81234567890 | diff - saved-maps.txt\n",
};

struct maps_run {
	uint64_t at;
	bool rel;
	bool last;                  /* --at last: just before the process exited */
	uint32_t pid;               /* the process; a thread id given is taken to its process */
	uint32_t asked;             /* the id given */
	bool seen;
	uint64_t exited;            /* when the process exited, 0 while it lives */
	bool no_index;              /* --no-index */
};

/*
 * Which process the id asked for names, whether it appeared, and when it
 * exited, from the events (samples aside) up to the instant: the session
 * stops the replay at the first event or sample past it, this at the
 * process's exit for --at last.
 */
static int watch_process(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct maps_run *m = ctx;

	if (m->rel && ms_session_first_time(s)) {
		m->at += ms_session_first_time(s);
		m->rel = false;
	}
	/* A thread's id names its process, as /proc/TID/maps does. */
	if (ev->kind == MS_EV_FORK && ev->fork.child_tid == m->asked)
		m->pid = ev->fork.child_pid;
	else if (ev->tid == m->asked && ev->pid && ev->kind != MS_EV_FORK)
		m->pid = ev->pid;
	if (ev->pid == m->pid || (ev->kind == MS_EV_FORK && ev->fork.child_pid == m->pid))
		m->seen = true;
	/* The process ends with its last thread (a leader may exit first); an exec from a thread goes on. */
	if (ev->kind == MS_EV_EXIT && ev->pid == m->pid && ms_aspace_exit_ends(ms_session_aspace(s), ev)) {
		if (m->last)
			return 1;        /* the model has not applied the exit yet */
		m->exited = ev->time;
	}
	if (ev->kind == MS_EV_EXEC && ev->pid == m->pid)
		m->exited = 0;
	return 0;
}

static void print_vma(const struct ms_vma *v, void *ctx)
{
	char line[512];
	int n;

	(void)ctx;
	n = snprintf(line, sizeof(line), "%08" PRIx64 "-%08" PRIx64 " %c%c%c%c %08" PRIx64 " %02x:%02x %" PRIu64 " ",
		     v->start, v->end, v->prot & PROT_READ ? 'r' : '-', v->prot & PROT_WRITE ? 'w' : '-',
		     v->prot & PROT_EXEC ? 'x' : '-', v->flags & MAP_SHARED ? 's' : 'p', v->offset,
		     v->maj, v->min, v->ino);
	if (v->name[0])
		printf("%-*s %s\n", 72, line, MS_TEXT(v->name));   /* the kernel pads the name to column 73 */
	else
		printf("%s\n", line);
	(void)n;
}

/*
 * Says so when records were lost before the instant asked for. Of any
 * process: a CPU's ring is shared by every process traced, and a LOST
 * record names the one that wrote next, not the one whose records it lost.
 */
static void lost_before(const struct ms_session *s, const struct maps_run *m)
{
	struct ms_session_stats st;

	ms_session_stats(s, &st);
	if (st.lost && (m->last || st.lost_first <= m->at))
		fprintf(stderr, "mapscope: warning: records were lost before then (%llu in the recording, of any "
			"process: the rings are shared): these maps may be missing changes\n",
			(unsigned long long)st.lost);
}

/* --at, and whether it was given. */
struct maps_at {
	struct maps_run *m;
	bool given;
};

static int opt_at(const struct cli_option *opt, const char *arg)
{
	struct maps_at *a = opt->value;

	a->m->last = !strcmp(arg, "last");
	if (!a->m->last && parse_time(arg, &a->m->at, &a->m->rel))
		return cli_usage_error("maps", "invalid time '%s': expected SECONDS.FRACTION, nanoseconds, "
				       "+SECONDS, end or last", arg);
	a->given = true;
	return 0;
}

static int parse_args(int argc, char **argv, const char **input, struct maps_run *m)
{
	struct maps_at at = { .m = m };
	uint64_t pid = 0;
	const struct cli_option options[] = {
		OPT_INPUT(input, CLI_INPUT_HELP),
		OPT_PID('p', "pid", &pid, "the process; a thread's id gives its process, as\n/proc/TID/maps does"),
		OPT_CALLBACK('t', "at", &at, "TIME", "seconds with a point on the recording's clock, as\n"
			     "perf has them (1110.5), nanoseconds on it\n"
			     "(CLOCK_MONOTONIC for mapscope record), +SECONDS from\n"
			     "the start, end, or last: just before the process\n"
			     "exited", opt_at),
		OPT_BOOL(0, "no-index", &m->no_index, "read the whole recording even where FILE.msidx\n"
			 "(mapscope index) is there"),
		OPT_END(),
	};
	int n;

	*input = CLI_DEFAULT_DATA;
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	m->pid = m->asked = (uint32_t)pid;
	if (!m->pid || !at.given)
		return cli_usage_error("maps", "both --pid and --at are needed");
	return 0;
}

/*
 * The answer from the recording's index, where it has one that can give
 * it exactly: 0 with the VMAs printed (as m's stop would leave them) and
 * m filled; 1 where the replay must run.
 */
static int from_index(struct ms_session *s, const char *input, struct maps_run *m, struct ms_index **ixp)
{
	struct ms_index_maps a;
	struct ms_index *ix = m->no_index ? NULL : index_use(input);
	uint64_t first = ix ? ms_index_first_time(ix) : 0;
	uint64_t at = m->at;
	int ret;

	*ixp = ix;
	if (!ix || (m->rel && !first))
		return 1;
	if (m->rel && !m->last)
		at = at > UINT64_MAX - first ? UINT64_MAX : at + first;
	/* Nothing is printed before the warnings: the VMAs go to a buffer first. */
	ret = ms_index_maps(ix, m->pid, at, m->last, &a, NULL, NULL);
	if (ret < 0)
		fprintf(stderr, "mapscope: warning: ignoring the index of '%s': it is damaged; reading the whole "
			"recording (remake it: mapscope index -i %s)\n", MS_TEXT(input), MS_TEXT(input));
	if (ret)
		return 1;
	m->seen = a.seen;
	m->exited = a.exited;
	m->at = at;
	m->rel = false;
	ms_index_restore(ix, s);
	return 0;
}

int cmd_maps(int argc, char **argv)
{
	struct maps_run m = { 0 };
	static const struct ms_analysis watch = { .name = "maps", .event = watch_process };
	struct ms_session *s = NULL;
	struct ms_index *ix = NULL;
	struct ms_index_maps a;
	const char *input;
	bool indexed;
	int ret;

	cli_log_init(0);
	ret = parse_args(argc, argv, &input, &m);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((ret = replay_open(&s, input, NULL)))
		goto out;
	/* The replay stops at the first event or sample past the instant, its statistics as they were then. */
	session_stop_after(s, m.last ? UINT64_MAX : m.at, m.rel && !m.last);
	indexed = !from_index(s, input, &m, &ix);
	if (!indexed && ms_session_add(s, &watch, &m)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!indexed && (ret = replay_run(s, input)))
		goto out;
	if (!m.seen) {
		cli_error("process %u does not appear in '%s' by that time", m.pid, input);
		ret = EXIT_RUNTIME;
		goto out;
	}
	replay_warnings(s, input);
	lost_before(s, &m);
	if (m.exited) {
		cli_error("process %u had exited by then, at %" PRIu64 " (+%.6f s): it had no maps left",
			  m.pid, m.exited, (double)(m.exited - ms_session_first_time(s)) / 1e9);
		cli_hint("its maps as they were when it exited: mapscope maps --pid %u --at last", m.pid);
		ret = EXIT_RUNTIME;
		goto out;
	}
	replay_loss_line(s, stdout, "# ");
	if (indexed)
		ms_index_maps(ix, m.pid, m.at, m.last, &a, print_vma, NULL);
	else
		ms_aspace_for_each_vma(ms_session_aspace(s), m.pid, print_vma, NULL);
	ret = replay_status(s);
out:
	ms_index_free(ix);
	replay_close(s);
	return ret;
}
