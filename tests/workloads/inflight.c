/*
 * inflight MODE [MIB]: a mapping call in flight across an attach. On
 * SIGUSR1 one thread populates MIB MiB (1024 by default), holding the
 * address space's lock for reading; the first thread (its tid the pid,
 * as the maps read from /proc have it) makes the call 20 ms later and
 * waits for the lock inside it. A tracer that starts meanwhile sees no
 * entry of the call, reads the maps as they were before it, and then sees
 * it change them and return. Then the process idles. MODE:
 *
 *   page    munmap of a page alone in its VMA (the VMA tree's write of
 *           NULL over it is traced)
 *   middle  munmap of the middle page of three (the kernel traces no
 *           write of NULL there)
 *   grow    mremap of a page to two, in place
 *
 *   ready pid=P page=0x...
 *   changed
 *   done
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static char *big, *page;
static size_t big_len;
static const char *mode;

static void *populate(void *arg)
{
	(void)arg;
	madvise(big, big_len, MADV_POPULATE_WRITE);
	munmap(big, big_len);
	return NULL;
}

static void change(void)
{
	usleep(20000);
	if (!strcmp(mode, "middle"))
		munmap(page + 4096, 4096);
	else if (!strcmp(mode, "grow"))
		mremap(page, 4096, 8192, 0);
	else
		munmap(page, 4096);
	printf("changed\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pthread_t a;
	sigset_t set;
	int sig;

	mode = argc > 1 ? argv[1] : "page";
	big_len = (size_t)(argc > 2 ? atoi(argv[2]) : 1024) << 20;
	big = mmap(NULL, big_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	/*
	 * Read-only, so that no anonymous neighbour merges with it; three
	 * pages, the last two given back for "page" and "grow" (room to grow).
	 */
	page = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED || page == MAP_FAILED || (strcmp(mode, "middle") && munmap(page + 4096, 2 * 4096)))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready pid=%d page=%p\n", getpid(), (void *)page);
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	if (pthread_create(&a, NULL, populate, NULL))
		return 1;
	change();                    /* by the process's first thread, whose tid is its pid */
	pthread_join(a, NULL);
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
}
