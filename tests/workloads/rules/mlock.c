/*
 * Rule: mlock, mlock2, munlock, mlockall and munlockall change VMA flags
 * (VM_LOCKED, VM_LOCKONFAULT) with no record: they split and merge VMAs as
 * madvise does (mm/mlock.c, mlock_fixup). A lock that is not on fault
 * populates the range, which gives it an anon_vma without a page fault
 * event. Locks are not inherited by a fork. A map locked as it is made
 * (MAP_LOCKED, or mlockall's MCL_FUTURE) is the same: populated unless on
 * fault, and after a munlock like any unlocked neighbour; the kernel's
 * record of it says MAP_LOCKED (perf's mmap2 flags), which is no part of
 * what a merge compares.
 */
#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "../snapshot.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

int main(void)
{
	char *g, *h, *n, *q;
	int touched;
	pid_t child;

	snapshot_init();
	g = map_or_die(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, 0);
	if (mlock(g + 2 * PAGE, 2 * PAGE)) {
		printf("skip: mlock: %s\n", strerror(errno));
		return 77;
	}
	snapshot("mlock-split");
	/* Unaligned: rounded out to pages. */
	must(mlock(g + 9 * PAGE + 100, PAGE), "mlock");
	snapshot("mlock-unaligned");
	must(munlock(g, 16 * PAGE), "munlock");
	snapshot("munlock-merged");     /* each populated piece took its own anon_vma: they stay apart */
	if (syscall(SYS_mlock2, g + 4 * PAGE, 2 * PAGE, MLOCK_ONFAULT))
		printf("note: mlock2: %s\n", strerror(errno));
	snapshot("mlock2-onfault");
	must(mlock(g + 4 * PAGE, PAGE), "mlock");          /* LOCKED without ONFAULT: another split */
	snapshot("mlock-after-onfault");
	must(munlock(g, 16 * PAGE), "munlock");
	snapshot("munlock-all-of-it");

	/* Untouched neighbours: one locked (and so populated), then unlocked. */
	h = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	must(mlock(h + 4 * PAGE, 4 * PAGE), "mlock");
	must(munlock(h + 4 * PAGE, 4 * PAGE), "munlock");
	snapshot("populated-half");

	must(mlockall(MCL_CURRENT | MCL_FUTURE), "mlockall");
	n = map_or_die(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, 0);  /* locked from the start */
	snapshot("mlockall");
	child = fork();
	if (child == 0) {
		munlock(n, PAGE);      /* the child holds no lock: this changes nothing */
		snapshot("child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	must(munlock(n + PAGE, PAGE), "munlock");
	snapshot("munlock-in-locked");
	must(munlockall(), "munlockall");
	snapshot("munlockall");

	/* Locked on fault as it is mapped (MCL_FUTURE | MCL_ONFAULT), next to a page never locked: a twin once unlocked. */
	q = map_or_die(NULL, 4 * PAGE, PROT_NONE, 0);
	map_or_die(q + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	must(mlockall(MCL_FUTURE | MCL_ONFAULT), "mlockall");
	map_or_die(q + 2 * PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	must(munlock(q + 2 * PAGE, PAGE), "munlock");
	snapshot("future-onfault-unlocked");
	must(munlockall(), "munlockall");

	/* MAP_LOCKED next to pages never locked, untouched (a merge once unlocked) or written (their own anon_vma). */
	for (touched = 0; touched < 2; touched++) {
		q = map_or_die(NULL, 6 * PAGE, PROT_NONE, 0);
		map_or_die(q + PAGE, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
		if (touched)
			q[PAGE] = 1;
		map_or_die(q + 3 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_LOCKED);
		snapshot(touched ? "map-locked-by-written" : "map-locked-by-untouched");
		must(munlock(q + 3 * PAGE, 2 * PAGE), "munlock");
		snapshot(touched ? "map-locked-unlocked-written" : "map-locked-unlocked-untouched");
	}

	/*
	 * The break grown under mlockall(MCL_FUTURE): a VMA of its own above the
	 * heap (locked, the heap not), which brk populates: an anon_vma of its
	 * own, so it stays apart from the written heap once both are unlocked.
	 */
	q = sbrk(4 * PAGE);
	if (q == (void *)-1) {
		perror("sbrk");
		return 1;
	}
	q[0] = 1;
	must(mlockall(MCL_FUTURE), "mlockall");
	if (sbrk(4 * PAGE) == (void *)-1) {
		perror("sbrk");
		return 1;
	}
	snapshot("break-locked");
	must(munlockall(), "munlockall");
	snapshot("break-unlocked");
	return 0;
}
