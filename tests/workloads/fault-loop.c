/*
 * Page-fault-heavy load for bench/: maps MIB MiB, writes one byte per page,
 * unmaps it, REPS times. usage: fault-loop [MIB [REPS]] (default 256 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 20, off;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r;
	volatile char *p;

	for (r = 0; r < reps; r++) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("fault-loop: mmap");
			return 1;
		}
		for (off = 0; off < len; off += 4096)
			p[off] = 1;
		munmap((void *)p, len);
	}
	return 0;
}
