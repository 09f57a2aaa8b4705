/*
 * Life rule: an mremap that moves its memory to a place the kernel picks
 * (MREMAP_MAYMOVE, growing, no room to grow in place) frees the old range
 * when it lets go of the mmap lock, before it returns, as a move to a
 * fixed place does (rules/unmap-overtaken). Here the move waits in
 * userfaultfd until the handler reads its remap event, and the handler
 * first maps a region of the old size with no address asked for, which
 * the kernel puts in the old place. Where the memory went is known before
 * the exit only from the VMA tree's writes (copy_vma's comes first):
 * exact with the tree; without it, the moved memory is taken to be the
 * map that took its place (a known limit), so this rule runs with the tree.
 */
#include <stdbool.h>

#include "overtake.h"

int main(void)
{
	char *s;

	snapshot_init();
	if (!open_uffd())
		return 77;
	/* S, and a page above it that keeps it from growing in place. */
	s = map_or_die(NULL, SIZE + PAGE, PROT_READ | PROT_WRITE, 0);
	must(mprotect(s + SIZE, PAGE, PROT_NONE), "mprotect");
	s[0] = 1;
	watch(s);
	snapshot("before");
	return move_overtaken(s, 2 * SIZE, MREMAP_MAYMOVE, NULL);
}
