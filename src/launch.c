#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"
#include "parse-options.h"

volatile sig_atomic_t launch_stop;

static void on_signal(int sig)
{
	launch_stop = sig;
}

void launch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);        /* past the file size limit, a write fails EFBIG: the file is ended */
}

void launch_raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int launch_parse_pids(const char *s, pid_t *pids, int *n)
{
	char *copy = strdup(s), *tok, *save = NULL;
	uint64_t v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	/* strsep, not strtok: "1,,2" and "1," have an empty item, which is an error. */
	for (save = copy; (tok = strsep(&save, ",")); ) {
		if (*n == MAX_PIDS || cli_parse_u64(tok, 1, CLI_PID_MAX, &v)) {
			err = -EINVAL;
			break;
		}
		pids[(*n)++] = (pid_t)v;
	}
	free(copy);
	return err ? err : (*n ? 0 : -EINVAL);
}

int launch_opt_pids(const struct cli_option *opt, const char *arg)
{
	const struct launch_pids *l = opt->value;

	if (launch_parse_pids(arg, l->pids, l->n))
		return cli_usage_error(l->cmd, "invalid PID list '%s': expected numbers separated by commas", arg);
	return 0;
}

int launch_resolve_command(const char *name, char *full, size_t len)
{
	const char *path = getenv("PATH");
	const char *p, *end;
	int saw_eacces = 0;

	if (strchr(name, '/')) {
		snprintf(full, len, "%s", name);
		return access(name, X_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchrnul(p, ':');
		snprintf(full, len, "%.*s/%s", (int)(end - p), end == p ? "." : p, name);
		if (!access(full, X_OK))
			return 0;
		saw_eacces |= errno == EACCES;
		if (!*end)
			break;
	}
	return saw_eacces ? -EACCES : -ENOENT;
}

int launch_check_command(const char *name)
{
	char full[4096];

	return launch_resolve_command(name, full, sizeof(full));
}

int launch_tgid(pid_t pid, pid_t *tgid)
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

int launch_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The child: wait until the events are armed, then exec (which enables them). */
static void run_child(char **cmd, int go_fd, int err_fd, bool stdout_to_stderr)
{
	char c;
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	if (stdout_to_stderr)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	execvp(cmd[0], cmd);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int launch_fork(struct launch_child *c, char **cmd, bool stdout_to_stderr)
{
	int go[2], ep[2];

	memset(c, 0, sizeof(*c));
	c->go_fd = c->err_fd = c->pidfd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ep, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0)
		run_child(cmd, go[0], ep[1], stdout_to_stderr);
	close(go[0]);
	close(ep[1]);
	c->go_fd = go[1];
	c->err_fd = ep[0];
	c->pidfd = launch_pidfd(c->pid);
	return c->pidfd < 0 ? -errno : 0;
}

int launch_release(struct launch_child *c, const char *name)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		cli_error("cannot execute '%s': %s", name, strerror(e));
		return -e;
	}
	return 0;
}

void launch_finish(struct launch_child *c, bool exited)
{
	struct pollfd p;

	if (!c->pid || c->reaped)
		return;
	if (!exited) {
		kill(c->pid, SIGTERM);
		p = (struct pollfd){ .fd = c->pidfd, .events = POLLIN };
		while (poll(&p, 1, 2000) < 0 && errno == EINTR)
			;
		if (!(p.revents & POLLIN))
			kill(c->pid, SIGKILL);
	}
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->reaped = true;
}

void launch_describe(const struct launch_child *c, const char *name, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!c->reaped)
		return;
	if (WIFEXITED(c->status))
		snprintf(buf, len, "'%s' exited with status %d", name, WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(buf, len, "'%s' was killed by signal %d (%s)", name, WTERMSIG(c->status),
			 strsignal(WTERMSIG(c->status)));
}

void launch_cleanup(struct launch_child *c)
{
	if (c->pid > 0 && !c->reaped) {
		kill(c->pid, SIGKILL);        /* it never got to run the command */
		waitpid(c->pid, NULL, 0);
		c->reaped = true;
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->go_fd = c->err_fd = c->pidfd = -1;
}
