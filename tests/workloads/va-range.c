/*
 * The shape of the kernel's mm selftest virtual_address_range, small: CHUNKS
 * anonymous read-only maps of CHUNK_KIB KiB each, placed by the kernel top
 * down, so that each merges with the one before into one VMA that grows
 * down (each MMAP2 record covers the whole merged VMA); then every chunk is
 * unmapped again, first mapped first. Every EVERY-th chunk is read-write
 * instead, so that the maps also hold VMAs of their own. At the peak (all
 * chunks mapped) it copies /proc/self/maps to SNAPSHOT and prints:
 *
 *   va-range pid=PID chunks=N lines=L peak=NS first=0xLOW last=0xHIGH
 *
 * NS: CLOCK_MONOTONIC at the peak, between the last map and the first
 * unmap; LOW, HIGH: the lowest and highest chunk's start.
 *
 * usage: va-range SNAPSHOT [CHUNKS [CHUNK_KIB [EVERY]]] (default 262144 4 1000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int copy_maps(const char *to, long *lines)
{
	FILE *in = fopen("/proc/self/maps", "r"), *out = fopen(to, "w");
	int c;

	*lines = 0;
	if (!in || !out) {
		perror("va-range: /proc/self/maps or the snapshot");
		return 1;
	}
	while ((c = getc(in)) != EOF) {
		putc(c, out);
		*lines += c == '\n';
	}
	fclose(in);
	return fclose(out) ? 1 : 0;
}

int main(int argc, char **argv)
{
	long chunks = argc > 2 ? atol(argv[2]) : 262144, every = argc > 4 ? atol(argv[4]) : 1000, i, lines;
	size_t size = (size_t)(argc > 3 ? atol(argv[3]) : 4) * 1024;
	char **p = calloc((size_t)chunks, sizeof(*p));
	struct timespec ts;

	if (argc < 2 || !p || chunks < 1 || size < 4096 || every < 1) {
		fprintf(stderr, "usage: va-range SNAPSHOT [CHUNKS [CHUNK_KIB [EVERY]]]\n");
		return 2;
	}
	for (i = 0; i < chunks; i++) {
		p[i] = mmap(NULL, size, PROT_READ | (i % every == every - 1 ? PROT_WRITE : 0),
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[i] == MAP_FAILED) {
			perror("va-range: mmap");
			return 1;
		}
	}
	if (copy_maps(argv[1], &lines))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("va-range pid=%d chunks=%ld lines=%ld peak=%lld first=%p last=%p\n", (int)getpid(), chunks, lines,
	       (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, (void *)p[chunks - 1], (void *)p[0]);
	fflush(stdout);
	for (i = 0; i < chunks; i++)
		munmap(p[i], size);
	return 0;
}
