/*
 * Hugepage advice must follow the memory, not the address. Attached to
 * (record -p), on SIGUSR1 it: touches a 12 MiB region whole; punches a
 * 2 MiB hole in it; moves its first MiB with mremap to a new home of 24
 * MiB (2 MiB-aligned), and touches the home but for 384 pages of its
 * second MiB, so that the home's first span is dense only with the pages
 * that moved; lets another mapping take the hole and touches it whole;
 * maps, touches and unmaps a 4 MiB region (gone by the end). Then it prints
 * its ranges and waits for SIGUSR2 to exit:
 *
 *   range name=home|hole|gone start=0x.. end=0x..
 *   touched pid=P
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1UL << 20)

/* A 2 MiB-aligned address with len bytes free after it (reserved, then given back). */
static char *aligned_free(size_t len)
{
	char *p = mmap(NULL, len + 2 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + 2 * MIB - 1) & ~(2 * MIB - 1);
	munmap(p, len + 2 * MIB);
	return (char *)a;
}

static void touch(char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		((volatile char *)p)[off] = 1;
}

int main(void)
{
	char *main_at = aligned_free(12 * MIB), *home, *hole, *gone;
	sigset_t set;
	int sig;

	if (!main_at || mmap(main_at, 12 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			     -1, 0) == MAP_FAILED)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready pid=%d\n", getpid());
	fflush(stdout);
	do
		sigwait(&set, &sig);
	while (sig != SIGUSR1);

	touch(main_at, 12 * MIB);
	hole = main_at + 4 * MIB;
	munmap(hole, 2 * MIB);
	home = aligned_free(24 * MIB);
	if (!home || mremap(main_at, MIB, 24 * MIB, MREMAP_MAYMOVE | MREMAP_FIXED, home) != home)
		return 1;
	touch(home + MIB, 128 * 4096);                  /* 128 of the second MiB's 256 pages */
	touch(home + 2 * MIB, 22 * MIB);
	if (mmap(hole, 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0) != hole)
		return 1;
	touch(hole, 2 * MIB);
	gone = aligned_free(4 * MIB);
	if (!gone || mmap(gone, 4 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			  -1, 0) != gone)
		return 1;
	touch(gone, 4 * MIB);
	usleep(20000);                                  /* old enough to be advised */
	munmap(gone, 4 * MIB);
	printf("range name=home start=%p end=%p\n", (void *)home, (void *)(home + 24 * MIB));
	printf("range name=hole start=%p end=%p\n", (void *)hole, (void *)(hole + 2 * MIB));
	printf("range name=gone start=%p end=%p\n", (void *)gone, (void *)(gone + 4 * MIB));
	printf("touched pid=%d\n", getpid());
	fflush(stdout);
	do
		sigwait(&set, &sig);
	while (sig != SIGUSR2);
	return 0;
}
