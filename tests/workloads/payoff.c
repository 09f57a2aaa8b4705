/*
 * The hugepage payoff workload: what profile-guided advice must tell apart.
 *
 *   hot     malloc'd, every page touched, then read at random (the prize)
 *   sparse  mmap'd, one page in 64 touched (hugepages would bloat it 64x)
 *   cold    malloc'd, every page touched once, never again
 *   buffers short-lived malloc'd buffers, each touched and freed at once
 *
 * Each region is made by its own function, so that each has its own
 * creating call chain. It prints the regions (ground truth for a test),
 * the time of the random reads and its memory from /proc/self/smaps_rollup:
 *
 *   region name=hot start=0x.. end=0x..
 *   reads ns=N sum=S
 *   memory rss_kb=N anon_huge_kb=N
 *
 * With --wait it then prints "done pid=N" and waits for a line on stdin, so
 * that a test can read /proc/PID/smaps while it lives. With --raw the sparse
 * region is mapped by a raw system call, not through mmap(3). --sparse 0
 * makes no sparse region. With --cold-first the cold region is made before
 * the hot one, with a PROT_NONE page mapped between them: of two regions of
 * one size, both touched in full once, the older ranks first where first
 * touches alone rank them, and the two never merge into one kernel VMA,
 * whose accessed bits (record --referenced, per VMA) could not tell them
 * apart (the hot/cold case of bench/hugepages-payoff: --hot N --cold N
 * --sparse 0 --buffers 0 --cold-first).
 *
 * payoff [--hot MIB] [--sparse MIB] [--cold MIB] [--reads N] [--buffers N] [--wait] [--raw] [--cold-first]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1UL << 20)
#define PAGE 4096UL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void show(const char *name, const void *p, size_t len)
{
	printf("region name=%s start=%p end=%p\n", name, p, (const void *)((const char *)p + len));
}

static void touch(char *p, size_t len, size_t step)
{
	size_t off;

	for (off = 0; off < len; off += step)
		((volatile char *)p)[off] = 1;
}

__attribute__((noinline)) static char *make_hot(size_t len)
{
	char *p = malloc(len);

	if (p)
		memset(p, 1, len);
	return p;
}

/* With raw, by the system call itself, as a program that bypasses mmap(3) would. */
__attribute__((noinline)) static char *make_sparse(size_t len, bool raw)
{
	char *p = raw ? (char *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
		  mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	touch(p, len, 64 * PAGE);
	return p;
}

__attribute__((noinline)) static char *make_cold(size_t len)
{
	char *p = malloc(len);

	if (p && len) {
		touch(p, len, PAGE);
		p[len - 1] = 1;           /* every page of it, as make_hot's memset: the same pages touched */
	}
	return p;
}

__attribute__((noinline)) static void short_buffers(unsigned n)
{
	unsigned i;
	char *p;

	for (i = 0; i < n; i++) {
		p = malloc(4 * MIB);
		if (!p)
			return;
		touch(p, 4 * MIB, PAGE);
		free(p);
	}
}

/* Random 8-byte reads over the hot region (xorshift): the TLB-bound part. */
__attribute__((noinline)) static uint64_t read_hot(const char *p, size_t len, uint64_t n)
{
	uint64_t x = 88172645463325252ULL, sum = 0, i, words = len / 8;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += ((const volatile uint64_t *)p)[x % words];
	}
	return sum;
}

static void print_memory(void)
{
	char line[256];
	long rss = -1, huge = -1, v;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %ld kB", &v) == 1)
			rss = v;
		else if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			huge = v;
	}
	if (f)
		fclose(f);
	printf("memory rss_kb=%ld anon_huge_kb=%ld\n", rss, huge);
}

static unsigned long arg(int argc, char **argv, const char *name, unsigned long def)
{
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoul(argv[i + 1], NULL, 0);
	return def;
}

int main(int argc, char **argv)
{
	size_t hot_len = arg(argc, argv, "--hot", 1024) * MIB, sparse_len = arg(argc, argv, "--sparse", 1024) * MIB;
	size_t cold_len = arg(argc, argv, "--cold", 256) * MIB;
	uint64_t reads = arg(argc, argv, "--reads", 50000000), t, sum;
	unsigned buffers = (unsigned)arg(argc, argv, "--buffers", 50);
	bool wait = false, raw = false, cold_first = false;
	char *hot, *sparse = NULL, *cold = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		wait |= !strcmp(argv[i], "--wait");
		raw |= !strcmp(argv[i], "--raw");
		cold_first |= !strcmp(argv[i], "--cold-first");
	}
	if (cold_first) {
		cold = make_cold(cold_len);
		/* Right below malloc's mapping of it, where the next mapping would go: taken or not, none merges. */
		if (cold)
			mmap((void *)(((uintptr_t)cold & ~(PAGE - 1)) - PAGE), PAGE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	}
	hot = make_hot(hot_len);
	if (sparse_len)
		sparse = make_sparse(sparse_len, raw);
	if (!cold_first)
		cold = make_cold(cold_len);
	if (!hot || (sparse_len && !sparse) || !cold) {
		fprintf(stderr, "payoff: out of memory\n");
		return 1;
	}
	short_buffers(buffers);
	show("hot", hot, hot_len);
	if (sparse_len)
		show("sparse", sparse, sparse_len);
	show("cold", cold, cold_len);
	t = now_ns();
	sum = read_hot(hot, hot_len, reads);
	printf("reads ns=%llu sum=%llu\n", (unsigned long long)(now_ns() - t), (unsigned long long)sum);
	print_memory();
	if (wait) {
		printf("done pid=%d\n", getpid());
		fflush(stdout);
		getchar();
	}
	return 0;
}
