/*
 * For the process-table reproducers: a snapshot (../snapshot.h) of the
 * calling thread's maps, /proc/thread-self/maps, named by its own id.
 * /proc/PID/maps is empty once the leader has exited, though the process
 * lives on in its threads; `mapscope maps --pid TID` takes a thread's id
 * to its process, as /proc/TID/maps does.
 */
#ifndef WORKLOADS_TASK_SNAPSHOT_H
#define WORKLOADS_TASK_SNAPSHOT_H

#include "../snapshot.h"

static inline void snapshot_thread(const char *step)
{
	struct timespec t1;
	ssize_t n, len = 0;
	int fd;

	snapshot_grow_stack();
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/maps", O_RDONLY);
	while (fd >= 0 && (n = read(fd, snapshot_maps + len, sizeof(snapshot_maps) - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snapshot_maps[len] = '\0';
	printf("snapshot pid=%ld time=%llu step=%s\n%send-snapshot\n", (long)syscall(SYS_gettid),
	       (unsigned long long)t1.tv_sec * 1000000000ULL + (unsigned long long)t1.tv_nsec, step,
	       snapshot_maps);
	fflush(stdout);
}

#endif
