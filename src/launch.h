/*
 * What record and watch share about their targets: a command started
 * under our control (forked, held until its events are armed, then exec'd)
 * or running processes named by PID; stopping on a signal; ending the
 * command if we stop first.
 */
#ifndef MS_LAUNCH_H
#define MS_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MAX_PIDS 256

/* The signal that asked us to stop (SIGINT, SIGTERM, SIGHUP), or 0. */
extern volatile sig_atomic_t launch_stop;

/* Installs the stop handlers (no SA_RESTART: poll returns EINTR) and ignores SIGPIPE and SIGXFSZ. */
void launch_signals(void);

void launch_raise_fd_limit(void);

/* Parses "PID[,PID...]" into pids (at most MAX_PIDS). 0 or -EINVAL. */
int launch_parse_pids(const char *s, pid_t *pids, int *n);

/* -p PID[,PID...] (an OPT_CALLBACK's context): where the list goes, and the command to name in errors. */
struct launch_pids {
	const char *cmd;
	pid_t *pids;
	int *n;
};

struct cli_option;
/* The OPT_CALLBACK for -p: opt->value is a struct launch_pids. 0, or EXIT_USAGE after the message. */
int launch_opt_pids(const struct cli_option *opt, const char *arg);

/* Resolves argv[0] as execvp would, so a bad command is reported before anything starts. */
int launch_check_command(const char *name);
/* The same, with the file it found in full (len bytes). */
int launch_resolve_command(const char *name, char *full, size_t len);

/* The process (thread group) of pid. 0 or -ESRCH. */
int launch_tgid(pid_t pid, pid_t *tgid);

struct launch_child {
	pid_t pid;
	int go_fd, err_fd;     /* the pipes that hold it and report its exec */
	int pidfd;             /* readable once it has exited */
	int status;
	bool reaped;
};

/*
 * Forks cmd, held before exec until launch_release(). With
 * stdout_to_stderr its standard output goes to our standard error. 0 or a
 * negative errno.
 */
int launch_fork(struct launch_child *c, char **cmd, bool stdout_to_stderr);

/* Lets the child exec; prints the error and returns -errno if exec failed. */
int launch_release(struct launch_child *c, const char *name);

/* Ends the child if it still runs (SIGTERM, SIGKILL 2 s later) and reaps it. */
void launch_finish(struct launch_child *c, bool exited);

/* "'cmd' exited with status N" or "'cmd' was killed by signal N (Name)". */
void launch_describe(const struct launch_child *c, const char *name, char *buf, size_t len);

/* Cleans up whatever launch_fork() left (kills a child that never ran). */
void launch_cleanup(struct launch_child *c);

/* pidfd_open(2): -1 with errno on failure. */
int launch_pidfd(pid_t pid);

#endif
