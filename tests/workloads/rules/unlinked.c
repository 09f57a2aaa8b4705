/*
 * Rule: /proc names a mapped file by its path when it is read (d_path):
 * once the name it was mapped by is unlinked, "PATH (deleted)", in every
 * process that maps it. The kernel writes no record of that.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "../snapshot.h"

/* A file of npages pages in dir, mapped: its path in path. */
static char *map_file(const char *dir, char *path, size_t len, size_t npages, int prot)
{
	int fd;

	snprintf(path, len, "%s/mapscope-unlinked-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		printf("skip: mkstemp in %s\n", dir);
		exit(77);
	}
	return map_shared_file(fd, npages, prot);
}

int main(void)
{
	char a[256], b[256], c[256];
	char *pa, *pb;
	pid_t child;
	int dfd;

	snapshot_init();
	pa = map_file("/tmp", a, sizeof(a), 2, PROT_READ | PROT_WRITE);
	pb = map_file("/tmp", b, sizeof(b), 3, PROT_READ);
	map_file("/dev/shm", c, sizeof(c), 1, PROT_READ);
	snapshot("mapped");
	must(unlink(a), "unlink");
	snapshot("unlinked");
	dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	must(unlinkat(dfd, strrchr(b, '/') + 1, 0), "unlinkat");
	close(dfd);
	snapshot("unlinkat");
	must(unlink(c), "unlink");       /* tmpfs */
	snapshot("unlinked-shm");
	pa[0] = 1;
	child = fork();
	if (child == 0) {
		snapshot("child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	must(munmap(pb + PAGE, PAGE), "munmap");   /* a deleted file's map splits as any */
	snapshot("split-deleted");
	return 0;
}
