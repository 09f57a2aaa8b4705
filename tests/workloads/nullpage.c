/*
 * NULL-pointer reads survived with a SIGSEGV handler: read_null reads
 * address 0 five times and read_field reads 0x10 (a field of a NULL
 * struct pointer) three times. Each is a page fault at its address, a real
 * access however small the address. It prints, per function:
 *
 *   access func=read_null class=null-page addr=0x0 count=5
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
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

int main(void)
{
	volatile int *volatile null = NULL;
	struct sigaction sa;
	int i, sum = 0;

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
	printf("access func=read_null class=null-page addr=0x0 count=5\n");
	printf("access func=read_field class=null-page addr=0x10 count=3\n");
	return sum;
}
