/*
 * Rule: prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) names anonymous VMAs
 * ([anon:NAME] in /proc), which splits them at the range's ends and merges
 * neighbours whose names then match (mm/vma.c compares anon_vma_name);
 * a file's VMA fails with -EBADF after the VMAs before it took the name.
 * The kernel writes no record of it. Without CONFIG_ANON_VMA_NAME every
 * call fails with -EINVAL and changes nothing: the maps must say so too.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "../snapshot.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

/*
 * The name is built in a buffer on the stack, which the entry's sample
 * copies: record reads it from there, not from a process that may have
 * exited by the time it reads (a literal's case, docs/ACCURACY.md).
 */
static int name(void *at, size_t len, const char *s)
{
	char buf[32];
	const char *n = s ? strcpy(buf, s) : NULL;
	int ret = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)at, len, (unsigned long)n);

	printf("prctl(PR_SET_VMA_ANON_NAME, %s): %s\n", n ? n : "NULL", ret ? strerror(errno) : "0");
	return ret;
}

int main(void)
{
	char *a = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	char buf[32];

	snapshot_init();
	printf("map 0x%lx\n", (unsigned long)a);
	snapshot("mapped");
	name(a + 2 * PAGE, 2 * PAGE, "mapscope-one");        /* a split in three */
	snapshot("named-middle");
	name(a + 4 * PAGE, 2 * PAGE, "mapscope-one");        /* the same name next to it: merged */
	snapshot("named-next");
	snprintf(buf, sizeof(buf), "mapscope-%d", 2);        /* a name in a stack buffer, written over next */
	name(a, PAGE, buf);
	memset(buf, 'x', sizeof(buf) - 1);
	snapshot("named-stack");
	name(a + 2 * PAGE, 4 * PAGE, NULL);                  /* names removed: merged with what follows */
	snapshot("unnamed");
	must(munmap(a + 6 * PAGE, 2 * PAGE), "munmap");
	name(a, 8 * PAGE, "mapscope-hole");                  /* over a hole: -ENOMEM, after naming what is before */
	snapshot("named-over-hole");
	return 0;
}
