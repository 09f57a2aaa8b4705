/*
 * mapscope record: the live source plus the perf.data writer.
 *
 * Order matters for a clean failure: everything that can fail for bad input
 * or missing privileges (options, the command's path, the events) is tried
 * before the output file is touched and before the command runs; the
 * command waits on a pipe until the events are armed for its exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include <mapscope/live.h>
#include <mapscope/pdwriter.h>

#include "cli.h"
#include "commands.h"

#define MAX_PIDS 256

static const char usage_text[] =
"usage: mapscope record [-o FILE] [-c PERIOD] [-m PAGES] [--no-samples]\n"
"                       [--call-graph fp] (-p PID[,PID...] | -- CMD [ARGS...])\n"
"\n"
"Records every change to the address space of CMD (with its threads and\n"
"children) or of running processes, and their page faults, into perf.data.\n"
"\n"
"  -o, --output FILE     write to FILE (default mapscope.data); an existing\n"
"                        FILE becomes FILE.old; '-' writes pipe mode to stdout\n"
"  -p, --pid PID[,...]   attach to running processes and all their threads\n"
"                        until Ctrl-C or until they exit; their current maps\n"
"                        are read from /proc first\n"
"  -c, --count PERIOD    one page-fault sample every PERIOD faults (default 1)\n"
"  -m, --mmap-pages N    ring buffer pages per CPU, a power of two (default 1024)\n"
"      --no-samples      record address-space changes only, no page faults\n"
"      --call-graph fp   add user call chains (frame pointers) to page-fault\n"
"                        and syscall samples: who faulted, who mapped\n"
"  -v, --verbose         say more\n"
"  -h, --help            show this help\n"
"\n"
"What is recorded: MMAP2 (every mapping, code and data), COMM, FORK and\n"
"EXIT records; syscalls:sys_enter_*/sys_exit_* tracepoints for mmap, munmap,\n"
"mremap, mprotect, brk, madvise, shmat and shmdt; page-fault samples with\n"
"the data address. Times are CLOCK_MONOTONIC nanoseconds.\n"
"\n"
"Ctrl-C, SIGTERM or the command dying by a signal still leave a complete\n"
"file. A summary line goes to stderr at the end.\n"
"\n"
"EXIT STATUS\n"
"  0 the recording is complete (the command's own status is in the summary),\n"
"  1 recording failed, 2 bad usage.\n"
"\n"
"Needs root, or CAP_PERFMON, or kernel.perf_event_paranoid=-1, and tracefs.\n"
"\n"
"EXAMPLES\n"
"  mapscope record -- ./myprog --size 1G\n"
"  mapscope record -o run.data --call-graph fp -- make -j2\n"
"  mapscope record -p 1234,1240        (stop with Ctrl-C)\n"
"  mapscope record -o - -- ./myprog | perf script -i -\n"
"  perf script -i mapscope.data --show-mmap-events --show-task-events\n";

struct record_opts {
	const char *output;
	uint64_t period;
	uint64_t pages;
	bool no_samples;
	bool callchain;
	int verbose;
	pid_t pids[MAX_PIDS];
	int nr_pids;
	char **cmd;
	bool pipe;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int parse_pids(const char *s, struct record_opts *o)
{
	char *copy = strdup(s), *tok, *save = NULL;
	uint64_t v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_pids == MAX_PIDS || cli_parse_u64(tok, 1, 4194304, &v)) {
			err = -EINVAL;
			break;
		}
		o->pids[o->nr_pids++] = (pid_t)v;
	}
	free(copy);
	return err ? err : (o->nr_pids ? 0 : -EINVAL);
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "no-samples", no_argument, NULL, 'S' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->output = "mapscope.data";
	o->period = 1;
	o->pages = MS_LIVE_DEFAULT_PAGES;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:p:c:m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'p':
			if (parse_pids(optarg, o))
				return cli_usage_error("record", "invalid PID list '%s': expected "
						       "numbers separated by commas", optarg);
			break;
		case 'c':
			if (cli_parse_u64(optarg, 1, UINT32_MAX, &o->period))
				return cli_usage_error("record", "invalid sample period '%s': expected "
						       "a whole number from 1 to %u", optarg, UINT32_MAX);
			break;
		case 'm':
			if (cli_parse_u64(optarg, 1, 1u << 20, &o->pages) || (o->pages & (o->pages - 1)))
				return cli_usage_error("record", "invalid ring buffer size '%s': expected "
						       "a power of two number of pages, such as 1024", optarg);
			break;
		case 'S':
			o->no_samples = true;
			break;
		case 'g':
			if (strcmp(optarg, "fp"))
				return cli_usage_error("record", "unsupported call-graph mode '%s': "
						       "only 'fp' (frame pointers) is available", optarg);
			o->callchain = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return cli_usage_error("record", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (!o->cmd && !o->nr_pids)
		return cli_usage_error("record", "nothing to record: give a command after '--' "
				       "or processes with -p");
	if (o->cmd && o->nr_pids)
		return cli_usage_error("record", "give either a command or -p, not both");
	o->pipe = !strcmp(o->output, "-");
	return 0;
}

