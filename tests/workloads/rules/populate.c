/*
 * Rule: a VMA populated by the kernel for the caller gets its anon_vma
 * with no page-fault sample. mmap with MAP_POPULATE (and not
 * MAP_NONBLOCK) populates the new range before the call returns
 * (mm_populate), and madvise(MADV_POPULATE_WRITE) faults a range in
 * (madvise_populate); both through get_user_pages, with a write fault
 * where the VMA is private and writable (populate_vma_page_range), which
 * makes its anon_vma. A read fault (MADV_POPULATE_READ, or a VMA not
 * writable then) maps the zero page and makes none (do_anonymous_page),
 * where the machine does so: a kernel booted with pvm_no_zero_page=1 (a
 * PVM guest's test aid, seen on 6.18.44-fc) gives a read fault on private
 * anonymous memory a page of its own, and so an anon_vma, as s390's
 * mm_forbids_zeropage does; record writes which it is
 * (mm.read_fault_zero_page) and the model follows it. mprotect that makes
 * a private VMA locked (not on fault) writable populates it too
 * (mprotect_fixup). Two VMAs whose flags come to match then merge only
 * where their anon_vmas allow it: here each case is one half of 8 pages,
 * the other half DONTDUMP and written to (its own anon_vma), and
 * MADV_DODUMP makes the halves' flags match.
 */
#include "../snapshot.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

/*
 * 8 pages between PROT_NONE guards, which merge with nothing and lend no
 * anon_vma, the second half DONTDUMP and written to: two VMAs, the second
 * with an anon_vma. Mapped next to the case before (the kernel places
 * each below the last), they would merge with its first half at the map
 * and share whatever anon_vma that one has.
 */
static char *halves(void)
{
	char *g = map_or_die(NULL, 10 * PAGE, PROT_NONE, 0);

	g = map_or_die(g + PAGE, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
	must(madvise(g + 4 * PAGE, 4 * PAGE, MADV_DONTDUMP), "madvise");
	g[4 * PAGE] = 1;
	return g;
}

/* The first half of g mapped again, with flags, over the old. */
static void remap_first(char *g, int prot, int flags)
{
	map_or_die(g, 4 * PAGE, prot, MAP_FIXED | flags);
}

int main(void)
{
	char *pop, *nonblock, *readonly, *advwrite, *advread, *locked;

	snapshot_init();
	pop = halves();            /* MAP_POPULATE, writable: an anon_vma, no merge */
	remap_first(pop, PROT_READ | PROT_WRITE, MAP_POPULATE);
	nonblock = halves();       /* MAP_NONBLOCK cancels MAP_POPULATE: none, a merge */
	remap_first(nonblock, PROT_READ | PROT_WRITE, MAP_POPULATE | MAP_NONBLOCK);
	readonly = halves();       /* populated by reads (not writable): none, a merge (no zero page: one, no merge) */
	remap_first(readonly, PROT_READ, MAP_POPULATE);
	must(mprotect(readonly, 4 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
	advwrite = halves();       /* MADV_POPULATE_WRITE: an anon_vma, no merge */
	if (madvise(advwrite, 4 * PAGE, MADV_POPULATE_WRITE)) {
		printf("skip: MADV_POPULATE_WRITE: %m (Linux 5.14 on)\n");
		return 77;
	}
	advread = halves();        /* MADV_POPULATE_READ: the zero page, none, a merge (no zero page: one, no merge) */
	must(madvise(advread, 4 * PAGE, MADV_POPULATE_READ), "madvise");
	locked = halves();         /* locked read-only, then made writable: an anon_vma, no merge */
	remap_first(locked, PROT_READ, 0);
	if (mlock(locked, 4 * PAGE)) {
		printf("skip: mlock: %m\n");
		return 77;
	}
	must(mprotect(locked, 4 * PAGE, PROT_READ | PROT_WRITE), "mprotect");
	must(munlock(locked, 4 * PAGE), "munlock");
	snapshot("populated");

	must(madvise(pop + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(nonblock + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(readonly + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(advwrite + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(advread + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	must(madvise(locked + 4 * PAGE, 4 * PAGE, MADV_DODUMP), "madvise");
	snapshot("flags-match");
	return 0;
}
