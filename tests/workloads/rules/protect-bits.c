/*
 * Rule: mprotect's bits that are no VMA bits (mm/mprotect.c,
 * do_mprotect_pkey). PROT_SEM is accepted and kept nowhere
 * (calc_vm_prot_bits), so the protection a range has, with it, splits
 * nothing. PROT_GROWSDOWN runs the range down to the start of its
 * VM_GROWSDOWN VMA and is not kept either: glibc's
 * _dl_make_stack_executable makes such a call on the stack, with the
 * protection it may already have.
 */
#include "../snapshot.h"

#ifndef PROT_SEM
#define PROT_SEM 0x8
#endif

int main(void)
{
	volatile char here;
	char *rw, *down, *sp = (char *)((unsigned long)&here & ~(PAGE - 1));

	snapshot_init();
	rw = map_or_die(NULL, 10 * PAGE, PROT_READ | PROT_WRITE, 0);
	down = map_or_die(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_GROWSDOWN);
	rw[0] = 1;
	snapshot("before");
	must(mprotect(rw + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_SEM), "mprotect");
	snapshot("sem-same");
	must(mprotect(rw + 4 * PAGE, 2 * PAGE, PROT_READ | PROT_SEM), "mprotect");
	snapshot("sem-read");
	must(mprotect(down + 8 * PAGE, PAGE, PROT_READ | PROT_GROWSDOWN), "mprotect");
	snapshot("growsdown");
	must(mprotect(sp - PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_GROWSDOWN), "mprotect");
	snapshot("stack-same");
	return 0;
}
