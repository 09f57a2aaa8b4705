/*
 * Rule of /proc's names: [heap] is the name of each anonymous VMA over
 * the break's range (fs/proc/task_mmu.c, get_vma_name:
 * vma_is_initial_heap, vm_start < brk and vm_end > start_brk), not of the
 * heap's pieces. With the break not moved yet (brk == start_brk), a page
 * mapped just below it and one at it merge into a VMA that spans
 * start_brk: [heap], though no brk made it. Then, the break grown by 8
 * pages, its top 2 pages moved away by mremap are unnamed there.
 */
#include <unistd.h>

#include "../snapshot.h"

int main(void)
{
	char *b, *t, *h;

	snapshot_init();
	b = sbrk(0);
	if (b == (void *)-1) {
		perror("heap-label: sbrk");
		return 1;
	}
	map_or_die(b - PAGE, PAGE, PROT_READ, MAP_FIXED_NOREPLACE);
	map_or_die(b, PAGE, PROT_READ, MAP_FIXED_NOREPLACE);
	snapshot("merged-over-start-brk");
	must(munmap(b - PAGE, 2 * PAGE), "munmap");
	h = sbrk(8 * PAGE);
	if (h == (void *)-1) {
		perror("heap-label: sbrk");
		return 1;
	}
	h[0] = 1;
	snapshot("heap");
	t = map_or_die(NULL, 4 * PAGE, PROT_NONE, 0);
	if (mremap(h + 6 * PAGE, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, t) == MAP_FAILED) {
		perror("heap-label: mremap");
		return 1;
	}
	snapshot("top-moved-away");
	return 0;
}
