/*
 * Rule: madvise's read-ahead hints are VMA flags (mm/madvise.c,
 * madvise_vma_behavior): MADV_RANDOM sets VM_RAND_READ, MADV_SEQUENTIAL
 * VM_SEQ_READ (each clearing the other), MADV_NORMAL clears both. They
 * split a VMA and merge it again where the flags match; no record shows
 * it. mseal_test gives MADV_RANDOM to sealed memory.
 */
#include "../snapshot.h"

int main(void)
{
	char *a;

	snapshot_init();
	a = map_or_die(NULL, 8 * PAGE, PROT_READ, 0);
	must(madvise(a + 2 * PAGE, 2 * PAGE, MADV_RANDOM), "madvise");
	snapshot("random-middle");
	must(madvise(a + 2 * PAGE, PAGE, MADV_SEQUENTIAL), "madvise");
	snapshot("sequential-in-random");
	must(madvise(a + 3 * PAGE, PAGE, MADV_SEQUENTIAL), "madvise");
	snapshot("sequential-merged");
	must(madvise(a, 8 * PAGE, MADV_NORMAL), "madvise");
	snapshot("normal-whole");
	return 0;
}
