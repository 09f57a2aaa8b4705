/*
 * Rule: anonymous memory's page offsets must run on for two VMAs to merge,
 * and for one to take the other's anon_vma, as a file's must (mm/vma.c,
 * can_vma_merge_before, anon_vma_compatible). A new anonymous VMA's
 * offsets are its address's; a VMA mremap moves keeps its own where it
 * has an anon_vma, and takes the new address's where it has none
 * (copy_vma). So a written VMA moved, then grown in place (mremap) or
 * protected (mprotect) up to a neighbour that matches it in all else,
 * stays apart from it; an unwritten one moved so merges. Found in LuaJIT,
 * whose string buffer grew in place up to the next VMA. A first fault
 * takes a neighbour's anon_vma only where the offsets run on too
 * (anon_vma_compatible): one that took it wrongly would merge, later,
 * with another VMA of that anon_vma.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "../snapshot.h"

static char *move_or_die(char *from, size_t len, size_t new_len, int flags, char *to)
{
	char *p = mremap(from, len, new_len, flags, to);

	if (p == MAP_FAILED) {
		perror("remap-pgoff: mremap");
		exit(1);
	}
	return p;
}

int main(void)
{
	const int rw = PROT_READ | PROT_WRITE;
	char *h, *g, *a, *s;

	snapshot_init();
	h = map_or_die(NULL, 256 * PAGE, PROT_NONE, 0);
	munmap(h, 256 * PAGE);

	/* A written VMA moved, a new one above it, the moved one grown in place up to it: two. */
	a = map_or_die(h + 192 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	memset(a, 1, 8 * PAGE);
	s = move_or_die(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h);
	map_or_die(s + 16 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	move_or_die(s, 8 * PAGE, 16 * PAGE, 0, NULL);
	snapshot("written-moved-grown");

	/* The same unwritten: its offsets are its new address's, and the two merge. */
	a = map_or_die(h + 200 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	s = move_or_die(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h + 32 * PAGE);
	map_or_die(s + 16 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	move_or_die(s, 8 * PAGE, 16 * PAGE, 0, NULL);
	snapshot("unwritten-moved-grown");

	/* Half of a written VMA moved below the other half, grown back up to it: the same anon_vma, two VMAs. */
	a = map_or_die(h + 80 * PAGE, 16 * PAGE, rw, MAP_FIXED);
	memset(a, 2, 16 * PAGE);
	s = move_or_die(a + 8 * PAGE, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h + 64 * PAGE);
	move_or_die(s, 8 * PAGE, 16 * PAGE, 0, NULL);
	snapshot("half-moved-grown-back");

	/* A written VMA moved below a new read-only one, then protected as it is: two. */
	a = map_or_die(h + 208 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	memset(a, 3, 8 * PAGE);
	map_or_die(h + 112 * PAGE, 8 * PAGE, PROT_READ, MAP_FIXED);
	move_or_die(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h + 104 * PAGE);
	must(mprotect(h + 112 * PAGE, 8 * PAGE, rw), "mprotect");
	snapshot("written-moved-protected");

	/* An unwritten VMA moved next to a written VMA moved before: their offsets do not run on, two. */
	a = map_or_die(h + 216 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	memset(a, 4, 8 * PAGE);
	move_or_die(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h + 128 * PAGE);
	a = map_or_die(h + 224 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	move_or_die(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h + 136 * PAGE);
	snapshot("unwritten-moved-beside-moved");

	/* ...written, and both protected alike: still two. */
	memset(h + 136 * PAGE, 5, 8 * PAGE);
	must(mprotect(h + 128 * PAGE, 16 * PAGE, PROT_READ), "mprotect");
	snapshot("then-written-protected");

	/*
	 * A written VMA moved down by its own length; a new one where it was,
	 * whose offsets do not run on from it, written: an anon_vma of its own.
	 * The new one moved away, the moved one's top half after it: their
	 * offsets run on, their anon_vmas differ, two.
	 */
	g = map_or_die(NULL, 64 * PAGE, PROT_NONE, 0);
	munmap(g, 64 * PAGE);
	a = map_or_die(g + 40 * PAGE, 8 * PAGE, rw, MAP_FIXED);
	memset(a, 6, 8 * PAGE);
	move_or_die(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, g + 32 * PAGE);
	a = map_or_die(g + 40 * PAGE, 4 * PAGE, rw, MAP_FIXED);
	memset(a, 7, 4 * PAGE);
	move_or_die(a, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, g);
	move_or_die(g + 36 * PAGE, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, g + 4 * PAGE);
	snapshot("first-fault-lent-nothing");

	/*
	 * A private map of /dev/zero is anonymous to mremap (vma_set_anonymous):
	 * moved unwritten, it takes its new address's offsets, which run on
	 * into those of a map of the same open /dev/zero above it, and the two,
	 * made alike, merge.
	 */
	{
		int zero = open("/dev/zero", O_RDWR);
		off_t above = (off_t)(uintptr_t)(g + 20 * PAGE);

		if (zero < 0) {
			perror("remap-pgoff: /dev/zero");
			return 1;
		}
		a = mmap(g + 20 * PAGE, 4 * PAGE, rw, MAP_PRIVATE | MAP_FIXED, zero, above);
		if (a == MAP_FAILED) {
			perror("remap-pgoff: mmap /dev/zero");
			return 1;
		}
		must(madvise(a, 4 * PAGE, MADV_DONTDUMP), "madvise");
		s = mmap(g + 48 * PAGE, 4 * PAGE, rw, MAP_PRIVATE | MAP_FIXED, zero, 0);
		if (s == MAP_FAILED) {
			perror("remap-pgoff: mmap /dev/zero");
			return 1;
		}
		move_or_die(s, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, g + 16 * PAGE);
		must(madvise(a, 4 * PAGE, MADV_DODUMP), "madvise");
		snapshot("dev-zero-moved-beside");
		close(zero);
	}
	return 0;
}
