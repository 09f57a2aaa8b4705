/*
 * Three bad accesses, each from its own named function, survived with a
 * SIGSEGV handler: an address just unmapped (by drop_buffer), a guard page
 * made with mprotect(PROT_NONE), and an address never mapped. It prints:
 *
 *   access func=touch_freed class=freed addr=0x..
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096

static sigjmp_buf back;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(back, 1);
}

__attribute__((noinline)) void drop_buffer(char *p)
{
	munmap(p, 4 * PAGE);
}

__attribute__((noinline)) void touch_freed(volatile char *p)
{
	p[0] = 1;
}

__attribute__((noinline)) void touch_guard(volatile char *p)
{
	p[0] = 2;
}

__attribute__((noinline)) void touch_wild(volatile char *p)
{
	p[0] = 3;
}

int main(void)
{
	struct sigaction sa;
	char *freed, *guarded, *wild = (char *)0x100000000UL;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	freed = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guarded = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (freed == MAP_FAILED || guarded == MAP_FAILED)
		return 1;
	freed[0] = guarded[0] = 0;
	drop_buffer(freed);
	mprotect(guarded + 3 * PAGE, PAGE, PROT_NONE);
	if (!sigsetjmp(back, 1))
		touch_freed(freed + 8);
	if (!sigsetjmp(back, 1))
		touch_guard(guarded + 3 * PAGE + 16);
	if (!sigsetjmp(back, 1))
		touch_wild(wild);
	printf("access func=touch_freed class=freed addr=%p released_by=drop_buffer\n", (void *)(freed + 8));
	printf("access func=touch_guard class=guard addr=%p\n", (void *)(guarded + 3 * PAGE + 16));
	printf("access func=touch_wild class=never-mapped addr=%p\n", (void *)wild);
	return 0;
}
