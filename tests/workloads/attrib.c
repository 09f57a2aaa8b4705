/*
 * Ground truth for attribution. Each region line gives the range the region
 * ends with and how many page faults the workload caused in it (fresh
 * pages, one write each):
 *
 *   region pid=P name=NAME start=0x.. end=0x.. faults=N order=K
 *
 * "order" numbers regions with the same range in creation order.
 *   moved:  16 pages touched, mremap'd with a move to 256 pages, 240 more touched
 *   first:  64 pages touched, then unmapped
 *   reused: 64 pages mapped at the very same address afterwards, touched
 *   stack:  the main stack grown by 2 MiB: every page in [reached, top) faults once
 *
 *   stack pid=P reached=0x.. top=0x..
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL

static void touch(char *p, size_t pages)
{
	size_t i;

	for (i = 0; i < pages; i++)
		((volatile char *)p)[i * PAGE] = 1;
}

static uintptr_t lowest;

static void __attribute__((noinline)) recurse(int n)
{
	volatile char buf[PAGE];

	buf[0] = buf[PAGE - 1] = (char)n;
	if ((uintptr_t)buf < lowest)
		lowest = (uintptr_t)buf;
	if (n)
		recurse(n - 1);
}

int main(void)
{
	char *a, *b, *c, *g, here;
	uintptr_t top;

	/* A separate guard right above forbids growing in place: the buffer must move. */
	g = mmap(NULL, 17 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a = mmap(g, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (g == MAP_FAILED || a != g)
		return 1;
	touch(a, 16);
	b = mremap(a, 16 * PAGE, 256 * PAGE, MREMAP_MAYMOVE);
	if (b == MAP_FAILED || b == a)
		return 1;
	touch(b + 16 * PAGE, 240);
	printf("region pid=%d name=moved start=%p end=%p faults=256 order=0\n", getpid(),
	       (void *)b, (void *)(b + 256 * PAGE));

	c = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	touch(c, 64);
	munmap(c, 64 * PAGE);
	printf("region pid=%d name=first start=%p end=%p faults=64 order=0\n", getpid(),
	       (void *)c, (void *)(c + 64 * PAGE));
	if (mmap(c, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != c)
		return 1;
	touch(c, 64);
	printf("region pid=%d name=reused start=%p end=%p faults=64 order=1\n", getpid(),
	       (void *)c, (void *)(c + 64 * PAGE));

	/* Below top the stack has never been touched (the kernel maps 128 KiB at exec). */
	top = ((uintptr_t)&here & ~(PAGE - 1)) - 8 * PAGE;
	lowest = (uintptr_t)&here;
	recurse(520);
	printf("stack pid=%d reached=%p top=%p\n", getpid(), (void *)((lowest + PAGE - 1) & ~(PAGE - 1)),
	       (void *)top);
	return 0;
}
