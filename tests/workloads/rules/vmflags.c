/*
 * Rule: madvise advice that changes VMA flags splits the VMA, with no
 * record, and the parts merge again with neighbours whose flags then match
 * (mm/madvise.c, madvise_update_vma; mm/vma.c, is_mergeable_vma). Every
 * such pair of advice, then the two patterns seen in runtimes: chromium's
 * cage (PROT_NONE + DONTDUMP, a chunk committed with mprotect(RW) and
 * DODUMP) and a JVM with THP (2 MiB committed with MAP_FIXED, then
 * MADV_HUGEPAGE). Nothing is faulted in: anon_vma has its own reproducer.
 */
#include <errno.h>
#include <string.h>

#include "../snapshot.h"

static const struct { int set, clear; const char *name; } pairs[] = {
	{ MADV_DONTFORK, MADV_DOFORK, "dontfork" },
	{ MADV_DONTDUMP, MADV_DODUMP, "dontdump" },
	{ MADV_HUGEPAGE, MADV_NOHUGEPAGE, "hugepage" },
	{ MADV_NOHUGEPAGE, MADV_HUGEPAGE, "nohugepage" },
	{ MADV_MERGEABLE, MADV_UNMERGEABLE, "mergeable" },
	{ MADV_WIPEONFORK, MADV_KEEPONFORK, "wipeonfork" },
};

int main(void)
{
	char step[64], *g, *cage;
	size_t k;

	snapshot_init();
	for (k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		g = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
		if (madvise(g + 2 * PAGE, 2 * PAGE, pairs[k].set)) {
			/* MERGEABLE needs CONFIG_KSM: nothing changed, and the model saw a failure. */
			printf("note: madvise %s: %s\n", pairs[k].name, strerror(errno));
			munmap(g, 8 * PAGE);
			continue;
		}
		snprintf(step, sizeof(step), "%s-split", pairs[k].name);
		snapshot(step);
		madvise(g + 6 * PAGE, PAGE, pairs[k].set);      /* a second island */
		madvise(g, 8 * PAGE, pairs[k].clear);           /* all back: one VMA again */
		snprintf(step, sizeof(step), "%s-merged", pairs[k].name);
		snapshot(step);
		munmap(g, 8 * PAGE);
	}

	/* chromium: a reserved cage, excluded from core dumps; chunks committed one by one. */
	cage = map_or_die(NULL, 64 * PAGE, PROT_NONE, MAP_NORESERVE);
	must(madvise(cage, 64 * PAGE, MADV_DONTDUMP), "madvise");
	for (k = 0; k < 4; k++) {
		must(mprotect(cage + k * 8 * PAGE, 8 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
		must(madvise(cage + k * 8 * PAGE, 8 * PAGE, MADV_DODUMP), "madvise");
	}
	snapshot("cage-committed");
	must(madvise(cage + 8 * PAGE, 8 * PAGE, MADV_DONTDUMP), "madvise");
	must(mprotect(cage + 8 * PAGE, 8 * PAGE, PROT_NONE), "mprotect");
	snapshot("cage-uncommitted");

	/* A JVM heap with -XX:+UseTransparentHugePages: reserved, then 2 MiB committed at a time. */
	g = map_or_die(NULL, 8UL << 20, PROT_NONE, MAP_NORESERVE);
	for (k = 0; k < 3; k++) {
		map_or_die(g + (k << 21), 2UL << 20, PROT_READ | PROT_WRITE, MAP_FIXED);
		must(madvise(g + (k << 21), 2UL << 20, MADV_HUGEPAGE), "madvise");
	}
	snapshot("jvm-thp-commit");
	return 0;
}
