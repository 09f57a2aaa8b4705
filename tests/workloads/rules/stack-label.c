/*
 * Rule of /proc's names: [stack] is the name of the VMA that holds
 * mm->start_stack alone (fs/proc/task_mmu.c, get_vma_name:
 * vma_is_initial_stack), not of every piece of the main stack. firefox's
 * madvise(MADV_NOHUGEPAGE) over its stack up to a page below the top
 * splits that top page off, unnamed; a guard page made PROT_NONE at the
 * stack's bottom is unnamed too. Here the split is where the page that
 * holds start_stack begins, and start_stack is made to lie 32 bytes above
 * that page's start (the stack not moved at random, an environment of
 * the length that puts it there): the loader's first calls, a few frames
 * below it, run on the page below, which is not [stack].
 */
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include "../snapshot.h"

#define OFF 0x20UL

/* Where this process's stack began: /proc/self/stat's 28th field. */
static unsigned long start_stack(void)
{
	char buf[2048], *p;
	unsigned long v = 0;
	size_t n;
	int field = 3;
	FILE *f = fopen("/proc/self/stat", "r");

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (!(p = strrchr(buf, ')')))
		return 0;
	for (p += 2; p && field < 28; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (p)
		sscanf(p, "%lu", &v);
	return v;
}

/* This program again, as stage, with an environment of one variable of len bytes. */
static void again(const char *self, const char *stage, size_t len)
{
	static char pad[2 * PAGE];
	char *argv[] = { (char *)self, (char *)stage, NULL }, *envp[] = { pad, NULL };

	memcpy(pad, "PAD=", 4);
	memset(pad + 4, 'x', len);
	pad[4 + len] = 0;
	execve("/proc/self/exe", argv, envp);
	perror("stack-label: exec");
	exit(1);
}

int main(int argc, char **argv)
{
	char line[512];
	unsigned long lo = 0, hi = 0, s = start_stack(), off = s & (PAGE - 1);
	const char *pad = getenv("PAD");
	FILE *maps;

	if (argc < 2) {
		if (personality(ADDR_NO_RANDOMIZE) == -1) {
			perror("stack-label: personality");
			return 1;
		}
		again(argv[0], "pass-1", 0);
	}
	if (!strcmp(argv[1], "pass-1"))          /* a longer variable lowers where the stack begins as much */
		again(argv[0], "pass-2", strlen(pad ? pad : "") + (off >= OFF ? off - OFF : off + PAGE - OFF));
	if (!s || off != OFF) {
		fprintf(stderr, "stack-label: the stack begins at %#lx, not %#lx into a page\n", s, OFF);
		return 1;
	}
	snapshot_init();
	if (!(maps = fopen("/proc/self/maps", "r"))) {
		perror("stack-label: /proc/self/maps");
		return 1;
	}
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[stack]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(maps);
	if (!lo) {
		fprintf(stderr, "stack-label: no [stack] in the maps\n");
		return 1;
	}
	snapshot("before");
	must(madvise((void *)lo, (s & ~(PAGE - 1)) - lo, MADV_NOHUGEPAGE), "madvise");
	snapshot("split-below-where-it-begins");
	must(mprotect((void *)lo, PAGE, PROT_NONE), "mprotect");
	snapshot("guard-page");
	return 0;
}
