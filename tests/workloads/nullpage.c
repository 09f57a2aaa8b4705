/*
 * NULL-pointer reads survived with a SIGSEGV handler: read_null reads
 * address 0 five times and read_field reads 0x10 (a field of a NULL
 * struct pointer) three times. Each is a page fault at its address, a real
 * access however small the address. It prints, per function:
 *
 *   access func=read_null class=null-page addr=0x0 count=5
 *
 * With "far", read_far also reads 0x8000 twice (32 KiB into a NULL struct
 * pointer): below vm.mmap_min_addr where it is 64 KiB, above it where it is
 * 4 KiB; its class is printed from this machine's /proc/sys/vm/mmap_min_addr.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sigjmp_buf back;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(back, 1);
}

__attribute__((noinline)) int read_null(volatile int *p)
{
	return *p;
}

__attribute__((noinline)) int read_field(volatile char *p)
{
	return p[0x10];
}

__attribute__((noinline)) int read_far(volatile char *p)
{
	return p[0x8000];
}

static unsigned long mmap_min_addr(void)
{
	unsigned long v = 65536;
	FILE *f = fopen("/proc/sys/vm/mmap_min_addr", "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65536;
		fclose(f);
	}
	return v;
}

int main(int argc, char **argv)
{
	volatile int *volatile null = NULL;
	struct sigaction sa;
	int i, sum = 0, far = argc > 1 && !strcmp(argv[1], "far");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < 5; i++)
		if (!sigsetjmp(back, 1))
			sum += read_null(null);
	for (i = 0; i < 3; i++)
		if (!sigsetjmp(back, 1))
			sum += read_field((volatile char *)null);
	for (i = 0; far && i < 2; i++)
		if (!sigsetjmp(back, 1))
			sum += read_far((volatile char *)null);
	printf("access func=read_null class=null-page addr=0x0 count=5\n");
	printf("access func=read_field class=null-page addr=0x10 count=3\n");
	if (far)
		printf("access func=read_far class=%s addr=0x8000 count=2 mmap_min_addr=%lu\n",
		       mmap_min_addr() > 0x8000 ? "null-page" : "never-mapped", mmap_min_addr());
	return sum;
}
