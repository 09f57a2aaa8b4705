/*
 * For the maps oracle and the rule reproducers: reads /proc/self/maps
 * between two clock_gettime(CLOCK_MONOTONIC) calls, with raw syscalls into
 * a static buffer (no allocation that could move the break), and prints it:
 *
 *   snapshot pid=P time=NS step=NAME
 *   <the maps text>
 *   end-snapshot
 *
 * NS lies after the read: the maps did not change between it and the
 * read. tests/e2e/check-maps.py compares each with `mapscope maps --at NS`.
 * The stack is grown first, below anything read(), close() and
 * clock_gettime() (or a sanitizer's wrappers of them) reach, so that none
 * of them grows it between the read and NS.
 */
#ifndef WORKLOADS_SNAPSHOT_H
#define WORKLOADS_SNAPSHOT_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

static char snapshot_maps[1 << 20];
static char snapshot_out[1 << 16];

/* Call first: stdout fully buffered in a static buffer, so printing maps nothing. */
static inline void snapshot_init(void)
{
	setvbuf(stdout, snapshot_out, _IOFBF, sizeof(snapshot_out));
}

/* Touches 64 KiB of stack below the caller's frame (the real stack, not a sanitizer's fake one). */
static void __attribute__((noinline, no_sanitize_address)) snapshot_grow_stack(void)
{
	volatile char buf[16 * PAGE];
	size_t i;

	for (i = 0; i < sizeof(buf); i += PAGE)
		buf[i] = 0;
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* The maps file at path, as the snapshot of task id (a pid, or a thread's id). */
static inline void snapshot_of(const char *path, long id, const char *step)
{
	struct timespec t1;
	ssize_t n, len = 0;
	int fd;

	snapshot_grow_stack();
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	while (fd >= 0 && (n = read(fd, snapshot_maps + len, sizeof(snapshot_maps) - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snapshot_maps[len] = '\0';
	printf("snapshot pid=%ld time=%llu step=%s\n%send-snapshot\n", id,
	       (unsigned long long)t1.tv_sec * 1000000000ULL + (unsigned long long)t1.tv_nsec, step,
	       snapshot_maps);
	fflush(stdout);
}

static inline void snapshot(const char *step)
{
	snapshot_of("/proc/self/maps", (long)getpid(), step);
}

/*
 * The calling thread's maps, named by its id: /proc/PID/maps is empty once
 * the leader has exited, though the process lives on in its threads.
 */
static inline void snapshot_thread(const char *step)
{
	snapshot_of("/proc/thread-self/maps", (long)syscall(SYS_gettid), step);
}

/* An anonymous private map that must work (at: MAP_FIXED there, or NULL). */
static inline char *map_or_die(void *at, size_t len, int prot, int flags)
{
	void *p = mmap(at, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED || (at && (flags & MAP_FIXED) && p != at)) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* A system call that must work; `what` names it. */
static inline void must(int ret, const char *what)
{
	if (ret) {
		perror(what);
		exit(1);
	}
}

/* npages zeroed pages written to fd (then closed), mapped shared with prot. */
static inline char *map_shared_file(int fd, size_t npages, int prot)
{
	static char page[PAGE];
	size_t i;
	char *p;

	for (i = 0; i < npages; i++)
		if (write(fd, page, PAGE) != (ssize_t)PAGE) {
			perror("write");
			exit(1);
		}
	p = mmap(NULL, npages * PAGE, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	close(fd);
	return p;
}

#endif
