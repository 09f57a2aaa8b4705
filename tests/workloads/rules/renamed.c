/*
 * Rule: /proc names a mapped file by its path when it is read (d_path):
 * after a rename, the new path, in every process that maps it; a file
 * renamed over another leaves that one " (deleted)"; RENAME_EXCHANGE swaps
 * two names; a directory renamed moves the paths under it. The kernel
 * writes no record of any of it. Relative paths, a directory fd, a path
 * through a symbolic link: /proc prints each as the absolute path.
 *
 * record reads a rename's paths when it drains the entry (docs/ACCURACY.md):
 * a literal, and a relative path's directory (the working directory, the
 * directory fd, the link under it), from the process as it is then. On a
 * loaded machine that is after this program has moved on, or exited. So
 * that the maps it checks are the ones record can promise, it keeps all of
 * that until record has drained its last rename (wait_drained), where the
 * test names the recording it writes (MS_RULE_RECORDING).
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

/* Whether file holds the bytes s (at most 256 of them), read into a static buffer: nothing is mapped. */
static int file_holds(const char *file, const char *s)
{
	static char buf[1 << 16];
	size_t n = strlen(s), have = 0;
	int fd = open(file, O_RDONLY), found = 0;
	ssize_t got;

	if (fd < 0)
		return 0;
	while (!found && (got = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)got;
		found = memmem(buf, have, s, n) != NULL;
		if (have >= n) {   /* keep the tail a match could start in */
			memmove(buf, buf + have - (n - 1), n - 1);
			have = n - 1;
		}
	}
	close(fd);
	return found;
}

/*
 * Until record has drained every rename made so far: it then makes one
 * that fails, of a path named nowhere else, and reads the recording
 * (written uncompressed) until the path is there. record writes an entry,
 * with the stack it copied and the paths it read, in the drain that
 * reads it, after every entry before it. 30 s at most, then it goes on
 * and says so: the snapshots are checked all the same.
 */
static void wait_drained(const char *dir)
{
	const char *file = getenv("MS_RULE_RECORDING");
	struct timespec pause = { 0, 1000 * 1000 }, now, end;
	char marker[256];

	if (!file)
		return;
	snprintf(marker, sizeof(marker), "%s/drained", dir);
	if (rename(marker, marker) == 0) {
		printf("rename of %s did not fail\n", marker);
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 30;
	while (!file_holds(file, marker)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec > end.tv_nsec)) {
			fprintf(stderr, "rule-renamed: %s never showed %s: record drained late or not at all\n",
				file, marker);
			return;
		}
		nanosleep(&pause, NULL);
	}
}

/*
 * Not instrumented by ASan: where it keeps locals on a fake stack
 * (detect_stack_use_after_return), the paths would lie off the stack that
 * the entries copy, and the child's would be read from a process gone.
 */
__attribute__((no_sanitize_address)) int main(void)
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
	/*
	 * A file unlinked, and one renamed over, keep their directory: d_path
	 * prints them under its new path once it is renamed, " (deleted)" still.
	 */
	snprintf(a, sizeof(a), "%s/sub2/gone", dir);
	snprintf(b, sizeof(b), "%s/sub2/over", dir);
	snprintf(c, sizeof(c), "%s/sub2/new", dir);
	map_file(a, 1);
	map_file(b, 1);
	must(unlink(a), "unlink");
	close(open(c, O_WRONLY | O_CREAT, 0600));
	must(rename(c, b), "rename over");                      /* over's mapped file is deleted */
	snprintf(c, sizeof(c), "%s/sub3", dir);
	snprintf(d, sizeof(d), "%s/sub2", dir);
	must(rename(d, c), "rename directory of deleted files");
	snapshot("renamed-directory-of-deleted");
	wait_drained(dir);
	close(dfd);
	snprintf(d, sizeof(d), "%s/sub3/d", dir);
	unlink("e");
	unlink("b");
	unlink(d);
	unlink("sub3/over");
	unlink(link);
	rmdir("sub3");
	must(chdir("/"), "chdir");
	rmdir(dir);
	return 0;
}
