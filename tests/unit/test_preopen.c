/*
 * Binaries' files opened ahead: a map's path is opened once, as
 * ms_elf_open_head() opens it (an ELF file's first bytes read, its ELF
 * made, a FIFO refused without blocking), taken once by the caller, and
 * never past the bound of descriptors held, where the caller opens the
 * file itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <elf.h>
#include <libelf.h>
#include <mapscope/event.h>

#include "symbols/internal.h"
#include "symbols/preopen.h"

static char dir[64];
static char elf_path[128];               /* the ELF magic, then zeros: opened, but no ELF libelf reads */
static char exe[4096];                   /* this test's binary: an ELF file libelf reads */

/* A map event of path, with an inode as a file's map has. */
static struct ms_event map_of(const char *path)
{
	struct ms_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MS_EV_MAP;
	ev.map.name = path;
	ev.map.maj = 8;
	ev.map.ino = 42;
	return ev;
}

static void map(struct ms_preopen *po, const char *path)
{
	struct ms_event ev = map_of(path);

	ms_preopen_map(po, &ev);
}

/* What was opened ahead for path: true with *f filled (head its first bytes), false where nothing is to take. */
static bool take(struct ms_preopen *po, const char *path, struct ms_preopened *f, unsigned char *head)
{
	memset(f, 0, sizeof(*f));
	f->fd = INT_MAX;
	return ms_preopen_take(po, path, head, f);
}

/* Gives back what a take had: its ELF, its descriptor. */
static void drop(struct ms_preopened *f)
{
	elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
}

