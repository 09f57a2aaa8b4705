/*
 * Cost per munmap (mmap + touch untimed, munmap timed), three ways in one
 * run, interleaved in rounds: no notifier; libmapscope's watch open; a
 * userfaultfd notifier (UNMAP, REMAP and REMOVE events on the range, read
 * by a thread, as such notifiers work). Then the cost of
 * ms_watch_generation(). Medians of the rounds' means, in ns.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mapscope/watch.h>

#define ITERS 2000
#define ROUNDS 7

static uint64_t ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static int uffd = -1;
static volatile int stop;

static void *uffd_reader(void *arg)
{
	struct uffd_msg msg[16];
	struct pollfd p = { .fd = uffd, .events = POLLIN };

	(void)arg;
	while (!stop) {
		if (poll(&p, 1, 100) > 0 && read(uffd, msg, sizeof(msg)) < 0 && errno != EAGAIN)
			break;
	}
	return NULL;
}

/* Mean ns per munmap over ITERS. */
static double round_munmaps(struct ms_watch *w, int with_uffd)
{
	struct ms_watch_event ev;
	uint64_t total = 0, t0;
	int i;

	for (i = 0; i < ITERS; i++) {
		char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		p[0] = 1;
		if (with_uffd) {
			struct uffdio_register r = { .range = { (uint64_t)p, 4096 },
						     .mode = UFFDIO_REGISTER_MODE_MISSING };
			if (ioctl(uffd, UFFDIO_REGISTER, &r)) {
				perror("UFFDIO_REGISTER");
				exit(1);
			}
		}
		t0 = ns();
		munmap(p, 4096);
		total += ns() - t0;
		if (w && i % 256 == 255)          /* keep the rings from filling (untimed) */
			while (ms_watch_next(w, &ev) > 0)
				;
	}
	return (double)total / ITERS;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	double base[ROUNDS], watched[ROUNDS], uf[ROUNDS];
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP |
					      UFFD_FEATURE_EVENT_REMOVE };
	struct ms_watch *w;
	pthread_t reader;
	uint64_t t0, g = 0;
	long i, n = 10000000;
	int r, err;

	err = ms_watch_open(0, 0, &w);
	if (err) {
		fprintf(stderr, "watch-cost: ms_watch_open: %s (run as root)\n", strerror(-err));
		return 1;
	}
	ms_watch_close(w);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		fprintf(stderr, "watch-cost: userfaultfd: %s\n", strerror(errno));
		return 1;
	}
	pthread_create(&reader, NULL, uffd_reader, NULL);
	for (r = 0; r < ROUNDS; r++) {
		base[r] = round_munmaps(NULL, 0);
		ms_watch_open(0, 0, &w);
		watched[r] = round_munmaps(w, 0);
		ms_watch_close(w);
		uf[r] = round_munmaps(NULL, 1);
	}
	stop = 1;
	pthread_join(reader, NULL);
	qsort(base, ROUNDS, sizeof(double), cmp);
	qsort(watched, ROUNDS, sizeof(double), cmp);
	qsort(uf, ROUNDS, sizeof(double), cmp);

	ms_watch_open(0, 0, &w);
	t0 = ns();
	for (i = 0; i < n; i++)
		g += ms_watch_generation(w);
	t0 = ns() - t0;
	ms_watch_close(w);

	printf("munmap of one touched page, %d rounds of %d, medians of the round means:\n", ROUNDS, ITERS);
	printf("  no notifier          %8.0f ns\n", base[ROUNDS / 2]);
	printf("  mapscope watch open  %8.0f ns   (+%.0f ns)\n", watched[ROUNDS / 2],
	       watched[ROUNDS / 2] - base[ROUNDS / 2]);
	printf("  userfaultfd notifier %8.0f ns   (+%.0f ns)\n", uf[ROUNDS / 2], uf[ROUNDS / 2] - base[ROUNDS / 2]);
	printf("ms_watch_generation: %.2f ns per call (%ld calls; %llu)\n", (double)t0 / n, n,
	       (unsigned long long)(g & 1));
	return 0;
}
