/*
 * Many small regions, for the HTML report's scale: maps REGIONS anonymous
 * regions of PAGES pages each, writes every page once (a page-fault sample
 * each), and exits without unmapping them. Neighbours alternate between
 * read-write and read-write-exec, so the kernel never merges two. It
 * prints what it made:
 *
 *   many-maps regions=N pages=P
 *
 * usage: many-maps [REGIONS [PAGES]] (default 10000 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE 4096UL

int main(int argc, char **argv)
{
	long regions = argc > 1 ? atol(argv[1]) : 10000, pages = argc > 2 ? atol(argv[2]) : 2, i, k;
	volatile char *p;

	for (i = 0; i < regions; i++) {
		p = mmap(NULL, (size_t)pages * PAGE, PROT_READ | PROT_WRITE | (i & 1 ? PROT_EXEC : 0),
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("many-maps: mmap");
			return 1;
		}
		for (k = 0; k < pages; k++)
			p[k * PAGE] = 1;
	}
	printf("many-maps regions=%ld pages=%ld\n", regions, pages);
	return 0;
}
