/*
 * Rule: calls that change VMA flags or policy split and merge VMAs, with
 * no record but the VMA tree's writes: mseal (mseal_apply) sets VM_SEALED,
 * mbind and set_mempolicy_home_node set a NUMA policy (mbind_range); VMAs
 * merge again where flags and policy match (mpol_equal). A munmap refused
 * at a sealed VMA leaves the VMA at its start split there.
 */
#include <errno.h>
#include <string.h>

#include "../snapshot.h"

#ifndef SYS_mseal
#define SYS_mseal 462
#endif
#ifndef SYS_set_mempolicy_home_node
#define SYS_set_mempolicy_home_node 450
#endif
#define MPOL_BIND 2
#define MPOL_PREFERRED 1

static void seal(void)
{
	char *a = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);

	if (syscall(SYS_mseal, a + 2 * PAGE, 2 * PAGE, 0)) {
		printf("note: mseal: %s\n", strerror(errno));
		return;
	}
	snapshot("mseal-middle");
	must((int)syscall(SYS_mseal, a + 4 * PAGE, 4 * PAGE, 0), "mseal");
	snapshot("mseal-merged");        /* sealed next to sealed: one VMA again */
	/* Refused at the seal, after the VMA before it was split at the start (vms_gather_munmap_vmas). */
	if (munmap(a + PAGE, 3 * PAGE) == 0 || errno != EPERM) {
		fprintf(stderr, "munmap across a seal: not refused with EPERM\n");
		exit(1);
	}
	snapshot("munmap-refused");
}

static void policy(void)
{
	unsigned long node0 = 1;
	char *a = map_or_die(NULL, 10 * PAGE, PROT_READ | PROT_WRITE, 0);

	if (syscall(SYS_mbind, a + 2 * PAGE, 3 * PAGE, MPOL_BIND, &node0, 64, 0)) {
		printf("note: mbind: %s\n", strerror(errno));
		return;
	}
	snapshot("mbind-middle");
	must((int)syscall(SYS_mbind, a + 5 * PAGE, 2 * PAGE, MPOL_BIND, &node0, 64, 0), "mbind");
	snapshot("mbind-same-policy");   /* the same policy next to it: merged */
	must((int)syscall(SYS_mbind, a + 7 * PAGE, PAGE, MPOL_PREFERRED, &node0, 64, 0), "mbind");
	snapshot("mbind-other-policy");
	if (syscall(SYS_set_mempolicy_home_node, a + 3 * PAGE, PAGE, 0, 0))
		printf("note: set_mempolicy_home_node: %s\n", strerror(errno));
	snapshot("home-node");
	must((int)syscall(SYS_mbind, a, 10 * PAGE, 0 /* MPOL_DEFAULT */, NULL, 0, 0), "mbind");
	snapshot("mbind-default");
}

int main(void)
{
	snapshot_init();
	seal();
	policy();
	return 0;
}
