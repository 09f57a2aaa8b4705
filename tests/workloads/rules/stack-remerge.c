/*
 * Rule: the main stack's pieces merge again. An mprotect or an madvise
 * of a page at the bottom of the stack, or of one above it, splits the
 * stack VMA; made like the rest again, the pieces merge (mm/vma.c: no
 * exception for VM_GROWSDOWN). The kernel's record of the VMA that mprotect changed is
 * named [stack] once it holds where the stack began: it is that call's,
 * not the stack growing.
 */
#include <string.h>

#include "../snapshot.h"

int main(void)
{
	unsigned long lo = 0, hi = 0;
	char *line;

	snapshot_init();
	snapshot("start");
	for (line = snapshot_maps; line && !lo; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strstr(line, "[stack]") && strchr(line, '\n') > strstr(line, "[stack]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	if (!lo || hi - lo < 8 * PAGE) {
		printf("skip: no [stack] of 8 pages in /proc/self/maps\n");
		return 77;
	}
	must(mprotect((void *)lo, PAGE, PROT_READ), "mprotect");
	snapshot("bottom-apart");
	must(mprotect((void *)lo, PAGE, PROT_READ | PROT_WRITE), "mprotect");
	snapshot("bottom-merged");
	must(mprotect((void *)(lo + PAGE), PAGE, PROT_READ), "mprotect");
	snapshot("middle-apart");
	must(mprotect((void *)(lo + PAGE), PAGE, PROT_READ | PROT_WRITE), "mprotect");
	snapshot("middle-merged");
	must(madvise((void *)lo, PAGE, MADV_DONTDUMP), "madvise");
	snapshot("advised-apart");
	must(madvise((void *)lo, PAGE, MADV_DODUMP), "madvise");
	snapshot("advised-merged");
	return 0;
}
