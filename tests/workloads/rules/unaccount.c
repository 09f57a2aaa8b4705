/*
 * Rule: mprotect that takes write away from anonymous private memory not
 * faulted yet (no anon_vma) gives its commit charge back: VM_ACCOUNT is
 * cleared (mm/mprotect.c, mprotect_fixup), so the VMA merges with
 * unaccounted neighbours again, here with a page mremap moves next to it
 * (copy_vma). A faulted one keeps VM_ACCOUNT and stays apart.
 * mseal_test does this in its mremap tests.
 */
#include "../snapshot.h"

/* [a, a+2P) made writable and back, then the page at a+3P moved to a+2P. */
static void moved_next_to(char *a, const char *step)
{
	must(munmap(a + 2 * PAGE, PAGE), "munmap");
	if (mremap(a + 3 * PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, a + 2 * PAGE) != a + 2 * PAGE) {
		perror("mremap");
		exit(1);
	}
	snapshot(step);
}

int main(void)
{
	char *a, *b;

	snapshot_init();
	a = map_or_die(NULL, 4 * PAGE, PROT_READ, 0);
	must(mprotect(a, 2 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
	snapshot("accounted");
	must(mprotect(a, 2 * PAGE, PROT_READ), "mprotect");
	snapshot("unaccounted");
	moved_next_to(a, "moved-merged");

	/* Written while writable: an anon_vma, and the charge kept. */
	b = map_or_die(NULL, 4 * PAGE, PROT_READ, 0);
	must(mprotect(b, 2 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
	b[0] = 1;
	must(mprotect(b, 2 * PAGE, PROT_READ), "mprotect");
	snapshot("faulted-kept");
	moved_next_to(b, "moved-apart");
	return 0;
}
