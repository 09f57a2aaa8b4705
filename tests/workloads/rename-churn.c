/*
 * Renames among many mappings, as a program that writes files into place
 * (write a temporary, rename it over the real one) does: maps REGIONS
 * anonymous regions of one page, each touched once (neighbours alternate
 * between read-write and read-write-exec, so the kernel never merges
 * two), then renames a file it never maps in DIR back and forth RENAMES
 * times. It prints what it did:
 *
 *   rename-churn regions=N renames=M
 *
 * usage: rename-churn DIR [REGIONS [RENAMES]] (default 20000 20000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	long regions = argc > 2 ? atol(argv[2]) : 20000, renames = argc > 3 ? atol(argv[3]) : 20000, i;
	int mapped = argc > 4 && !strcmp(argv[4], "mapped");
	char a[4096], b[4096];
	volatile char *p;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: rename-churn DIR [REGIONS [RENAMES]]\n");
		return 2;
	}
	for (i = 0; i < regions; i++) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | (i & 1 ? PROT_EXEC : 0), MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED) {
			perror("rename-churn: mmap");
			return 1;
		}
		p[0] = 1;
	}
	snprintf(a, sizeof(a), "%s/churn.tmp", argv[1]);
	snprintf(b, sizeof(b), "%s/churn", argv[1]);
	if (!(f = fopen(a, "w")) || fclose(f) || (mapped && !(f = fopen(b, "w"))) || (mapped && fputc(1, f) == EOF) ||
	    (mapped && fclose(f))) {
		perror(a);
		return 1;
	}
	if (mapped && (!(f = fopen(b, "r")) || mmap(NULL, 1, PROT_READ, MAP_SHARED, fileno(f), 0) == MAP_FAILED)) {
		perror(b);
		return 1;
	}
	for (i = 0; i < renames; i++)
		if (rename(i & 1 ? b : a, i & 1 ? a : b)) {
			perror("rename-churn: rename");
			return 1;
		}
	remove(renames & 1 ? b : a);
	printf("rename-churn regions=%ld renames=%ld mapped=%d\n", regions, renames, mapped);
	return 0;
}
