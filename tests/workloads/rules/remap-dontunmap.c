/*
 * Rule: mremap with MREMAP_DONTUNMAP leaves the old VMA mapped, and
 * unlocked (mm/mremap.c, dontunmap_complete): VM_LOCKED and VM_LOCKONFAULT
 * are cleared on the whole old VMA, where only part of it moved too, in
 * place, with no merge. Its accounting stays (smaps says ac). Made alike
 * by madvise, which no record shows, an unlocked neighbour then merges
 * with it; a written one, with an anon_vma of its own, does not merge with
 * a written VMA moved whole (the kernel unlinks the old VMA's anon_vma,
 * and its chain, empty, lets nothing share it).
 */
#include <string.h>

#include "../snapshot.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

static void move_away(char *from, size_t len)
{
	if (mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL) == MAP_FAILED) {
		perror("remap-dontunmap: mremap");
		exit(1);
	}
}

/* A map of n pages at at, apart from its neighbours until dump_again() (MADV_DONTDUMP): its own VMA. */
static char *map_apart(char *at, size_t n, int flags)
{
	char *p = map_or_die(at, n * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED | flags);

	must(madvise(p, n * PAGE, MADV_DONTDUMP), "madvise");
	return p;
}

/* Its flags as its neighbours' again, with no record of the VMAs that come of it. */
static void dump_again(char *p, size_t n)
{
	must(madvise(p, n * PAGE, MADV_DODUMP), "madvise");
}

int main(void)
{
	const int rw = PROT_READ | PROT_WRITE;
	char *h, *a, *b;

	snapshot_init();
	h = map_or_die(NULL, 64 * PAGE, PROT_NONE, 0);
	munmap(h, 64 * PAGE);

	/* Written, moved whole: no anon_vma left, so it merges with a written neighbour made alike. */
	a = map_or_die(h, 4 * PAGE, rw, MAP_FIXED);
	memset(a, 1, 4 * PAGE);
	b = map_apart(h + 4 * PAGE, 4, 0);
	memset(b, 2, 4 * PAGE);
	move_away(a, 4 * PAGE);
	dump_again(b, 4);
	snapshot("moved-beside-written");

	/* Locked, moved whole: unlocked now, so it merges with an unlocked neighbour made alike. */
	a = map_or_die(h + 16 * PAGE, 4 * PAGE, rw, MAP_FIXED);
	must(mlock(a, 4 * PAGE), "mlock");
	b = map_apart(h + 20 * PAGE, 4, 0);
	move_away(a, 4 * PAGE);
	dump_again(b, 4);
	snapshot("locked-moved-beside");

	/* The top half of a locked VMA moved: what of it stays locked, and where the VMA is cut. */
	a = map_or_die(h + 32 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	must(mlock(a, 8 * PAGE), "mlock");
	move_away(a + 4 * PAGE, 4 * PAGE);
	snapshot("locked-half-moved");
	b = map_apart(h + 40 * PAGE, 4, 0);
	dump_again(b, 4);
	snapshot("locked-half-moved-beside");
	return 0;
}
