/*
 * Cost per munmap (mmap + touch untimed, munmap timed) in each watch mode,
 * in one run, interleaved in rounds: no watch; kernel mode (tracepoints);
 * interposition (patched relocations); userfaultfd mode (interposition,
 * and the page tracked with the userfaultfd, so the kernel holds the
 * unmapper until the library's reader has read the event). Medians of
 * the rounds' medians, in ns.
 *
 * Then the latency from an unmap's call to the generation's change, as the
 * unmapping thread sees it: munmap() in the kernel and interposition
 * modes, a raw syscall(SYS_munmap) on a tracked page in the userfaultfd
 * mode (the path only the userfaultfd sees).
 * Median, p99 and max over all rounds. Then the cost of
 * ms_watch_generation() itself.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mapscope/watch.h>

#define ITERS 1000
#define ROUNDS 5
#define LAT_ITERS 400
#define NR_MODES 4

static const char *const names[NR_MODES] = { "no watch", "kernel", "interpose", "uffd" };
static const unsigned int flags[NR_MODES] = { 0, MS_WATCH_KERNEL_ONLY, MS_WATCH_NO_KERNEL | MS_WATCH_NO_UFFD,
					       MS_WATCH_NO_KERNEL };

static uint64_t ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static char *touched_page(struct ms_watch *w)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	p[0] = 1;
	if (w && ms_watch_mode(w) == MS_WATCH_UFFD && ms_watch_track(w, p, 4096)) {
		fprintf(stderr, "watch-cost: ms_watch_track failed\n");
		exit(1);
	}
	return p;
}

static void drain(struct ms_watch *w)
{
	struct ms_watch_event ev;

	while (w && ms_watch_next(w, &ev) > 0)
		;
}

static int cmp(const void *a, const void *b);

/* Median ns per munmap over ITERS: a preempted call (this machine is shared) would own a mean. */
static double round_munmaps(struct ms_watch *w)
{
	static double t[ITERS];
	uint64_t t0;
	char *p;
	int i;

	for (i = 0; i < ITERS; i++) {
		p = touched_page(w);
		t0 = ns();
		munmap(p, 4096);
		t[i] = (double)(ns() - t0);
		if (i % 256 == 255)
			drain(w);               /* keep the queues from filling (untimed) */
	}
	drain(w);
	qsort(t, ITERS, sizeof(double), cmp);
	return t[ITERS / 2];
}

/*
 * LAT_ITERS latencies (ns) into out: from the unmap's call until the
 * unmapping thread sees the generation changed, polling from the call's
 * return (a spinning thread of its own would, on a loaded machine with few
 * CPUs, measure the scheduler instead). In the kernel and interposition
 * modes the generation moves before the call returns; a raw syscall seen
 * only by the userfaultfd waits for the reader thread to queue it.
 */
static void round_latency(struct ms_watch *w, double *out)
{
	uint64_t t0, g, until;
	char *p;
	int i;

	for (i = 0; i < LAT_ITERS; i++) {
		p = touched_page(w);
		drain(w);
		g = ms_watch_generation(w);
		t0 = ns();
		if (ms_watch_mode(w) == MS_WATCH_UFFD)
			syscall(SYS_munmap, p, 4096);
		else
			munmap(p, 4096);
		until = t0 + 100000000;
		while (ms_watch_generation(w) == g && ns() < until)
			;
		out[i] = (double)(ns() - t0);
	}
	drain(w);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct ms_watch *open_mode(int m)
{
	struct ms_watch *w = NULL;
	int err;

	if (!m)
		return NULL;
	err = ms_watch_open(0, flags[m], &w);
	if (err) {
		fprintf(stderr, "watch-cost: %s mode: ms_watch_open: %s (kernel mode needs root or setup)\n", names[m],
			strerror(-err));
		exit(1);
	}
	if ((m == 3) != (ms_watch_mode(w) == MS_WATCH_UFFD)) {
		fprintf(stderr, "watch-cost: no userfaultfd here\n");
		exit(1);
	}
	return w;
}

int main(void)
{
	static double cost[NR_MODES][ROUNDS], lat[NR_MODES][ROUNDS * LAT_ITERS];
	struct ms_watch *w;
	uint64_t t0, g = 0;
	long i, n = 10000000;
	int r, m;

	for (r = 0; r < ROUNDS; r++)
		for (m = 0; m < NR_MODES; m++) {
			w = open_mode(m);
			cost[m][r] = round_munmaps(w);
			if (w)
				round_latency(w, &lat[m][r * LAT_ITERS]);
			ms_watch_close(w);
		}
	printf("munmap of one touched page, %d rounds of %d, medians of the round medians:\n", ROUNDS, ITERS);
	for (m = 0; m < NR_MODES; m++) {
		qsort(cost[m], ROUNDS, sizeof(double), cmp);
		printf("  %-10s %8.0f ns", names[m], cost[m][ROUNDS / 2]);
		if (m)
			printf("   (+%.0f ns)", cost[m][ROUNDS / 2] - cost[0][ROUNDS / 2]);
		printf("\n");
	}
	printf("from the unmap's call to the generation's change, as the unmapping thread sees it, %d unmaps:\n",
	       ROUNDS * LAT_ITERS);
	for (m = 1; m < NR_MODES; m++) {
		double *l = lat[m];
		int k = ROUNDS * LAT_ITERS;

		qsort(l, (size_t)k, sizeof(double), cmp);
		printf("  %-10s median %7.1f us  p99 %7.1f us  max %7.1f us%s\n", names[m], l[k / 2] / 1e3,
		       l[k * 99 / 100] / 1e3, l[k - 1] / 1e3, m == 3 ? "   (raw syscall, tracked page)" : "");
	}
	for (m = 1; m < NR_MODES; m++) {
		w = open_mode(m);
		t0 = ns();
		for (i = 0; i < n; i++)
			g += ms_watch_generation(w);
		t0 = ns() - t0;
		ms_watch_close(w);
		printf("ms_watch_generation, %-9s %.2f ns per call (%ld calls; %llu)\n", names[m], (double)t0 / n, n,
		       (unsigned long long)(g & 1));
	}
	return 0;
}
