/*
 * Rule: /proc names a mapped file by its path when it is read (d_path):
 * after a rename, the new path, in every process that maps it; a file
 * renamed over another leaves that one " (deleted)"; RENAME_EXCHANGE swaps
 * two names; a directory renamed moves the paths under it. The kernel
 * writes no record of any of it. Relative paths, a directory fd, a path
 * through a symbolic link: /proc prints each as the absolute path.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../snapshot.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif

/* A file of npages pages at path, mapped shared. */
static char *map_file(const char *path, size_t npages)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		printf("skip: cannot create %s\n", path);
		exit(77);
	}
	return map_shared_file(fd, npages, PROT_READ);
}

int main(void)
{
	char dir[] = "/tmp/mapscope-renamed-XXXXXX", a[320], b[320], c[320], d[320], sub[320], link[320];
	char *pb;
	pid_t child;
	int dfd;

	snapshot_init();
	if (!mkdtemp(dir)) {
		printf("skip: mkdtemp\n");
		return 77;
	}
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(c, sizeof(c), "%s/c", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(d, sizeof(d), "%s/sub/d", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	must(mkdir(sub, 0700), "mkdir");
	map_file(a, 2);
	pb = map_file(b, 3);
	map_file(d, 1);
	snapshot("mapped");
	must(rename(a, c), "rename");                          /* a is c now */
	snapshot("renamed");
	must(chdir(dir), "chdir");
	must(rename("c", "./sub/../a2"), "rename relative");   /* c is a2 */
	snapshot("renamed-relative");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	must(renameat(dfd, "a2", dfd, "b"), "renameat over b");   /* a2 is b; b's file is deleted */
	snapshot("renamed-over");
	map_file(c, 1);
	must(syscall(SYS_renameat2, dfd, "b", dfd, "c", RENAME_EXCHANGE), "renameat2 exchange");
	snapshot("exchanged");
	must(symlink(dir, link), "symlink");
	must(rename("sub", "link/sub2"), "rename directory");   /* d is under sub2 now, through the link */
	snapshot("renamed-directory");
	if (rename(d, c) == 0) {                                 /* a path that is gone: it fails, nothing changes */
		printf("rename of %s did not fail\n", d);
		return 1;
	}
	snapshot("failed");
	child = fork();
	if (child == 0) {
		/*
		 * The child exits at once: its paths are built on its stack, which
		 * the entry copies, not read from a process gone (docs/ACCURACY.md).
		 */
		snprintf(a, sizeof(a), "%s/c", dir);
		snprintf(b, sizeof(b), "%s/e", dir);
		must(rename(a, b), "rename in the child");         /* both processes' maps */
		snapshot("child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	snapshot("parent");
	must(munmap(pb + PAGE, PAGE), "munmap");                 /* a renamed file's map splits as any */
	snapshot("split-renamed");
	close(dfd);
	snprintf(d, sizeof(d), "%s/sub2/d", dir);
	unlink("e");
	unlink("b");
	unlink(d);
	unlink(link);
	rmdir("sub2");
	must(chdir("/"), "chdir");
	rmdir(dir);
	return 0;
}
