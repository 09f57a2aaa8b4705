/*
 * syscall-stop: runs a command under ptrace and, at the exit of every
 * system call that can change an address space, with every traced task
 * stopped, reads /proc/TID/maps of the calling thread between two
 * CLOCK_MONOTONIC readings. Each snapshot goes to the output file as
 *
 *   snapshot pid=TID time=MID step=N:SYSCALL t0=NS t1=NS ret=RET tgid=TGID
 *   <the maps text>
 *   end-snapshot
 *
 * (MID is the midpoint of t0 and t1; the layout is the one the workloads'
 * snapshot.h prints, so tests/e2e/check-maps.py and syscall-stop-check.py
 * read both.) Nothing traced runs between t0 and t1, so the maps text is
 * the address space at any instant in between: `mapscope maps --pid TID
 * --at MID` of a recording of this tracer must print it line for line.
 *
 * Why every task stopped: a sibling thread (or a CLONE_VM process) could
 * change the maps while they are read. Tasks are attached with
 * PTRACE_SEIZE (children follow by TRACECLONE/FORK/VFORK) so that running
 * ones can be stopped with PTRACE_INTERRUPT. A vfork parent sleeps until
 * its child execs or exits and cannot be interrupted: it changes nothing
 * meanwhile, so it is left alone. Exit and exec are seen as they come.
 *
 * usage: syscall-stop -o FILE [-q] -- CMD [ARG...]
 * Exit status: the command's, or 1 if tracing failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 4096
#define UFFDIO_TYPE 0xAA   /* _IOC_TYPE of every userfaultfd ioctl */

/*
 * T_UFFD: asked to stop, but asleep in a userfaultfd wait (a fault, or an
 * event such as fork, mremap or munmap waiting to be read) that only
 * another task, the handler, ends: a wait that a PTRACE_INTERRUPT does
 * not break (TASK_KILLABLE). With the handler stopped, it would never
 * stop; it changes nothing while it sleeps, so the snapshot is taken
 * without it. Its interrupt stays pending: it stops once woken.
 */
enum tstate { T_RUNNING, T_STOPPED, T_VFORKING, T_UFFD };

struct task {
	pid_t tid;
	enum tstate state;
	int status;      /* the wait status of its stop, T_STOPPED only */
	int handled;     /* its stop has been looked at (snapshot taken if due) */
};

static struct task tasks[MAX_TASKS];
static int nr_tasks;
static FILE *out;
static unsigned long steps;
static pid_t main_pid;
static int main_status = -1;
static char maps_buf[1 << 22];
static pid_t uffd_waiter;   /* a task in T_UFFD during this snapshot, or 0 */

/* The system calls that can change an address space (x86-64 numbers). */
static const struct {
	long nr;
	const char *name;
} watched[] = {
	{ SYS_mmap, "mmap" }, { SYS_munmap, "munmap" }, { SYS_mremap, "mremap" },
	{ SYS_mprotect, "mprotect" }, { SYS_pkey_mprotect, "pkey_mprotect" }, { SYS_brk, "brk" },
	{ SYS_madvise, "madvise" }, { SYS_process_madvise, "process_madvise" },
	{ SYS_mlock, "mlock" }, { SYS_mlock2, "mlock2" }, { SYS_munlock, "munlock" },
	{ SYS_mlockall, "mlockall" }, { SYS_munlockall, "munlockall" },
	{ 462, "mseal" }, { SYS_mbind, "mbind" }, { 450, "set_mempolicy_home_node" },
	{ SYS_shmat, "shmat" }, { SYS_shmdt, "shmdt" }, { SYS_prctl, "prctl" },
	{ SYS_ioctl, "ioctl" }, { SYS_remap_file_pages, "remap_file_pages" },
	{ SYS_io_setup, "io_setup" }, { SYS_io_destroy, "io_destroy" },
	{ SYS_clone, "clone" }, { SYS_clone3, "clone3" }, { SYS_fork, "fork" }, { SYS_vfork, "vfork" },
	{ SYS_execve, "execve" }, { SYS_execveat, "execveat" },
	/* A mapped file's name: /proc shows it as the path is now, or "(deleted)". */
	{ SYS_unlink, "unlink" }, { SYS_unlinkat, "unlinkat" }, { SYS_rename, "rename" },
	{ SYS_renameat, "renameat" }, { SYS_renameat2, "renameat2" },
};

static struct task *task_find(pid_t tid)
{
	int i;

	for (i = 0; i < nr_tasks; i++)
		if (tasks[i].tid == tid)
			return &tasks[i];
	return NULL;
}

static struct task *task_add(pid_t tid)
{
	struct task *t = task_find(tid);

