/*
 * The prefetch loop of the dlopen workload (prefetch-dlopen.c), in a
 * shared library of its own: pf_walk() reads size bytes a cache line at a
 * time and prefetches dist bytes ahead of each read; *line is set to the
 * source line of the prefetch.
 */
#include <stddef.h>
#include <stdint.h>

#define LINE 64

__attribute__((noipa)) uint64_t pf_walk(const volatile char *p, size_t size, size_t dist, int *line)
{
	uint64_t sum = 0;
	size_t i;

	*line = 0;
	for (i = 0; i < size; i += LINE) {
		__builtin_prefetch((const char *)p + i + dist); *line = __LINE__;
		sum += p[i];
	}
	return sum;
}
