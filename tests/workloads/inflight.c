/*
 * inflight [MIB]: a munmap in flight across an attach. On SIGUSR1 one
 * thread populates MIB MiB (1024 by default), holding the address space's
 * lock for reading; another calls munmap on a page 20 ms later and waits
 * for the lock inside the call. A tracer that starts meanwhile sees no
 * entry of that munmap, reads the maps with the page in them, and then
 * sees the call remove it and return. Then the process idles.
 *
 *   ready pid=P page=0x...
 *   unmapped
 *   done
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static char *big, *page;
static size_t big_len;

static void *populate(void *arg)
{
	(void)arg;
	madvise(big, big_len, MADV_POPULATE_WRITE);
	munmap(big, big_len);
	return NULL;
}

static void *unmap_page(void *arg)
{
	(void)arg;
	usleep(20000);
	munmap(page, 4096);
	printf("unmapped\n");
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	sigset_t set;
	int sig;

	big_len = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20;
	big = mmap(NULL, big_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	/* Read-only, so that no anonymous neighbour merges with it. */
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED || page == MAP_FAILED)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready pid=%d page=%p\n", getpid(), (void *)page);
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	if (pthread_create(&a, NULL, populate, NULL) || pthread_create(&b, NULL, unmap_page, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
}
