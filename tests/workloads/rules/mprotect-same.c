/*
 * Rule: mprotect to the protection a range already has splits nothing and
 * writes no record (mm/mprotect.c, mprotect_fixup: newflags == oldflags).
 * V8 does it on its PROT_NONE code-range reservation.
 */
#include "../snapshot.h"

int main(void)
{
	char *none, *rw;

	snapshot_init();
	none = map_or_die(NULL, 16 * PAGE, PROT_NONE, MAP_NORESERVE);
	rw = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	rw[0] = 1;
	snapshot("before");
	must(mprotect(none + 4 * PAGE, PAGE, PROT_NONE), "mprotect");
	must(mprotect(rw + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
	snapshot("same-protection");
	/* A real change in the middle, then back: split, then merged by the kernel (its MMAP2 says so). */
	must(mprotect(rw + 2 * PAGE, 2 * PAGE, PROT_READ), "mprotect");
	snapshot("split");
	must(mprotect(rw + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
	snapshot("merged");
	return 0;
}
