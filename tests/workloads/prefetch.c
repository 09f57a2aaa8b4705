/*
 * Bad prefetches with a known count: walk() reads a mapping of SIZE bytes
 * a cache line at a time and prefetches DIST bytes ahead of each read, so
 * the last DIST / LINE prefetches land past the mapping's end, where
 * nothing is mapped (the mapping sits alone at HINT). With "freed", the
 * mapping is then unmapped and prefetched once more, line by line: every
 * one of those lands in memory that munmap freed. It prints its ground
 * truth:
 *
 *   mapping start=0x... end=0x... size=1048576
 *   prefetches total=16384 past_end=1024 distance=65536 line=NN
 *   freed prefetches=16384 line=NN           (with "freed")
 *
 * With "spin" it prints "ready pid=N" and walks again and again for up to
 * 60 s (a recorder to stop meanwhile); with "repeat N" it walks N times
 * and prints "walks=N prefetches=M ns=T", T the walks' time (the cost
 * bench's). With "hotcold EVENTS" it walks 64 KiB at a time (hot) and
 * every 50th walk prefetches 64 lines with prefetch_all (cold) until
 * tracefs's uprobe_events (EVENTS) lists a uprobe in this program; then
 * 5 walks more and one prefetch_all, and it prints "hotcold hot_line=NN
 * cold_line=NN probed=1 after=5120" (after: walk's prefetches since).
 * With "classes" it prefetches into a guard page, the NULL page and
 * memory never mapped (classes() says where), and prints "classes
 * guard=N null=N never=N never_distance=BYTES line=NN".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uprobe-listed.h"

#define SIZE (1UL << 20)
#define DIST (64UL << 10)
#define LINE 64
#define HINT ((void *)0x2badf0000000UL)

static volatile uint64_t sink;

static int line_of(const char *marker);

__attribute__((noipa)) static uint64_t walk(const volatile char *p, size_t size, size_t dist)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < size; i += LINE) {
		__builtin_prefetch((const char *)p + i + dist);   /* PREFETCH-AHEAD */
		sum += p[i];
	}
	return sum;
}

__attribute__((noipa)) static void prefetch_all(const char *p, size_t size)
{
	size_t i;

	for (i = 0; i < size; i += LINE)
		__builtin_prefetch(p + i, 0, 1);                 /* PREFETCH-FREED */
}

/* n prefetches a cache line apart from p, which may be any address: a prefetch never faults. */
__attribute__((noipa)) static void prefetch_lines(uintptr_t p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		__builtin_prefetch((const char *)p + i * LINE);  /* PREFETCH-LINES */
}

/*
 * classes: prefetches into a guard page (PROT_NONE between two pages of
 * data), the NULL page, and memory never mapped NEVER bytes below the
 * mapping at HINT (nothing lies between, nothing below).
 */
#define NEVER (16UL << 30)
static int classes(char *p)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *g = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (g == MAP_FAILED || mprotect(g + pg, pg, PROT_NONE))
		return 1;
	prefetch_lines((uintptr_t)(g + pg), pg / LINE);
	prefetch_lines(0x100, 16);                        /* in page 0: below any vm.mmap_min_addr */
	prefetch_lines((uintptr_t)p - NEVER, 32);
	printf("classes guard=%lu null=16 never=32 never_distance=%lu line=%d\n", pg / LINE, NEVER,
	       line_of("PREFETCH" "-LINES"));
	return 0;
}

/* Whether uprobe_events (at path) lists a probe in this program. */
static int probed(const char *path)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	return uprobe_listed(path, exe);
}

/*
 * hotcold: walk's prefetch runs nearly all the time, prefetch_all's
 * hardly ever, until a uprobe in this program is listed in events (10 s
 * at most); then 5 walks more, and prefetch_all once more.
 */
static int hotcold(char *p, const char *events)
{
	long walks = 0;
	int seen = 0;
	time_t end = time(NULL) + 10;

	while (!seen && time(NULL) < end) {
		sink = walk(p, 64 << 10, 0);
		if (++walks % 50 == 0) {
			prefetch_all(p, 64 * LINE);
			seen = probed(events);
		}
	}
	for (walks = 0; walks < 5; walks++)
		sink = walk(p, 64 << 10, 0);
	prefetch_all(p, 64 * LINE);
	return seen;
}

/* The source line of a marker, for the tests' ground truth. */
static int line_of(const char *marker)
{
	FILE *f = fopen(__FILE__, "r");
	char buf[256];
	int n = 0;

	while (f && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, marker) && !strstr(buf, "line_of")) {
			fclose(f);
			return n;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int freed = argc > 1 && !strcmp(argv[1], "freed");
	char *p = mmap(HINT, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("prefetch: mmap");
		return 1;
	}
	memset(p, 1, SIZE);
	if (argc > 2 && !strcmp(argv[1], "repeat")) {
		long n = atol(argv[2]), i;
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++)
			sink = walk(p, SIZE, DIST);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("walks=%ld prefetches=%lu ns=%lld\n", n, (unsigned long)n * (SIZE / LINE),
		       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "spin")) {
		time_t end = time(NULL) + 60;

		printf("ready pid=%d\n", (int)getpid());
		fflush(stdout);
		while (time(NULL) < end)
			sink = walk(p, SIZE, DIST);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "hotcold")) {
		int seen = hotcold(p, argv[2]);

		printf("hotcold hot_line=%d cold_line=%d probed=%d after=%d\n", line_of("PREFETCH" "-AHEAD"),
		       line_of("PREFETCH" "-FREED"), seen, 5 * (64 << 10) / (int)LINE);
		return 0;
	}
	printf("mapping start=%p end=%p size=%lu\n", (void *)p, (void *)(p + SIZE), SIZE);
	if (argc > 1 && !strcmp(argv[1], "classes"))
		return classes(p);
	sink = walk(p, SIZE, DIST);
	printf("prefetches total=%lu past_end=%lu distance=%lu line=%d\n", SIZE / LINE, DIST / LINE, DIST,
	       line_of("PREFETCH" "-AHEAD"));
	if (freed) {
		munmap(p, SIZE);
		prefetch_all(p, SIZE);
		printf("freed prefetches=%lu line=%d\n", SIZE / LINE, line_of("PREFETCH" "-FREED"));
	}
	return 0;
}
