/*
 * Rule: an anonymous VMA moved keeps its page offsets (the address it was
 * made at), and merges at its new place with a neighbour of the same
 * anon_vma whose offsets run on into its own (mm/vma.c, copy_vma ->
 * vma_merge_new_range). A written VMA moved in two halves to one new
 * place, side by side as they were, is one VMA again; the same halves
 * put the other way round are two.
 */
#include <string.h>

#include "../snapshot.h"

int main(void)
{
	char *r, *t;

	snapshot_init();
	r = map_or_die(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, 0);
	memset(r, 1, 4 * PAGE);                          /* an anon_vma */
	t = map_or_die(NULL, 12 * PAGE, PROT_NONE, 0);
	snapshot("before");
	if (mremap(r, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, t + 2 * PAGE) == MAP_FAILED ||
	    mremap(r + 2 * PAGE, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, t + 4 * PAGE) == MAP_FAILED) {
		perror("remap-rejoin: mremap");
		return 1;
	}
	snapshot("halves-side-by-side");
	/* Back the other way round: the second half first, then the first after it. */
	if (mremap(t + 4 * PAGE, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, t + 7 * PAGE) == MAP_FAILED ||
	    mremap(t + 2 * PAGE, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, t + 9 * PAGE) == MAP_FAILED) {
		perror("remap-rejoin: mremap");
		return 1;
	}
	snapshot("halves-swapped");
	return 0;
}
