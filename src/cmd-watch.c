/*
 * mapscope watch: the live source, the model and a printer. Each change is
 * printed as it happens (the rings are drained every few milliseconds, so
 * the traced program pays no wakeup per change).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mapscope/watch.h>

#include "cli.h"
#include "commands.h"
#include "parse-options.h"
#include "launch.h"
#include "print-change.h"
#include "util/clock.h"

#define POLL_MS 4

static const struct cli_usage usage = {
	.cmd = "watch",
	.column = 23,
	.head =
"usage: mapscope watch [--json] [--ops LIST] [--abs] (-p PID[,PID...] | -- CMD [ARGS...])\n"
"\n"
"Prints every change to the address space of CMD (with its threads and\n"
"children) or of running processes as it happens: map, unmap, remap,\n"
"protect, brk, stack-grow, madvise, fork, exec, exit, lock. Unmaps made by direct\n"
"syscalls are seen too: the kernel's tracepoints report them, nothing is\n"
"patched. At low load a change is printed within a few milliseconds.\n"
"Times are seconds from when watching began (--abs: CLOCK_MONOTONIC ns),\n"
"ranges 0x, low-high, as in mapscope timeline.\n"
"\n",
	.tail =
"\n"
"It ends on Ctrl-C, or when the watched processes have exited; for CMD it\n"
"then reports the command's exit status on stderr. Exit status: 0, or 1\n"
"when watching failed, 2 for bad usage.\n"
"\n"
"Root records everything. An ordinary user records its own processes in\n"
"user mode (page faults taken in kernel mode and the VMA tree's writes are\n"
"not seen) once tracefs is readable for it: 'mapscope setup' as root does\n"
"that, and 'mapscope doctor' says what this user may do here.\n"
"Programs can subscribe themselves through libmapscope (mapscope/watch.h).\n"
"\n"
"EXAMPLES\n"
"  mapscope watch -- ./myprog\n"
"  mapscope watch -p 1234 --ops unmap,remap,madvise\n"
"  mapscope watch --json -p 1234 | jq -c 'select(.op == \"unmap\")'\n",
};

static int opt_ops(const struct cli_option *opt, const char *s)
{
	unsigned int *mask = opt->value;
	char buf[256], *tok, *save = NULL;
	int op;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (op = MS_OP_MAP; op <= MS_OP_LOCK; op++)
			if (!strcmp(tok, ms_aspace_op_name((enum ms_aspace_op)op)))
				break;
		if (op > MS_OP_LOCK)
			return cli_usage_error("watch", "unknown operation '%s': use map, unmap, remap, "
					       "protect, brk, stack-grow, madvise, fork, exec, exit or lock", tok);
		*mask |= 1u << op;
	}
	return 0;
}

struct watch_opts {
	bool json, abs;
	uint64_t t0;               /* CLOCK_MONOTONIC when watching began: the text's times count from it */
	unsigned int ops;          /* bit per enum ms_aspace_op; 0: all */
	pid_t pids[MAX_PIDS];
	int nr_pids;
	char **cmd;
};

static int parse_args(int argc, char **argv, struct watch_opts *o)
{
	struct launch_pids pids = { .cmd = "watch", .pids = o->pids, .n = &o->nr_pids };
	const struct cli_option options[] = {
		OPT_CALLBACK('p', "pid", &pids, "PID[,...]", "watch running processes and all their threads",
			     launch_opt_pids),
		OPT_BOOL(0, "json", &o->json, "one JSON object per line: time_ns, pid, tid, op,\n"
			 "start, end, new_start, new_end, name; CMD's standard\n"
			 "output goes to standard error, so the stream stays JSON"),
		OPT_CALLBACK(0, "ops", &o->ops, "LIST", "only these operations, comma-separated", opt_ops),
		OPT_ABS(&o->abs),
		OPT_END(),
	};
	int n;

	if ((n = parse_options(argc, argv, options, &usage, PARSE_OPT_STOP_AT_NON_OPTION)) < 0)
		return parse_options_failed(n);
	if (n < argc)
		o->cmd = argv + n;
	if (!o->cmd && !o->nr_pids)
		return cli_usage_error("watch", "nothing to watch: give a command after '--' or processes with -p");
	if (o->cmd && o->nr_pids)
		return cli_usage_error("watch", "give either a command or -p, not both");
	return 0;
}

struct target {
	struct ms_watch *w;
	int pidfd;
	pid_t pid;
	bool exited;
};

