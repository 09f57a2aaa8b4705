/*
 * Rule: pkey_mprotect is mprotect with a protection key; with key -1 (no
 * key, which needs no hardware for them) it changes the protection as
 * mprotect does, splitting and merging VMAs, and the kernel records each
 * VMA it changed as mprotect's. Its records were taken for new maps made
 * by the kernel: the protected pages a region of their own.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "../snapshot.h"

static int pkey_protect(void *p, size_t len, int prot)
{
	return (int)syscall(SYS_pkey_mprotect, p, len, prot, -1);
}

int main(void)
{
	char *g;

	snapshot_init();
	g = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	g[0] = 1;
	if (pkey_protect(g + 2 * PAGE, 2 * PAGE, PROT_READ)) {
		printf("skip: pkey_mprotect: %s\n", strerror(errno));
		return 77;
	}
	snapshot("split");
	must(pkey_protect(g + 3 * PAGE, 2 * PAGE, PROT_READ), "pkey_mprotect");
	snapshot("grown");
	must(pkey_protect(g, 8 * PAGE, PROT_READ | PROT_WRITE), "pkey_mprotect");
	snapshot("merged");
	return 0;
}
