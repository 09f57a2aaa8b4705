/*
 * What only the VMA tree shows: a read fault on private anonymous memory
 * maps the zero page and makes no anon_vma, where a write fault makes one,
 * and a page-fault sample does not say which it was. Here the second half
 * is only read, so it merges with the first (written) half once their
 * flags match. The model's rules alone take the read for a write; with
 * the kernel's VMA tree writes the maps are exact. (Where the kernel
 * gives a read fault a page of its own, pvm_no_zero_page=1, the read
 * makes an anon_vma too and the halves stay apart: the tree says so.)
 */
#include "../snapshot.h"

int main(void)
{
	volatile char *g;
	char c;

	snapshot_init();
	/* Between PROT_NONE guards, which merge with nothing and lend no anon_vma. */
	g = map_or_die(NULL, 10 * PAGE, PROT_NONE, 0);
	g = map_or_die((char *)g + PAGE, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	must(madvise((char *)g + 4 * PAGE, 4 * PAGE, MADV_DONTDUMP), "madvise");
	g[0] = 1;
	c = g[4 * PAGE];
	(void)c;
	snapshot("faulted");
	must(madvise((char *)g + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	snapshot("merged");
	return 0;
}
