/* The recorder's watchdog (kernel/watchdog.h): teardown on every exit path. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/watchdog.h"

/* The watchdog's life: wait for the recorder's end of the pipe to close, then tear down. */
static void __attribute__((noreturn)) watch(int fd, int (*teardown)(void *arg), void *arg)
{
	char c;
	ssize_t n;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (fd != STDIN_FILENO) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	for (fd = 3; fd < 65536; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			close(fd);
	do
		n = read(STDIN_FILENO, &c, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	_exit(teardown(arg) ? 1 : 0);
}

int ms_watchdog_start(struct ms_watchdog *w, int (*teardown)(void *arg), void *arg)
{
	int p[2];

	w->pid = 0;
	w->pipe_w = -1;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	w->pid = fork();
	if (w->pid < 0) {
		close(p[0]);
		close(p[1]);
		w->pid = 0;
		return -errno;
	}
	if (w->pid == 0) {
		close(p[1]);
		watch(p[0], teardown, arg);
	}
	close(p[0]);
	w->pipe_w = p[1];
	return 0;
}

int ms_watchdog_stop(struct ms_watchdog *w)
{
	int status = 0;

	if (w->pipe_w >= 0)
		close(w->pipe_w);
	w->pipe_w = -1;
	if (w->pid <= 0)
		return 0;
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	w->pid = 0;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}
