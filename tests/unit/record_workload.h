/*
 * mapscope record of a workload, for unit tests that need a real
 * recording (a stack copy at every mapping call): the mapscope binary
 * ctest names in MAPSCOPE, as root.
 */
#ifndef MS_TEST_RECORD_WORKLOAD_H
#define MS_TEST_RECORD_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Records argv into path, with record's option opt where it is not NULL:
 * 0, or -1 where it cannot (not root, no MAPSCOPE, the recording failed).
 */
static int record_workload_with(const char *path, const char *opt, char *const argv[])
{
	const char *ms = getenv("MAPSCOPE");
	char *args[16] = { (char *)"mapscope", (char *)"record", (char *)"-o", (char *)path };
	int status, i, n = 4;
	pid_t pid;

	if (!ms || geteuid() != 0)
		return -1;
	if (opt)
		args[n++] = (char *)opt;
	args[n++] = (char *)"--";
	for (i = 0; argv[i] && i < 9; i++)
		args[n++] = argv[i];
	if ((pid = fork()) == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execv(ms, args);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int record_workload(const char *path, char *const argv[])
{
	return record_workload_with(path, NULL, argv);
}

#endif
