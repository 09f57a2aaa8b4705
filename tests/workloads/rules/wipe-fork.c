/*
 * Rule: a fork's copy of a VMA under MADV_WIPEONFORK has no anon_vma in the
 * child (kernel/fork.c, dup_mmap: its pages are not copied, and nor is its
 * anon_vma), where any other written VMA's copy has one chained to the
 * parent's (anon_vma_fork), which keeps it apart from a VMA that has none.
 * In the child, made alike by madvise, the wiped half merges with its
 * unwritten neighbour; the kept one (MADV_KEEPONFORK) does not.
 */
#include <sys/wait.h>

#include "../snapshot.h"

/* 8 pages, the second half DONTDUMP, the first written: two VMAs, the first with an anon_vma. */
static char *halves(int advice)
{
	char *g = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);

	must(madvise(g, 8 * PAGE, advice), "madvise");
	must(madvise(g + 4 * PAGE, 4 * PAGE, MADV_DONTDUMP), "madvise");
	g[0] = 1;
	return g;
}

int main(void)
{
	char *wiped, *kept;
	pid_t child;

	snapshot_init();
	wiped = halves(MADV_WIPEONFORK);
	kept = halves(MADV_KEEPONFORK);
	snapshot("before");
	child = fork();
	if (child == 0) {
		must(madvise(wiped + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
		must(madvise(kept + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
		snapshot("child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	must(madvise(wiped + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	snapshot("parent");
	return 0;
}
