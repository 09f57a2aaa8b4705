/*
 * Rule: the main thread exits while another runs (exit_mm of the leader
 * drops only its reference): the address space lives until the last
 * thread exits, and the process's maps go on changing. The leader's EXIT
 * record does not end them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../snapshot.h"

static pid_t leader;

/* Whether the leader is a zombie: it has exited, its threads not. */
static int leader_gone(void)
{
	char path[64], buf[256], *state;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)leader);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	state = strrchr(buf, ')');
	return state && (state[2] == 'Z' || state[2] == 'X');
}

static void *worker(void *arg)
{
	struct timespec nap = { 0, 1000000 };
	char *a, *b;
	int i;

	(void)arg;
	for (i = 0; i < 10000 && !leader_gone(); i++)
		nanosleep(&nap, NULL);
	snapshot_thread("leader-gone");
	a = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	a[0] = 1;
	snapshot_thread("map-after-leader");
	must(mprotect(a + 2 * PAGE, PAGE, PROT_READ), "mprotect");
	snapshot_thread("protect-after-leader");
	must(munmap(a, 4 * PAGE), "munmap");
	b = map_or_die(NULL, 2 * PAGE, PROT_READ, 0);
	snapshot_thread("unmap-after-leader");
	(void)b;
	fflush(stdout);
	return NULL;             /* the last thread: the process exits with it */
}

int main(void)
{
	pthread_t t;

	snapshot_init();
	leader = getpid();
	snapshot("before");
	if (pthread_create(&t, NULL, worker, NULL)) {
		printf("skip: pthread_create failed\n");
		return 77;
	}
	snapshot("thread-started");
	pthread_exit(NULL);      /* the leader goes first */
}