	if (t)
		return t;
	if (nr_tasks == MAX_TASKS) {
		fprintf(stderr, "syscall-stop: more than %d tasks\n", MAX_TASKS);
		exit(1);
	}
	t = &tasks[nr_tasks++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = T_RUNNING;
	return t;
}

static void task_remove(pid_t tid)
{
	struct task *t = task_find(tid);

	if (t)
		*t = tasks[--nr_tasks];
}

static const char *watched_name(const struct __ptrace_syscall_info *si)
{
	size_t i;

	for (i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
		if (watched[i].nr == (long)si->entry.nr)
			return watched[i].name;
	return NULL;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
}

/* The maps of TID, read between t0 and t1, to the output file. */
static void snapshot(pid_t tid, const char *name, long long ret)
{
	unsigned long long t0, t1;
	char path[64];
	ssize_t n, len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	t0 = now_ns();
	fd = open(path, O_RDONLY);
	while (fd >= 0 && (n = read(fd, maps_buf + len, sizeof(maps_buf) - 1 - (size_t)len)) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	t1 = now_ns();
	if (fd < 0)
		return;   /* the task is gone: nothing to compare */
	maps_buf[len] = '\0';
	fprintf(out, "snapshot pid=%d time=%llu step=%lu:%s t0=%llu t1=%llu ret=%lld tgid=%d",
		tid, (t0 + t1) / 2, ++steps, name, t0, t1, ret, tgid_of(tid));
	if (uffd_waiter)
		fprintf(out, " uffd-wait=%d", uffd_waiter);
	fprintf(out, "\n%send-snapshot\n", maps_buf);
}

/* The name of the address-space call this syscall-exit stop ends, or NULL. */
static const char *stop_wants_snapshot(pid_t tid, int status, long long *ret)
{
	struct __ptrace_syscall_info si;
	const char *name;

	if (!WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80))
		return NULL;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) <= 0 || si.op != PTRACE_SYSCALL_INFO_EXIT)
		return NULL;
	*ret = si.exit.rval;
	/* The exit stop does not carry the number: the entry stop's is in the task's orig_rax. */
	si.entry.nr = (unsigned long)ptrace(PTRACE_PEEKUSER, tid, 15 * 8 /* ORIG_RAX */, 0);
	name = watched_name(&si);
	if (name && si.entry.nr == SYS_ioctl) {
		long cmd = ptrace(PTRACE_PEEKUSER, tid, 13 * 8 /* RSI */, 0);

		if (((unsigned long)cmd >> 8 & 0xff) != UFFDIO_TYPE)
			return NULL;
	}
	return name;
}

/* Restarts a stopped task past its stop, passing on a signal it was to get. */
static void task_resume(struct task *t)
{
	int st = t->status, sig = 0, event = st >> 16;

	if (WIFSTOPPED(st) && !event && WSTOPSIG(st) != (SIGTRAP | 0x80))
		sig = WSTOPSIG(st);
	if (event == PTRACE_EVENT_VFORK) {
		/* It sleeps until the child execs or exits, and cannot be stopped meanwhile. */
		t->state = T_VFORKING;
	} else {
		t->state = T_RUNNING;
	}
	if (ptrace(PTRACE_SYSCALL, t->tid, 0, sig) && errno != ESRCH)
		perror("syscall-stop: PTRACE_SYSCALL");
}

