/*
 * Two 64 MiB anonymous regions, each aligned to 2 MiB (32 whole spans):
 * "dense" is touched on every 4 KiB page, "sparse" once per 2 MiB. It maps
 * them, prints them and "ready", waits for SIGUSR1, touches, prints
 * "touched", and waits for SIGUSR2 before exiting, so a test can record it
 * by PID and then collapse its memory while it lives.
 *
 *   region name=dense start=0x.. end=0x.. spans=32
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1UL << 20)

/*
 * len bytes at a multiple of 2 MiB, but never of 64 MiB: 64 MiB there is
 * the shape of a glibc malloc arena (HEAP_MAX_SIZE at a multiple of it),
 * which hugepages takes a region with no call chain for, as it is asked
 * to; one run in 32 the advice then named malloc, not this mmap.
 */
static char *aligned_region(size_t len)
{
	char *p = mmap(NULL, len + 4 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + 2 * MIB - 1) & ~(2 * MIB - 1);
	if (a % (64 * MIB) == 0)
		a += 2 * MIB;
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((char *)a + len, (uintptr_t)p + len + 4 * MIB - (a + len));
	return (char *)a;
}

int main(void)
{
	size_t len = 64 * MIB, off;
	char *dense = aligned_region(len), *sparse = aligned_region(len);
	sigset_t set;
	int sig;

	if (!dense || !sparse)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("region name=dense start=%p end=%p spans=32\n", (void *)dense, (void *)(dense + len));
	printf("region name=sparse start=%p end=%p spans=32\n", (void *)sparse, (void *)(sparse + len));
	printf("ready pid=%d\n", getpid());
	fflush(stdout);
	do
		sigwait(&set, &sig);
	while (sig != SIGUSR1);
	for (off = 0; off < len; off += 4096)
		((volatile char *)dense)[off] = 1;
	for (off = 0; off < len; off += 2 * MIB)
		((volatile char *)sparse)[off] = 1;
	printf("touched pid=%d\n", getpid());
	fflush(stdout);
	do
		sigwait(&set, &sig);
	while (sig != SIGUSR2);
	return 0;
}