/* Resolves argv[0] as execvp would, so a bad command is reported before anything starts. */
static int check_command(const char *name)
{
	const char *path = getenv("PATH");
	char full[4096];
	const char *p, *end;
	int saw_eacces = 0;

	if (strchr(name, '/'))
		return access(name, X_OK) ? -errno : 0;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchrnul(p, ':');
		snprintf(full, sizeof(full), "%.*s/%s", (int)(end - p), end == p ? "." : p, name);
		if (!access(full, X_OK))
			return 0;
		saw_eacces |= errno == EACCES;
		if (!*end)
			break;
	}
	return saw_eacces ? -EACCES : -ENOENT;
}

static int check_pid(pid_t pid, pid_t *tgid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	*tgid = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", tgid) == 1)
			break;
	fclose(f);
	return *tgid > 0 ? 0 : -ESRCH;
}

/* The child: wait until the events are armed, then exec (which enables them). */
static void run_child(char **cmd, int go_fd, int err_fd, bool pipe_mode)
{
	char c;
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	if (pipe_mode)
		dup2(STDERR_FILENO, STDOUT_FILENO);  /* stdout carries the recording */
	execvp(cmd[0], cmd);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

struct task_list {
	pid_t *tids;
	size_t n, cap;
};

static bool has_tid(const struct task_list *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->tids[i] == tid)
			return true;
	return false;
}

/*
 * Opens events on every thread of tgid. Threads created while we scan are
 * caught by the next pass (or by inherit, once their creator is followed).
 */
static int attach_process(struct ms_live *l, pid_t tgid, struct task_list *done)
{
	char path[64];
	struct dirent *d;
	int pass, added, err = 0;
	pid_t tid;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	for (pass = 0; pass < 8; pass++) {
		dir = opendir(path);
		if (!dir)
			return -ESRCH;
		added = 0;
		while (!err && (d = readdir(dir))) {
			tid = (pid_t)atoi(d->d_name);
			if (tid <= 0 || has_tid(done, tid))
				continue;
			err = ms_live_add_task(l, tid);
			if (err == -ESRCH) {           /* the thread just exited */
				err = 0;
				continue;
			}
			if (!err && done->n == done->cap) {
				void *p = realloc(done->tids, (done->cap * 2 + 16) * sizeof(pid_t));
				if (!p)
					err = -ENOMEM;
				else {
					done->tids = p;
					done->cap = done->cap * 2 + 16;
				}
			}
			if (!err)
				done->tids[done->n++] = tid;
			added++;
		}
		closedir(dir);
		if (err || !added)
			break;
	}
	return err;
}

static int open_output(const char *path)
{
	char old[4096];
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		snprintf(old, sizeof(old), "%s.old", path);
		if (rename(path, old))
			return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd;
}

