/*
 * Bad prefetches in a library loaded with dlopen: libpfwalk.so (next to
 * this program) walks a mapping of SIZE bytes, prefetching DIST bytes
 * ahead, so the last DIST / LINE prefetches land past the mapping's end.
 * With a path to tracefs's uprobe_events, it waits (up to 10 s) after the
 * dlopen until a uprobe in the library is listed there: a recorder that
 * probes libraries as they are mapped has then placed it, and the count is
 * exact. It prints its ground truth:
 *
 *   library path=/.../libpfwalk.so probed=1
 *   mapping start=0x... end=0x... size=1048576
 *   prefetches total=16384 past_end=1024 distance=65536 line=NN
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uprobe-listed.h"

#define SIZE (1UL << 20)
#define DIST (64UL << 10)
#define LINE 64
#define HINT ((void *)0x2bad70000000UL)

typedef uint64_t walk_fn(const volatile char *p, size_t size, size_t dist, int *line);

int main(int argc, char **argv)
{
	char exe[PATH_MAX], lib[PATH_MAX + 16], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int line, i, seen = 0;
	void *h;
	walk_fn *walk;
	char *p;

	if (n <= 0)
		return 1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	snprintf(lib, sizeof(lib), "%s/libpfwalk.so", exe);
	p = mmap(HINT, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		perror("prefetch-dlopen: mmap");
		return 1;
	}
	memset(p, 1, SIZE);
	if (!(h = dlopen(lib, RTLD_NOW)) || !(walk = (walk_fn *)dlsym(h, "pf_walk"))) {
		fprintf(stderr, "prefetch-dlopen: %s\n", dlerror());
		return 1;
	}
	for (i = 0; argc > 1 && i < 1000 && !(seen = uprobe_listed(argv[1], lib)); i++)
		usleep(10000);
	printf("library path=%s probed=%d\n", lib, seen);
	printf("mapping start=%p end=%p size=%lu\n", (void *)p, (void *)(p + SIZE), SIZE);
	walk(p, SIZE, DIST, &line);
	printf("prefetches total=%lu past_end=%lu distance=%lu line=%d\n", SIZE / LINE, DIST / LINE, DIST, line);
	return 0;
}
