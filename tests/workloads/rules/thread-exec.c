/*
 * Rule: an exec from a thread that does not lead. de_thread kills the
 * leader, which writes an EXIT for PID:PID, then hands the PID to the
 * exec'ing thread: the process goes on with the new image, and its maps
 * are those of the exec from then on.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../snapshot.h"

static char *self;

static void *worker(void *arg)
{
	char *argv[] = { self, "after-exec", NULL };

	(void)arg;
	snapshot_thread("thread-before-exec");
	execv("/proc/self/exe", argv);
	perror("execv");
	exit(1);
}

/* The new image: the same pid, its own maps, which change as before. */
static int after_exec(void)
{
	char *a;

	snapshot("after-exec");
	a = map_or_die(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, 0);
	snapshot("map-after-exec");
	must(munmap(a + PAGE, PAGE), "munmap");
	snapshot("unmap-after-exec");
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;

	snapshot_init();
	if (argc > 1 && !strcmp(argv[1], "after-exec"))
		return after_exec();
	self = argv[0];
	map_or_die(NULL, 2 * PAGE, PROT_READ, 0);
	snapshot("before");
	if (pthread_create(&t, NULL, worker, NULL)) {
		printf("skip: pthread_create failed\n");
		return 77;
	}
	for (;;)
		pause();         /* until the exec kills this thread */
}
