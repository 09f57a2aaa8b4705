/*
 * A reservation committed in parts, as a JIT's cage or a malloc arena does
 * it: 1 GiB mapped PROT_NONE, 4 MiB of it made rw- and touched, then later
 * 1 MiB more; a mapping never touched; a brk that grows and shrinks. It
 * prints its ground truth:
 *
 *   reserve start=0x.. end=0x.. touched=1280 first=1024 later=256
 *   untouched start=0x.. end=0x..
 *   brk old=0x.. grown=0x.. shrunk=0x..
 */
#include <stdio.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define MIB (1UL << 20)

static void touch(char *p, unsigned long pages)
{
	unsigned long i;

	for (i = 0; i < pages; i++)
		p[i * PAGE] = 1;
}

int main(void)
{
	char *r, *u, *old, *grown, *shrunk;
	struct timespec gap = { 0, 20 * 1000 * 1000 };

	r = mmap(NULL, 1024 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	u = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED || u == MAP_FAILED || mprotect(r, 4 * MIB, PROT_READ | PROT_WRITE))
		return 1;
	touch(r, 1024);
	nanosleep(&gap, NULL);
	/* Away from the first part, so that the two never merge into one VMA. */
	if (mprotect(r + 512 * MIB, MIB, PROT_READ | PROT_WRITE))
		return 1;
	touch(r + 512 * MIB, 256);
	old = sbrk(0);
	grown = sbrk(64 * 1024) == (void *)-1 ? NULL : sbrk(0);
	shrunk = grown && sbrk(-32 * 1024) != (void *)-1 ? sbrk(0) : NULL;
	if (!shrunk)
		return 1;
	printf("reserve start=%p end=%p touched=1280 first=1024 later=256\n", (void *)r, (void *)(r + 1024 * MIB));
	printf("untouched start=%p end=%p\n", (void *)u, (void *)(u + 8 * PAGE));
	printf("brk old=%p grown=%p shrunk=%p\n", (void *)old, (void *)grown, (void *)shrunk);
	return 0;
}
