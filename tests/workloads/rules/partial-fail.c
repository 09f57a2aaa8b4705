/*
 * Rule: a call that fails part-way has changed the VMAs before the point
 * where it failed, and the kernel writes no record of it but the error.
 * mprotect over a hole changes the VMAs before the hole, then returns
 * -ENOMEM (do_mprotect_pkey); over a sealed VMA, those before it, then
 * -EPERM; madvise over a hole applies the advice to every VMA and returns
 * -ENOMEM at the end (madvise_walk_vmas); mlock and munlock lock the VMAs
 * before a gap, then return -ENOMEM (apply_vma_lock_flags). A range that
 * starts in a hole changes nothing.
 */
#include <errno.h>
#include <string.h>

#include "../snapshot.h"

#ifndef SYS_mseal
#define SYS_mseal 462
#endif

/* A call that must fail with want; prints what it did otherwise. */
static void must_fail(int ret, int want, const char *what)
{
	if (ret == 0 || errno != want) {
		printf("%s: expected %s, got %s\n", what, strerror(want), ret ? strerror(errno) : "success");
		exit(1);
	}
}

int main(void)
{
	char *a, *b;

	snapshot_init();
	/* Four pages, a hole, four pages. */
	a = map_or_die(NULL, 9 * PAGE, PROT_READ | PROT_WRITE, 0);
	must(munmap(a + 4 * PAGE, PAGE), "munmap");
	snapshot("holed");
	must_fail(mprotect(a + 2 * PAGE, 6 * PAGE, PROT_READ), ENOMEM, "mprotect over a hole");
	snapshot("mprotect-hole");
	must_fail(mprotect(a + 4 * PAGE, 3 * PAGE, PROT_NONE), ENOMEM, "mprotect from a hole");
	snapshot("mprotect-from-hole");
	must_fail(madvise(a + PAGE, 7 * PAGE, MADV_DONTDUMP), ENOMEM, "madvise over a hole");
	snapshot("madvise-hole");
	must_fail(mlock(a + 3 * PAGE, 4 * PAGE), ENOMEM, "mlock over a hole");
	snapshot("mlock-hole");
	must(mlock(a + 5 * PAGE, 4 * PAGE), "mlock");
	must_fail(munlock(a, 7 * PAGE), ENOMEM, "munlock over a hole");
	snapshot("munlock-hole");
	must_fail(madvise(a + 3 * PAGE, 3 * PAGE, MADV_DODUMP), ENOMEM, "madvise over a hole");
	snapshot("madvise-dodump-hole");

	/* Three VMAs, the middle one sealed: mprotect changes the first, then fails. */
	b = map_or_die(NULL, 12 * PAGE, PROT_READ | PROT_WRITE, 0);
	if (syscall(SYS_mseal, b + 4 * PAGE, 4 * PAGE, 0)) {
		printf("note: mseal: %s: the sealed case is left out\n", strerror(errno));
		return 0;
	}
	snapshot("sealed");
	must_fail(mprotect(b + 2 * PAGE, 8 * PAGE, PROT_READ), EPERM, "mprotect over a sealed VMA");
	snapshot("mprotect-sealed");
	must_fail(mprotect(b + 6 * PAGE, 4 * PAGE, PROT_NONE), EPERM, "mprotect from a sealed VMA");
	snapshot("mprotect-from-sealed");
	must(mprotect(b + 8 * PAGE, 4 * PAGE, PROT_READ), "mprotect");
	snapshot("after");
	return 0;
}