static int write_record(const struct perf_event_header *h, void *ctx)
{
	return ms_pdwriter_write(ctx, h);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

struct session {
	struct record_opts *o;
	struct ms_live *live;
	struct ms_pdwriter *writer;
	int out_fd;
	pid_t child;               /* the command, or 0 */
	int child_status;
	bool child_reaped;
	int pidfds[MAX_PIDS];      /* one per followed process */
	bool exited[MAX_PIDS];
	int nr_pidfds;
	pid_t tgids[MAX_PIDS];
};

static int drain(struct session *s)
{
	long n = ms_live_drain(s->live, write_record, s->writer);

	if (n > 0)
		return ms_pdwriter_finish_round(s->writer);
	return n < 0 ? (int)n : 0;
}

/* Polls the rings and the followed processes until all have exited or a signal stops us. */
static int main_loop(struct session *s)
{
	struct pollfd fds[64 + MAX_PIDS];
	int nr_rings = ms_live_nr_fds(s->live), i, live_procs, err;

	for (i = 0; i < nr_rings && i < 64; i++)
		fds[i] = (struct pollfd){ .fd = ms_live_fd(s->live, i), .events = POLLIN };
	for (i = 0; i < s->nr_pidfds; i++)
		fds[nr_rings + i] = (struct pollfd){ .fd = s->pidfds[i], .events = POLLIN };
	while (!stop_signal) {
		if (poll(fds, (nfds_t)(nr_rings + s->nr_pidfds), 250) < 0 && errno != EINTR)
			return -errno;
		if ((err = drain(s)))
			return err;
		live_procs = 0;
		for (i = 0; i < s->nr_pidfds; i++) {
			if (fds[nr_rings + i].revents & POLLIN) {
				s->exited[i] = true;
				fds[nr_rings + i].fd = -1;
			}
			live_procs += !s->exited[i];
		}
		if (!live_procs)
			break;
	}
	return 0;
}

/* Ends the command if we stop first: SIGTERM, then SIGKILL after 2 s. */
static void finish_child(struct session *s)
{
	struct pollfd p;

	if (!s->child)
		return;
	if (!s->exited[0]) {
		kill(s->child, SIGTERM);
		p = (struct pollfd){ .fd = s->pidfds[0], .events = POLLIN };
		while (poll(&p, 1, 2000) < 0 && errno == EINTR)
			;
		if (!(p.revents & POLLIN))
			kill(s->child, SIGKILL);
	}
	while (waitpid(s->child, &s->child_status, 0) < 0 && errno == EINTR)
		;
	s->child_reaped = true;
}

static void print_summary(struct session *s)
{
	struct ms_pdwriter_stats st;
	char status[128] = "";

	ms_pdwriter_stats(s->writer, &st);
	if (s->child_reaped) {
		if (WIFEXITED(s->child_status))
			snprintf(status, sizeof(status), "; '%s' exited with status %d",
				 s->o->cmd[0], WEXITSTATUS(s->child_status));
		else if (WIFSIGNALED(s->child_status))
			snprintf(status, sizeof(status), "; '%s' was killed by signal %d (%s)",
				 s->o->cmd[0], WTERMSIG(s->child_status),
				 strsignal(WTERMSIG(s->child_status)));
	}
	fprintf(stderr, "mapscope: %llu samples, %llu records lost, %.1f MiB written to '%s'%s%s\n",
		(unsigned long long)st.samples, (unsigned long long)st.lost,
		(double)st.bytes / (1024.0 * 1024.0), s->o->pipe ? "stdout" : s->o->output,
		status, stop_signal ? " (stopped by signal)" : "");
	if (st.lost)
		cli_hint("records were lost: raise the ring buffer size with -m (now %llu pages) "
			 "or sample fewer faults with -c", (unsigned long long)s->o->pages);
}

static int start_writer(struct session *s, int argc, char **argv)
{
	size_t n = ms_live_nr_evsels(s->live), i;
	struct ms_pdwriter_evsel *ev = calloc(n, sizeof(*ev));
	struct ms_pdwriter_opts wo = {
		.evsels = ev, .nr_evsels = n, .argc = argc, .argv = argv,
		.clockid = CLOCK_MONOTONIC, .pipe = s->o->pipe,
	};

	if (!ev)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ev[i].attr = ms_live_evsel_attr(s->live, i);
		ev[i].name = ms_live_evsel_name(s->live, i);
		ev[i].ids = ms_live_evsel_ids(s->live, i, &ev[i].nr_ids);
	}
	ms_live_tracing_data(s->live, &wo.tracing_data, &wo.tracing_data_len);
	s->writer = ms_pdwriter_new(s->out_fd, &wo);
	free(ev);
	return s->writer ? 0 : -errno;
}

static int setup_targets(struct session *s, int *go_fd, int *err_fd)
{
	struct record_opts *o = s->o;
	struct task_list done = { 0 };
	int go[2], ep[2], i, err = 0;

	if (o->cmd) {
		if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
			return -errno;
		s->child = fork();
		if (s->child < 0)
			return -errno;
		if (s->child == 0)
			run_child(o->cmd, go[0], ep[1], o->pipe);
		close(go[0]);
		close(ep[1]);
		*go_fd = go[1];
		*err_fd = ep[0];
		s->tgids[0] = s->child;
		s->nr_pidfds = 1;
		return ms_live_add_task(s->live, s->child);
	}
	for (i = 0; i < o->nr_pids && !err; i++) {
		s->tgids[i] = o->pids[i];
		err = attach_process(s->live, o->pids[i], &done);
		s->nr_pidfds = i + 1;
	}
	free(done.tids);
	return err;
}

static int open_pidfds(struct session *s)
{
	int i;

	for (i = 0; i < s->nr_pidfds; i++) {
		s->pidfds[i] = (int)syscall(SYS_pidfd_open, s->tgids[i], 0);
		if (s->pidfds[i] < 0)
			return -errno;
	}
	return 0;
}

