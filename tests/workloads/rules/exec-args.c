/*
 * Rule: execve copies its arguments and environment onto the new
 * program's stack, at the top of the address space to come, before the
 * exec (fs/exec.c, copy_strings); past a page, that stack grows, and the
 * kernel records each growth as a map of the caller's. They belong to the
 * new address space, which the exec puts in place or, where it fails,
 * drops: the caller's maps never change. A vfork child's are its
 * parent's, which kept them as phantom mappings; a failed execve (a file
 * that is no program, ENOEXEC) kept them in the caller itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../snapshot.h"

static char big[12000];

int main(void)
{
	char *args[] = { "true", big, NULL }, notexe[] = "/tmp/mapscope-exec-args-XXXXXX";
	pid_t pid;
	int fd;

	snapshot_init();
	memset(big, 'a', sizeof(big) - 1);
	snapshot("before");
	pid = vfork();
	if (pid == 0) {
		execv("/bin/true", args);
		_exit(127);
	}
	must(pid < 0 || waitpid(pid, NULL, 0) != pid, "vfork");
	snapshot("after-vfork-exec");
	if ((fd = mkstemp(notexe)) < 0 || write(fd, "\1\2\3\4 not a program\n", 20) != 20 || fchmod(fd, 0700)) {
		printf("skip: cannot make %s\n", notexe);
		return 77;
	}
	close(fd);
	if (execv(notexe, args) == 0 || errno != ENOEXEC) {
		printf("execv of %s did not fail with ENOEXEC\n", notexe);
		return 1;
	}
	snapshot("after-failed-exec");
	unlink(notexe);
	return 0;
}
