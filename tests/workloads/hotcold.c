/*
 * Two anonymous regions of equal size (32 MiB each, 2 MiB-aligned, a
 * PROT_NONE gap between them so that their VMAs never merge): both are
 * written in full once, then "hot" is written again on every page every
 * 20 ms for SECONDS (default 1.5) while "cold" is left alone. Prints
 *
 *   region name=hot start=0x.. end=0x..
 *   region name=cold start=0x.. end=0x..
 *   touched t=NS        (CLOCK_MONOTONIC: the first writes are over)
 *   done rewrites=N
 *
 * so that a test knows which region is which and that the hot one was hot.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MIB (1UL << 20)
#define LEN (32 * MIB)

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void touch(char *p, size_t len, char v)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		((volatile char *)p)[off] = v;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.5;
	unsigned long long end;
	char *res, *hot, *cold;
	uintptr_t a;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	unsigned long rewrites = 0;

	/* A reservation with room to align; the two regions are mapped over it, the gap stays PROT_NONE. */
	res = mmap(NULL, 2 * LEN + 6 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	a = ((uintptr_t)res + 2 * MIB - 1) & ~(2 * MIB - 1);
	/* Cold first: where nothing but first touches ranked them, it would come first (the older region). */
	cold = mmap((void *)(a + LEN + 2 * MIB), LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	hot = mmap((void *)a, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (hot == MAP_FAILED || cold == MAP_FAILED)
		return 1;
	printf("region name=hot start=%p end=%p\n", (void *)hot, (void *)(hot + LEN));
	printf("region name=cold start=%p end=%p\n", (void *)cold, (void *)(cold + LEN));
	fflush(stdout);
	touch(cold, LEN, 1);
	touch(hot, LEN, 1);
	printf("touched t=%llu\n", now_ns());
	fflush(stdout);
	for (end = now_ns() + (unsigned long long)(seconds * 1e9); now_ns() < end; rewrites++) {
		touch(hot, LEN, (char)rewrites);
		nanosleep(&pause, NULL);
	}
	printf("done rewrites=%lu\n", rewrites);
	return 0;
}
