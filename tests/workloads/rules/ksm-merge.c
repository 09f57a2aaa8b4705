/*
 * Rule: prctl(PR_SET_MEMORY_MERGE, 1) sets VM_MERGEABLE on every VMA KSM
 * may merge (mm/ksm.c, ksm_add_vmas) and on each one mapped after it
 * (ksm_vma_flags), in place: nothing splits or merges then. A later
 * MADV_UNMERGEABLE of one page clears it there, splitting the VMA in
 * three. Shared memory is not KSM's: it never has the flag, and
 * MADV_MERGEABLE passes over it. PR_SET_MEMORY_MERGE 0 clears the flag on
 * every VMA, in place again. A fork's child keeps the setting.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../snapshot.h"

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

/*
 * 3 pages, shared or private, with a hole of 2 pages above them that keeps
 * them from the mapping made before (the kernel places each below the last).
 */
static char *three(int sharing)
{
	char *g = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE, sharing | MAP_ANONYMOUS, -1, 0);

	if (g == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	must(munmap(g + 3 * PAGE, 2 * PAGE), "munmap");
	return g;
}

/* The middle page of g unmergeable, and a snapshot. */
static void unmerge_middle(char *g, const char *step)
{
	must(madvise(g + PAGE, PAGE, MADV_UNMERGEABLE), "madvise");
	snapshot(step);
}

int main(void)
{
	char *shared, *before, *after, *c;
	pid_t child;

	snapshot_init();
	shared = three(MAP_SHARED);
	before = three(MAP_PRIVATE);
	must(madvise(shared + PAGE, PAGE, MADV_MERGEABLE), "madvise");     /* passed over: no split */
	snapshot("shared-mergeable");
	if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0)) {
		printf("skip: prctl(PR_SET_MEMORY_MERGE): %m (Linux 6.4 on, with KSM)\n");
		return 77;
	}
	snapshot("merge-any");                  /* flags set in place: the same VMAs */
	unmerge_middle(before, "unmerge-before");
	after = three(MAP_PRIVATE);
	unmerge_middle(after, "unmerge-after");
	unmerge_middle(three(MAP_SHARED), "unmerge-shared");
	child = fork();
	if (child == 0) {
		c = three(MAP_PRIVATE);
		unmerge_middle(c, "unmerge-child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	must(prctl(PR_SET_MEMORY_MERGE, 0, 0, 0, 0), "prctl");
	snapshot("merge-none");                 /* cleared in place: before's three VMAs stay three */
	must(mprotect(before, 3 * PAGE, PROT_READ), "mprotect");
	snapshot("alike-again");                /* one now: their flags match */
	return 0;
}
