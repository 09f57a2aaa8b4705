/*
 * Rule: mremap growing a VMA in place up to the next VMA merges the two
 * where they are compatible (mm/vma.c, vma_merge_extend), with no record;
 * where they are not (an incompatible flag), they stay two.
 */
#include "../snapshot.h"

int main(void)
{
	char *g;

	snapshot_init();
	g = map_or_die(NULL, 32 * PAGE, PROT_NONE, 0);
	munmap(g, 32 * PAGE);
	map_or_die(g, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	map_or_die(g + 8 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	snapshot("apart");
	if (mremap(g, 4 * PAGE, 8 * PAGE, 0) != g)
		return 1;
	snapshot("grown-merged");

	map_or_die(g + 16 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	map_or_die(g + 24 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	must(madvise(g + 24 * PAGE, 4 * PAGE, MADV_DONTDUMP), "madvise");
	if (mremap(g + 16 * PAGE, 4 * PAGE, 8 * PAGE, 0) != g + 16 * PAGE)
		return 1;
	snapshot("grown-not-merged");
	return 0;
}