/* Prints what the watch has now. 0 or a negative errno. */
static int print_pending(struct target *t, const struct watch_opts *o)
{
	struct ms_watch_event ev;
	int ret;

	while ((ret = ms_watch_next(t->w, &ev)) > 0) {
		if (ev.lost) {
			fprintf(stderr, "mapscope: warning: %llu records were lost\n", (unsigned long long)ev.lost);
			continue;
		}
		if (!o->ops || (o->ops >> ev.change.op & 1))
			print_change(stdout, &ev.change, o->json, o->t0, o->abs);
	}
	return ret;
}

/* cmd: the command mapscope started, named in errors rather than its pid, which the user never saw. */
static int open_watch(struct target *t, pid_t pid, unsigned int flags, const char *cmd)
{
	int err = ms_watch_open(pid, flags, &t->w);

	if (err) {
		if (cmd)
			cli_error("cannot open the events that watch '%s': %s", cmd, strerror(-err));
		else
			cli_error("cannot open the events that watch process %d: %s", (int)pid, strerror(-err));
		cli_hint_privileges(-err);
	}
	return err;
}

static int loop(struct target *t, int n, const struct watch_opts *o)
{
	struct pollfd fds[2 * MAX_PIDS];
	int i, alive, err;

	for (i = 0; i < n; i++) {
		fds[2 * i] = (struct pollfd){ .fd = ms_watch_fd(t[i].w), .events = POLLIN };
		fds[2 * i + 1] = (struct pollfd){ .fd = t[i].pidfd, .events = POLLIN };
	}
	for (;;) {
		if (poll(fds, (nfds_t)(2 * n), POLL_MS) < 0 && errno != EINTR)
			return -errno;
		alive = 0;
		for (i = 0; i < n; i++) {
			if (fds[2 * i + 1].revents & POLLIN) {
				t[i].exited = true;
				fds[2 * i + 1].fd = -1;
			}
			if ((err = print_pending(&t[i], o)))
				return err;
			alive += !t[i].exited;
		}
		if (!alive || launch_stop)
			return 0;
	}
}

int cmd_watch(int argc, char **argv)
{
	struct watch_opts o = { 0 };
	struct target t[MAX_PIDS] = { 0 };
	struct launch_child child = { .go_fd = -1, .err_fd = -1, .pidfd = -1 };
	char status[160];
	int n = 0, i, err, ret = EXIT_RUNTIME;
	pid_t tgid;

	err = parse_args(argc, argv, &o);
	if (err)
		return err < 0 ? 0 : err;
	cli_log_init(0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.cmd && (err = launch_check_command(o.cmd[0]))) {
		cli_error("cannot execute '%s': %s", o.cmd[0], strerror(-err));
		return EXIT_RUNTIME;
	}
	launch_raise_fd_limit();
	launch_signals();
	o.t0 = ms_monotonic_ns();
	if (o.cmd) {
		/* Under --json, what CMD prints must not split or forge the stream's lines. */
		if ((err = launch_fork(&child, o.cmd, o.json))) {
			cli_error("cannot start '%s': %s", o.cmd[0], strerror(-err));
			goto out;
		}
		t[0].pid = child.pid;
		t[0].pidfd = child.pidfd;
		n = 1;
		if (open_watch(&t[0], child.pid, MS_WATCH_ENABLE_ON_EXEC, o.cmd[0]))
			goto out;
		if (!o.json)
			print_change_header(stdout, o.abs);
		if (launch_release(&child, o.cmd[0]))
			goto out;
	} else {
		for (i = 0; i < o.nr_pids; i++) {
			if (launch_tgid(o.pids[i], &tgid)) {
				cli_error("cannot watch process %d: No such process", (int)o.pids[i]);
				goto out;
			}
			t[n].pid = tgid;
			t[n].pidfd = launch_pidfd(tgid);
			n++;
			if (t[n - 1].pidfd < 0 || open_watch(&t[n - 1], tgid, 0, NULL))
				goto out;
		}
		if (!o.json)
			print_change_header(stdout, o.abs);
	}
	err = loop(t, n, &o);
	if (err)
		cli_error("watching failed: %s", strerror(-err));
	ret = err ? EXIT_RUNTIME : 0;
	if (o.cmd) {
		launch_finish(&child, t[0].exited);
		launch_describe(&child, o.cmd[0], status, sizeof(status));
		fprintf(stderr, "mapscope: %s%s\n", status, launch_stop && !t[0].exited ? " (stopped by signal)" : "");
	} else {
		for (i = 0; i < n; i++)
			if (t[i].exited)
				fprintf(stderr, "mapscope: process %d exited\n", (int)t[i].pid);
	}
out:
	for (i = 0; i < n; i++) {
		ms_watch_close(t[i].w);
		if (!o.cmd && t[i].pidfd >= 0)
			close(t[i].pidfd);
	}
	launch_cleanup(&child);
	return ret;
}
