/*
 * Ground truth for symbols. Three named functions touch known numbers of
 * fresh pages (one write each): fill_table_a in the global array table_a
 * (.bss), fill_table_b in table_b (.data), fill_buffer in a buffer that the
 * helper make_buffer creates with mmap. It prints:
 *
 *   object name=table_a start=0x.. end=0x..
 *   object name=table_b start=0x.. end=0x..
 *   region name=buffer start=0x.. end=0x.. alloc=make_buffer
 *   touched func=fill_table_a object=table_a pages=40
 *   ...
 *   inlined func=poke caller=fill_buffer object=buffer pages=30
 *
 * fill_buffer's writes are made by poke, inlined into it.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096

char table_a[64 * PAGE] __attribute__((aligned(PAGE)));
int table_b[32 * PAGE / sizeof(int)] __attribute__((aligned(PAGE))) = { 1 };

__attribute__((noinline)) char *make_buffer(size_t pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

__attribute__((noinline)) void fill_table_a(int pages)
{
	for (int i = 0; i < pages; i++)
		((volatile char *)table_a)[i * PAGE + 8] = 1;
}

__attribute__((noinline)) void fill_table_b(int pages)
{
	for (int i = 0; i < pages; i++)
		((volatile int *)table_b)[i * PAGE / sizeof(int) + 2] = 2;
}

/* Inlined into fill_buffer: its writes are poke's code, in fill_buffer's symbol. */
static inline __attribute__((always_inline)) void poke(char *p)
{
	*(volatile char *)p = 3;
}

__attribute__((noinline)) void fill_buffer(char *b, int pages)
{
	for (int i = 0; i < pages; i++)
		poke(b + i * PAGE);
}

int main(void)
{
	char *buf = make_buffer(48);

	if (!buf)
		return 1;
	fill_table_a(40);
	fill_table_b(20);
	fill_buffer(buf, 30);
	printf("object name=table_a start=%p end=%p\n", (void *)table_a, (void *)(table_a + sizeof(table_a)));
	printf("object name=table_b start=%p end=%p\n", (void *)table_b, (void *)((char *)table_b + sizeof(table_b)));
	printf("region name=buffer start=%p end=%p alloc=make_buffer\n", (void *)buf, (void *)(buf + 48 * PAGE));
	printf("touched func=fill_table_a object=table_a pages=40\n");
	printf("touched func=fill_table_b object=table_b pages=20\n");
	printf("touched func=fill_buffer object=buffer pages=30\n");
	printf("inlined func=poke caller=fill_buffer object=buffer pages=30\n");
	return 0;
}
