/*
 * Rule: since Linux 6.17 a move of the same length to a fixed place
 * (MREMAP_MAYMOVE | MREMAP_FIXED) may span several VMAs and the holes
 * between them (mm/mremap.c, remap_move): each VMA moves on its own to its
 * offset from the new address, with its own protection, and the target is
 * unmapped under it alone, so the holes keep what the target had there.
 * An older kernel refuses the call (EFAULT): the rule is skipped there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "../snapshot.h"

static char *remap(void *old, size_t len, void *to)
{
	return (char *)syscall(SYS_mremap, old, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
}

int main(void)
{
	char *src, *dst, *alt, *to;
	int i;

	snapshot_init();
	/* Four two-page VMAs with a hole after each, over a PROT_NONE reservation. */
	src = map_or_die(NULL, 12 * PAGE, PROT_READ | PROT_WRITE, 0);
	for (i = 0; i < 4; i++)
		must(munmap(src + (3 * i + 2) * PAGE, PAGE), "munmap");
	src[0] = 1;
	dst = map_or_die(NULL, 40 * PAGE, PROT_NONE, MAP_NORESERVE);
	snapshot("before");
	if (remap(src, 11 * PAGE, dst + 20 * PAGE) == MAP_FAILED) {
		printf("skip: mremap of several VMAs: %s (Linux 6.17 or later)\n", strerror(errno));
		return 77;
	}
	snapshot("moved-over-holes");
	/* Adjacent VMAs of alternating protection, from inside the first, to empty space. */
	alt = map_or_die(NULL, 16 * PAGE, PROT_NONE, 0);
	for (i = 0; i < 8; i++)
		must(mprotect(alt + 2 * i * PAGE, 2 * PAGE, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE), "mprotect");
	to = map_or_die(NULL, 32 * PAGE, PROT_READ, 0);
	must(munmap(to, 32 * PAGE), "munmap");
	snapshot("alternating");
	if (remap(alt + PAGE, 14 * PAGE, to + 8 * PAGE) == MAP_FAILED) {
		perror("mremap");
		return 1;
	}
	snapshot("moved-alternating");
	/* MREMAP_DONTUNMAP: each VMA moved, and left where it was as well, empty; the hole keeps the target's. */
	alt = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	must(mprotect(alt + 4 * PAGE, 2 * PAGE, PROT_READ), "mprotect");
	must(munmap(alt + 6 * PAGE, PAGE), "munmap");
	to = map_or_die(NULL, 16 * PAGE, PROT_NONE, MAP_NORESERVE);
	if ((char *)syscall(SYS_mremap, alt, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
			    to + 4 * PAGE) == MAP_FAILED) {
		perror("mremap DONTUNMAP");
		return 1;
	}
	snapshot("left-behind");
	return 0;
}
