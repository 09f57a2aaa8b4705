/*
 * Ground truth for allocation sites, built without frame pointers: a
 * small table from glibc malloc's brk heap and a large one from its mmap
 * path, each made by a named function called from main, each touched
 * page by page. It prints, for each:
 *
 *   region name=heap start=0x.. end=0x.. alloc=make_small caller=main pages=N
 *   region name=big start=0x.. end=0x.. alloc=make_big caller=main pages=N
 */
#include <stdio.h>
#include <stdlib.h>

#define PAGE 4096

__attribute__((noinline)) char *make_small(size_t pages)
{
	return malloc(pages * PAGE);             /* under the mmap threshold: the brk heap */
}

__attribute__((noinline)) char *make_big(size_t pages)
{
	return malloc(pages * PAGE);             /* 8 MiB: a mapping of its own */
}

static void touch(char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * PAGE] = 1;
}

int main(void)
{
	char *small = make_small(16), *big = make_big(2048);

	if (!small || !big)
		return 1;
	touch(small, 16);
	touch(big, 2048);
	printf("region name=heap start=%p end=%p alloc=make_small caller=main pages=16\n",
	       (void *)small, (void *)(small + 16 * PAGE));
	printf("region name=big start=%p end=%p alloc=make_big caller=main pages=2048\n",
	       (void *)big, (void *)(big + 2048 * PAGE));
	free(small);
	free(big);
	return 0;
}