/* /proc/TID/WHAT into buf, NUL-terminated: its length, or -1 where the task is gone. */
static int proc_read(pid_t tid, const char *what, char *buf, size_t size)
{
	char path[64];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/%s", tid, what);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static int task_gone(pid_t tid)
{
	char buf[512], *p;

	if (proc_read(tid, "stat", buf, sizeof(buf)) < 0)
		return 1;
	p = strrchr(buf, ')');
	/* A zombie (a leader waiting for its threads, say) has no mm and never stops. */
	return !p || p[2] == 'Z' || p[2] == 'X';
}

/* Whether TID sleeps in a userfaultfd wait: its wchan (handle_userfault, the event waits) says so. */
static int in_uffd_wait(pid_t tid)
{
	char buf[128];

	return proc_read(tid, "wchan", buf, sizeof(buf)) > 0 && strstr(buf, "userfault") != NULL;
}

/*
 * Tasks still running that sleep in a userfaultfd wait, seen so twice in
 * a row (a task woken a moment ago may still read as asleep), become
 * T_UFFD: they are not waited for.
 */
static void note_uffd_waits(char *seen)
{
	int i;

	for (i = 0; i < nr_tasks; i++) {
		if (tasks[i].state != T_RUNNING || !in_uffd_wait(tasks[i].tid)) {
			seen[i] = 0;
			continue;
		}
		if (seen[i]++) {
			tasks[i].state = T_UFFD;
			uffd_waiter = tasks[i].tid;
		}
	}
}

static void on_wait(pid_t tid, int status);

/* Stops every running task: PTRACE_INTERRUPT, then each one's stop, whatever it is. */
static void stop_all(void)
{
	static char seen[MAX_TASKS];
	int i, pending, status, rounds = 0;
	pid_t tid;

	uffd_waiter = 0;
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < nr_tasks; i++) {
		if (tasks[i].state == T_UFFD)
			tasks[i].state = T_RUNNING;   /* still asleep, or about to stop: looked at again */
		if (tasks[i].state == T_RUNNING && ptrace(PTRACE_INTERRUPT, tasks[i].tid, 0, 0) && errno == ESRCH)
			tasks[i].state = T_VFORKING;   /* gone: nothing of it to wait for here */
	}
	for (;;) {
		pending = 0;
		for (i = 0; i < nr_tasks; i++)
			if (tasks[i].state == T_RUNNING)
				pending++;
		if (!pending)
			return;
		tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid > 0) {
			on_wait(tid, status);
			continue;
		}
		if (tid < 0 && errno == ECHILD)
			return;
		/* Nothing yet: drop tasks that are dead or zombies, then wait a little. */
		for (i = 0; i < nr_tasks; i++)
			if (tasks[i].state == T_RUNNING && task_gone(tasks[i].tid))
				tasks[i].state = T_VFORKING;
		note_uffd_waits(seen);
		if (++rounds % 20000 == 0)
			fprintf(stderr, "syscall-stop: still waiting for %d task(s) to stop\n", pending);
		usleep(50);
	}
}

/* Takes the snapshots the stopped tasks are due, then lets them all run. */
static void settle(void)
{
	long long ret;
	const char *name;
	int i, any = 0;

	for (i = 0; i < nr_tasks; i++)
		if (tasks[i].state == T_STOPPED && !tasks[i].handled &&
		    stop_wants_snapshot(tasks[i].tid, tasks[i].status, &ret))
			any = 1;
	if (any) {
		stop_all();
		for (i = 0; i < nr_tasks; i++) {
			if (tasks[i].state != T_STOPPED || tasks[i].handled)
				continue;
			tasks[i].handled = 1;
			name = stop_wants_snapshot(tasks[i].tid, tasks[i].status, &ret);
			if (name)
				snapshot(tasks[i].tid, name, ret);
		}
	}
	for (i = 0; i < nr_tasks; i++)
		if (tasks[i].state == T_STOPPED)
			task_resume(&tasks[i]);
}

/* Notes what a wait status says of TID; a stopped task stays stopped until settle(). */
static void on_wait(pid_t tid, int status)
{
	struct task *t;
	unsigned long msg = 0;
	int event = status >> 16;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (tid == main_pid)
			main_status = status;
		task_remove(tid);
		return;
	}
	t = task_add(tid);
	t->state = T_STOPPED;
	t->status = status;
	t->handled = 0;
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
		if (!ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg))
			task_add((pid_t)msg);   /* it reports its own first stop */
	} else if (event == PTRACE_EVENT_EXEC) {
		/* An exec from a thread that is not the leader takes the leader's id: the old one is gone. */
		if (!ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) && (pid_t)msg != tid)
			task_remove((pid_t)msg);
	}
	/* A vfork parent's next stop (PTRACE_EVENT_VFORK_DONE) ends its sleep: it is stopped now. */
}

static int start(char **argv)
{
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("syscall-stop: fork");
		return -1;
	}
	if (pid == 0) {
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "syscall-stop: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, WSTOPPED) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "syscall-stop: the child did not stop before exec\n");
		return -1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, opts)) {
		perror("syscall-stop: PTRACE_SEIZE");
		kill(pid, SIGKILL);
		return -1;
	}
	main_pid = pid;
	task_add(pid);
	/* The SIGCONT ends its group stop; the seized task reports a stop that starts the tracing. */
	kill(pid, SIGCONT);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int i, status;
	pid_t tid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			path = argv[++i];
		else
			break;
	}
	if (!path || i >= argc - 1 || strcmp(argv[i], "--")) {
		fprintf(stderr, "usage: syscall-stop -o FILE -- CMD [ARG...]\n");
		return 2;
	}
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "syscall-stop: cannot open '%s': %s\n", path, strerror(errno));
		return 1;
	}
	if (start(argv + i + 1))
		return 1;
	while (nr_tasks) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		on_wait(tid, status);
		settle();
	}
	fclose(out);
	fprintf(stderr, "syscall-stop: %lu snapshots\n", steps);
	if (main_status < 0)
		return 1;
	return WIFEXITED(main_status) ? WEXITSTATUS(main_status) : 128 + WTERMSIG(main_status);
}
