/*
 * Life rule: an unmap is done when the mmap lock is let go, before the
 * call returns (mm/vma.c, vms_complete_munmap_vmas: the lock is dropped,
 * then the VMAs detached are freed and userfaultfd's unmap events waited
 * for; mremap waits for its remap event the same way). Another thread's
 * mmap can take the range in between. Here the main thread's munmap of R,
 * then its move of S (mremap with MREMAP_FIXED), waits in userfaultfd
 * until the handler reads the event, and the handler first maps a region
 * of their size with no address asked for, which the kernel puts in the
 * place just freed. That map is there after the call returns; taking the
 * unmap (or the move) at its exit loses it.
 */
#include <stdbool.h>

#include "overtake.h"

int main(void)
{
	char *r, *s, *t;
	pthread_t th;

	snapshot_init();
	if (!open_uffd())
		return 1;
	r = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
	watch(r);
	snapshot("before");
	want[0] = UFFD_EVENT_UNMAP;
	if (pthread_create(&th, NULL, handler, NULL)) {
		fprintf(stderr, "unmap-overtaken: pthread_create failed\n");
		return 1;
	}
	must(munmap(r, SIZE), "munmap");
	pthread_join(th, NULL);
	snapshot(q == r ? "unmapped-map-in-its-place" : "unmapped-map-elsewhere");
	must(mprotect(q, PAGE, PROT_READ), "mprotect");

	/* The move: to a place reserved far from S, S's own place freed. */
	t = map_or_die(NULL, 4 * SIZE, PROT_NONE, 0);
	s = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
	watch(s);
	snapshot("before-move");
	return move_overtaken(s, SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, t + SIZE);
}
