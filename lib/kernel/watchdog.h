/*
 * Internal: a process that undoes what the recorder set up in the kernel
 * (a kdamond, uprobes) however the recorder ends. It waits for the
 * recorder's end of a pipe to close, which happens on a clean stop and
 * when the recorder is killed, even by SIGKILL, then runs the teardown. It
 * leaves the recorder's process group (Ctrl-C there must not stop the
 * teardown), ignores the signals a terminal sends, and keeps nothing of
 * the recorder's open (a pipe the recorder writes to sees its end when the
 * recorder ends).
 */
#ifndef MS_KERNEL_WATCHDOG_H
#define MS_KERNEL_WATCHDOG_H

#include <stdbool.h>
#include <sys/types.h>

struct ms_watchdog {
	pid_t pid;                   /* 0: none */
	int pipe_w;                  /* the recorder's end; -1: none */
};

/*
 * Forks the watchdog, which calls teardown(arg) when w->pipe_w closes and
 * exits 0 where it returned 0, 1 otherwise. 0 or a negative errno.
 */
int ms_watchdog_start(struct ms_watchdog *w, int (*teardown)(void *arg), void *arg);

/* Closes the recorder's end and waits for the teardown: 0, or -EIO where it failed. */
int ms_watchdog_stop(struct ms_watchdog *w);

#endif
