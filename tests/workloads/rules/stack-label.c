/*
 * Rule of /proc's names: [stack] is the name of the VMA that holds
 * mm->start_stack alone (fs/proc/task_mmu.c, get_vma_name:
 * vma_is_initial_stack), not of every piece of the main stack. firefox's
 * madvise(MADV_NOHUGEPAGE) over its stack up to a page below the top
 * splits that top page off, unnamed; a guard page made PROT_NONE at the
 * stack's bottom is unnamed too.
 */
#include <string.h>

#include "../snapshot.h"

int main(void)
{
	char line[512];
	unsigned long lo = 0, hi = 0;
	FILE *maps;

	snapshot_init();
	if (!(maps = fopen("/proc/self/maps", "r"))) {
		perror("stack-label: /proc/self/maps");
		return 1;
	}
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[stack]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(maps);
	if (!lo) {
		fprintf(stderr, "stack-label: no [stack] in the maps\n");
		return 1;
	}
	snapshot("before");
	must(madvise((void *)lo, hi - PAGE - lo, MADV_NOHUGEPAGE), "madvise");
	snapshot("top-page-split");
	must(mprotect((void *)lo, PAGE, PROT_NONE), "mprotect");
	snapshot("guard-page");
	return 0;
}