/* Releases the command and learns whether its exec worked. */
static int start_child(struct session *s, int go_fd, int err_fd)
{
	int e = 0;
	ssize_t n;

	if (write(go_fd, "g", 1) != 1)
		return -errno;
	close(go_fd);
	n = read(err_fd, &e, sizeof(e));
	close(err_fd);
	if (n == (ssize_t)sizeof(e)) {
		cli_error("cannot execute '%s': %s", s->o->cmd[0], strerror(e));
		return -e;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct session s = { .o = &o, .out_fd = -1 };
	struct ms_live_opts lo = { 0 };
	int go_fd = -1, err_fd = -1, ret = EXIT_RUNTIME, err, i;
	pid_t tgid;

	err = parse_args(argc, argv, &o);
	if (err)
		return err < 0 ? 0 : err;
	cli_log_init(o.verbose);

	if (o.cmd && (err = check_command(o.cmd[0]))) {
		cli_error("cannot execute '%s': %s", o.cmd[0], strerror(-err));
		return EXIT_RUNTIME;
	}
	for (i = 0; i < o.nr_pids; i++) {
		if (check_pid(o.pids[i], &tgid)) {
			cli_error("cannot attach to process %d: No such process", (int)o.pids[i]);
			return EXIT_RUNTIME;
		}
		o.pids[i] = tgid;
	}
	raise_fd_limit();
	install_signals();

	lo.fault_period = o.no_samples ? 0 : o.period;
	lo.mmap_pages = (unsigned int)o.pages;
	lo.flags = (o.callchain ? MS_LIVE_CALLCHAIN : 0) | (o.cmd ? MS_LIVE_ENABLE_ON_EXEC : 0);
	s.live = ms_live_new(&lo);
	if (!s.live) {
		if (errno == EACCES || errno == EPERM)
			cli_hint_privileges(errno);
		else if (errno == ENOENT || errno == ENODEV)
			cli_hint("tracefs must be mounted, with syscall tracepoints "
				 "(CONFIG_FTRACE_SYSCALLS): as root, mount -t tracefs nodev /sys/kernel/tracing");
		goto cleanup;
	}
	err = setup_targets(&s, &go_fd, &err_fd);
	if (!err)
		err = open_pidfds(&s);
	if (err) {
		if (err == -ESRCH)
			cli_error("cannot attach: the process exited");
		cli_hint_privileges(-err);
		goto cleanup;
	}

	s.out_fd = o.pipe ? STDOUT_FILENO : open_output(o.output);
	if (s.out_fd < 0) {
		cli_error("cannot create '%s': %s", o.output, strerror(errno));
		goto cleanup;
	}
	if ((err = start_writer(&s, argc, argv))) {
		cli_error("cannot write '%s': %s", o.output, strerror(-err));
		goto cleanup;
	}
	if (o.cmd) {
		if ((err = start_child(&s, go_fd, err_fd)))
			goto finish;
		go_fd = err_fd = -1;
	} else {
		if ((err = ms_live_enable(s.live))) {
			cli_error("cannot enable events: %s", strerror(-err));
			goto finish;
		}
		for (i = 0; i < o.nr_pids; i++)
			if ((err = ms_live_synthesize(s.live, o.pids[i], monotonic_ns(),
						      write_record, s.writer)))
				cli_error("cannot read the maps of process %d: %s",
					  (int)o.pids[i], strerror(-err));
	}

	err = main_loop(&s);
	if (err)
		cli_error("recording failed: %s", strerror(-err));
	finish_child(&s);
	ms_live_disable(s.live);
	if (!err)
		err = drain(&s);
	if (err)
		cli_error("cannot write '%s': %s", o.pipe ? "stdout" : o.output, strerror(-err));
finish:
	if (ms_pdwriter_close(s.writer)) {
		cli_error("cannot write '%s': %s", o.pipe ? "stdout" : o.output, strerror(errno));
		err = -EIO;
	}
	if (!o.cmd || s.child_reaped)
		print_summary(&s);
	ret = err ? EXIT_RUNTIME : 0;
cleanup:
	if (s.child && !s.child_reaped) {
		kill(s.child, SIGKILL);       /* it never got to run the command */
		waitpid(s.child, NULL, 0);
	}
	if (go_fd >= 0)
		close(go_fd);
	if (err_fd >= 0)
		close(err_fd);
	for (i = 0; i < s.nr_pidfds; i++)
		if (s.pidfds[i] > 0)
			close(s.pidfds[i]);
	ms_pdwriter_free(s.writer);
	if (s.out_fd >= 0 && s.out_fd != STDOUT_FILENO)
		close(s.out_fd);
	ms_live_free(s.live);
	return ret;
}
