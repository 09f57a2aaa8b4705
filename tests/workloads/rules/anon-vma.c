/*
 * Rule: two VMAs whose flags come to match merge only if their anon_vmas
 * allow it (mm/vma.c, is_mergeable_anon_vma): the same one, or none on one
 * side while the other's is not a fork's copy. A first write fault makes a
 * VMA's anon_vma (anon_vma_prepare), taking a compatible neighbour's where
 * it can: DONTDUMP on one half keeps the halves incompatible here.
 */
#include <sys/wait.h>

#include "../snapshot.h"

/* 8 pages, the second half DONTDUMP: two VMAs that differ in one flag. */
static char *halves(void)
{
	char *g = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);

	must(madvise(g + 4 * PAGE, 4 * PAGE, MADV_DONTDUMP), "madvise");
	return g;
}

int main(void)
{
	char *both, *first, *second, *forked;
	pid_t child;

	snapshot_init();
	both = halves();           /* both faulted: two anon_vmas, never one VMA again */
	both[0] = 1;
	both[4 * PAGE] = 1;
	first = halves();          /* only the first half faulted: the second has none */
	first[0] = 1;
	second = halves();         /* only the second half faulted: the other way round */
	second[4 * PAGE] = 1;
	forked = halves();         /* the first half faulted, then copied by a fork */
	forked[0] = 1;
	snapshot("faulted");
	must(madvise(both + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(first + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(second + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	snapshot("flags-match");

	child = fork();
	if (child == 0) {
		/* The child's copy of the first half has an anon_vma chained to the parent's: no merge. */
		must(madvise(forked + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
		snapshot("child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	/* The parent's own first half may still take the second. */
	must(madvise(forked + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	snapshot("parent");
	return 0;
}
