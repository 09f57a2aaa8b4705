/*
 * Two dense 32 MiB tables for hugepage advice to name: one from malloc
 * (glibc maps it: its advice is glibc's tunable), one mmapped by
 * make_buffer (its advice is madvise at that call). Every page of each is
 * touched, both live 50 ms, both are freed before exit. It prints:
 *
 *   table via=malloc start=0x.. end=0x..
 *   table via=mmap func=make_buffer start=0x.. end=0x..
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LEN (32UL << 20)

__attribute__((noinline)) char *make_buffer(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
	struct timespec pause = { 0, 50000000 };
	char *table = malloc(LEN), *buf = make_buffer(LEN);

	if (!table || !buf)
		return 1;
	memset(table, 1, LEN);
	memset(buf, 2, LEN);
	nanosleep(&pause, NULL);
	printf("table via=malloc start=%p end=%p\n", (void *)table, (void *)(table + LEN));
	printf("table via=mmap func=make_buffer start=%p end=%p\n", (void *)buf, (void *)(buf + LEN));
	munmap(buf, LEN);
	free(table);
	return 0;
}
