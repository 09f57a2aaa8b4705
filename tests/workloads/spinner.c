/*
 * A process to attach to. It maps a known region and a PROT_NONE guard,
 * starts a second thread, prints both ranges and the thread ids, then maps,
 * touches and unmaps a page in a loop until it is killed.
 *
 *   region pid=P start=0x.. end=0x.. prot=rw-
 *   region pid=P start=0x.. end=0x.. prot=---
 *   thread pid=P tid=T
 *   ready pid=P
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	printf("thread pid=%d tid=%d\n", getpid(), (int)syscall(SYS_gettid));
	fflush(stdout);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	size_t len = 32 * 4096;
	struct timespec ms = { 0, 1000000 };
	pthread_t t;
	char *a, *g;

	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || g == MAP_FAILED)
		return 1;
	printf("region pid=%d start=%p end=%p prot=rw-\n", getpid(), (void *)a, (void *)(a + len));
	printf("region pid=%d start=%p end=%p prot=---\n", getpid(), (void *)g, (void *)(g + 4096));
	fflush(stdout);
	if (pthread_create(&t, NULL, idle, NULL))
		return 1;
	usleep(10000);
	printf("ready pid=%d\n", getpid());
	fflush(stdout);
	for (;;) {
		volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			p[0] = 1;
			munmap((void *)p, 4096);
		}
		nanosleep(&ms, NULL);
	}
}