static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The file at path is opened ahead once, and taken once: its descriptor is of that file, its head its first bytes. */
static void file_taken_once(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened f;
	struct stat a, b;

	(void)state;
	assert_false(take(po, elf_path, &f, head));     /* nothing seen yet */
	map(po, elf_path);
	map(po, elf_path);                              /* seen: not opened again */
	assert_true(take(po, elf_path, &f, head));
	assert_true(f.fd >= 0);
	assert_int_equal(f.len, 5000 < MS_ELF_HEAD ? 5000 : MS_ELF_HEAD);
	assert_memory_equal(head, ELFMAG, SELFMAG);
	assert_null(f.elf);                             /* the magic alone: libelf reads no ELF there */
	assert_int_equal(fstat(f.fd, &a), 0);
	assert_int_equal(stat(elf_path, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	drop(&f);
	assert_false(take(po, elf_path, &f, head));     /* taken already */
	map(po, elf_path);
	assert_false(take(po, elf_path, &f, head));     /* and never opened again */
	ms_preopen_free(po);
}

/* A binary's ELF is made ahead too, as ms_bin_elf() makes it: its program headers read from the taker's head. */
static void binary_with_its_elf(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened f;
	Elf *h;
	size_t n = 0, m = 0;

	(void)state;
	map(po, exe);
	assert_true(take(po, exe, &f, head));
	assert_true(f.fd >= 0 && f.len > 0);
	assert_non_null(f.elf);
	assert_int_equal(elf_kind(f.elf), ELF_K_ELF);
	assert_false(f.written);                        /* a test binary: no compressed sections */
	assert_non_null(h = elf_memory((char *)head, f.len));
	assert_int_equal(elf_getphdrnum(f.elf, &n), 0);
	assert_int_equal(elf_getphdrnum(h, &m), 0);
	assert_true(n > 0 && n == m);
	elf_end(h);
	drop(&f);
	ms_preopen_free(po);
}

/* What the open says is what the caller gets: a missing file, a FIFO (refused at once), a file not ELF. */
static void errors_are_taken_too(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	char fifo[128], text[128], missing[128];
	struct ms_preopened o;
	FILE *f;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(text, sizeof(text), "%s/text", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	assert_int_equal(mkfifo(fifo, 0700), 0);
	assert_non_null(f = fopen(text, "w"));
	fputs("not a binary\n", f);
	fclose(f);
	map(po, fifo);                               /* a hang here ends in ctest's timeout, a failure */
	map(po, text);
	map(po, missing);
	assert_true(take(po, fifo, &o, head));
	assert_int_equal(o.fd, -ENOEXEC);
	assert_int_equal(o.len, 0);
	assert_null(o.elf);
	assert_true(take(po, text, &o, head));
	assert_int_equal(o.fd, -ENOEXEC);
	assert_true(take(po, missing, &o, head));
	assert_int_equal(o.fd, -ENOENT);
	ms_preopen_free(po);
	unlink(fifo);
	unlink(text);
}

/* Maps that name no file (anonymous memory, "[heap]", no inode) are passed over; " (deleted)" is cut. */
static void only_files(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	struct ms_event ev = map_of("[heap]");
	char deleted[192];
	struct ms_preopened f;

	(void)state;
	ms_preopen_map(po, &ev);
	assert_false(take(po, "[heap]", &f, head));
	ev = map_of(elf_path);
	ev.map.maj = 0;
	ev.map.ino = 0;                              /* a path with no inode: no file of it was mapped */
	ms_preopen_map(po, &ev);
	assert_false(take(po, elf_path, &f, head));
	ev.kind = MS_EV_UNMAP;
	ev.map.ino = 42;
	ms_preopen_map(po, &ev);
	assert_false(take(po, elf_path, &f, head));
	snprintf(deleted, sizeof(deleted), "%s (deleted)", elf_path);
	map(po, deleted);
	assert_true(take(po, elf_path, &f, head));
	assert_true(f.fd >= 0);
	drop(&f);
	ms_preopen_free(po);
}

/*
 * Past 128 descriptors held and not taken, a new path is left for the
 * caller to open, and not opened ahead later either; what was never taken
 * is closed with the table, its ELF ended (a leak: ASan's failure).
 */
static void held_bounded(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	char link[200][128];
	int before = nr_fds(), i, opened = 0;
	struct ms_preopened f;

	(void)state;
	for (i = 0; i < 200; i++) {
		snprintf(link[i], sizeof(link[i]), "%s/link%d", dir, i);
		assert_int_equal(symlink(exe, link[i]), 0);   /* each with its ELF, ended with the table */
		map(po, link[i]);
	}
	assert_int_equal(nr_fds(), before + 128);
	for (i = 0; i < 200; i++) {
		if (i >= 100 && i < 190)
			continue;                            /* left to the table to close */
		if (!take(po, link[i], &f, head))
			continue;
		assert_true(f.fd >= 0);
		assert_non_null(f.elf);
		drop(&f);
		opened++;
	}
	assert_int_equal(opened, 100);                /* 0-99 of the 128 opened, and none of 190-199 */
	map(po, link[199]);                           /* seen while none could be held: still the caller's */
	assert_false(take(po, link[199], &f, head));
	map(po, link[0]);
	map(po, link[1]);
	ms_preopen_free(po);
	assert_int_equal(nr_fds(), before);
	for (i = 0; i < 200; i++)
		unlink(link[i]);
}

/* Once the thread ahead is gone, what no map took is closed, and a path seen stays seen. */
static void drained(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened f;
	int before = nr_fds();

	(void)state;
	map(po, exe);
	map(po, elf_path);
	assert_int_equal(nr_fds(), before + 2);
	assert_true(take(po, exe, &f, head));
	ms_preopen_drain(po);
	assert_int_equal(nr_fds(), before + 1);         /* the one taken is the taker's */
	drop(&f);
	assert_false(take(po, elf_path, &f, head));
	map(po, elf_path);
	assert_false(take(po, elf_path, &f, head));
	ms_preopen_free(po);
	assert_int_equal(nr_fds(), before);
}

/* An open that fails for want of descriptors is not the taker's answer: the taker opens the file itself. */
static void no_descriptor_left(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened f;
	struct rlimit was, low;
	int fd;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	fd = open("/dev/null", O_RDONLY);               /* the lowest free descriptor, and so the first past the limit */
	assert_true(fd >= 0);
	close(fd);
	low = (struct rlimit){ (rlim_t)fd, was.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	map(po, elf_path);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	assert_false(take(po, elf_path, &f, head));
	map(po, exe);
	assert_true(take(po, exe, &f, head));
	assert_true(f.fd >= 0);
	drop(&f);
	ms_preopen_free(po);
}

/* The table's slots grow past their first room: every path is found again. */
static void many_paths(void **state)
{
	struct ms_preopen *po = ms_preopen_new();
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened f;
	char p[128];
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		snprintf(p, sizeof(p), "%s/none%d", dir, i);
		map(po, p);
	}
	for (i = 0; i < 1000; i++) {
		snprintf(p, sizeof(p), "%s/none%d", dir, i);
		assert_true(take(po, p, &f, head));
		assert_int_equal(f.fd, -ENOENT);
	}
	ms_preopen_free(po);
	ms_preopen_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_taken_once), cmocka_unit_test(binary_with_its_elf),
		cmocka_unit_test(errors_are_taken_too),
		cmocka_unit_test(only_files), cmocka_unit_test(held_bounded), cmocka_unit_test(drained),
		cmocka_unit_test(no_descriptor_left), cmocka_unit_test(many_paths),
	};
	unsigned char bytes[5000] = { 0 };
	FILE *f;
	int ret;

	elf_version(EV_CURRENT);
	if (!realpath("/proc/self/exe", exe))
		return 1;
	snprintf(dir, sizeof(dir), "/tmp/ms-preopen-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(elf_path, sizeof(elf_path), "%s/elf", dir);
	memcpy(bytes, ELFMAG, SELFMAG);              /* the magic is all the open reads: segments are not its part */
	if (!(f = fopen(elf_path, "w")) || fwrite(bytes, 1, sizeof(bytes), f) != sizeof(bytes) || fclose(f))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(elf_path);
	rmdir(dir);
	return ret;
}
