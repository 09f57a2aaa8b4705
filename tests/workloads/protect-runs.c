/*
 * One mprotect over many pieces of a region, making them alike: maps 100
 * pages read-write and touches them; protects every other page of the
 * last CUT pages read-only, one call each (the kernel then holds 1 + CUT
 * VMAs there); then makes all CUT pages read-exec in one call, which the
 * kernel merges into one VMA. The region's perms in a report are those of
 * most of its bytes: r-xp where CUT is over 50, rw-p below. It prints the
 * region and what the kernel holds in it at the end:
 *
 *   protect-runs start=0x... end=0x... cut=N
 *   <its lines of /proc/self/maps>
 *
 * usage: protect-runs [CUT] (default 60; 1-100).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096UL
#define PAGES 100UL

int main(int argc, char **argv)
{
	unsigned long cut = argc > 1 ? strtoul(argv[1], NULL, 0) : 60, i, lo, hi;
	char line[512], *p;
	FILE *maps;

	if (cut < 1 || cut > PAGES) {
		fprintf(stderr, "usage: protect-runs [CUT] (1-%lu)\n", PAGES);
		return 2;
	}
	p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("protect-runs: mmap");
		return 1;
	}
	memset(p, 1, PAGES * PAGE);
	for (i = PAGES - cut; i < PAGES; i += 2)
		if (mprotect(p + i * PAGE, PAGE, PROT_READ)) {
			perror("protect-runs: mprotect");
			return 1;
		}
	if (mprotect(p + (PAGES - cut) * PAGE, cut * PAGE, PROT_READ | PROT_EXEC)) {
		perror("protect-runs: mprotect");
		return 1;
	}
	printf("protect-runs start=%p end=%p cut=%lu\n", (void *)p, (void *)(p + PAGES * PAGE), cut);
	if (!(maps = fopen("/proc/self/maps", "r"))) {
		perror("protect-runs: /proc/self/maps");
		return 1;
	}
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < (unsigned long)p + PAGES * PAGE &&
		    hi > (unsigned long)p)
			fputs(line, stdout);
	fclose(maps);
	return 0;
}
