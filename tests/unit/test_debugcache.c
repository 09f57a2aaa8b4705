/*
 * The decompressed copies of debug files: a copy holds every section of
 * the original, the compressed ones inflated, with the same build-id and
 * program headers; it is used again only where it is whole, the user's,
 * in a folder only the user writes, and of the build-id asked for; a
 * process killed as it writes one leaves nothing; and a file with
 * nothing compressed is left as it is.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <elfutils/libdw.h>
#include <zlib.h>
#include <zstd.h>

#include "symbols/internal.h"

static char dir[] = "/tmp/ms-debugcache.XXXXXX", self[4096], comp[4200], cache[4200], copy_at[4200];
static unsigned char id[64];
static int id_len;

static void run_env_cache(const char *where)
{
	setenv("MAPSCOPE_DEBUG_CACHE", where, 1);
}

/* fd of the compressed file, passed to swap: the descriptor it returns. */
static int swap(void)
{
	int fd = open(comp, O_RDONLY);

	assert_true(fd >= 0);
	return ms_debugcache_swap(fd, id, (size_t)id_len);
}

/* Section i's bytes as libelf gives them, inflated where compressed (malloc'd). */
static void *section_bytes(Elf *elf, size_t i, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_getscn(elf, i);
	Elf_Data *d;
	void *out;

	assert_non_null(gelf_getshdr(scn, sh));
	if (sh->sh_flags & SHF_COMPRESSED) {
		assert_int_equal(elf_compress(scn, 0, 0), 1);
		assert_non_null(gelf_getshdr(scn, sh));
	}
	if (sh->sh_type == SHT_NOBITS || !sh->sh_size)
		return NULL;
	d = elf_rawdata(scn, NULL);
	if (!d)
		d = elf_getdata(scn, NULL);
	assert_non_null(d);
	assert_int_equal(d->d_size, sh->sh_size);
	out = malloc(d->d_size);
	memcpy(out, d->d_buf, d->d_size);
	return out;
}

/*
 * Every section of copy is the original's, inflated, nothing compressed;
 * the same program headers. compressed: the original had some to inflate.
 */
static void same_content(int orig_fd, int copy_fd, bool compressed)
{
	Elf *a = elf_begin(orig_fd, ELF_C_READ, NULL), *b = elf_begin(copy_fd, ELF_C_READ, NULL);
	size_t na, nb, i, inflated = 0;
	GElf_Shdr sa, sb;
	GElf_Phdr pa, pb;
	void *da, *db;

	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(elf_getshdrnum(a, &na), 0);
	assert_int_equal(elf_getshdrnum(b, &nb), 0);
	assert_int_equal(na, nb);
	for (i = 1; i < na; i++) {
		assert_non_null(gelf_getshdr(elf_getscn(a, i), &sa));
		inflated += (sa.sh_flags & SHF_COMPRESSED) != 0;
		da = section_bytes(a, i, &sa);
		db = section_bytes(b, i, &sb);
		assert_false(sb.sh_flags & SHF_COMPRESSED);
		assert_int_equal(sa.sh_flags, sb.sh_flags);
		assert_int_equal(sa.sh_type, sb.sh_type);
		assert_int_equal(sa.sh_addr, sb.sh_addr);
		assert_int_equal(sa.sh_size, sb.sh_size);
		assert_int_equal(sa.sh_name, sb.sh_name);
		if (da)
			assert_memory_equal(da, db, sa.sh_size);
		if (sb.sh_addralign > 1 && sb.sh_type != SHT_NOBITS)
			assert_int_equal(sb.sh_offset % sb.sh_addralign, 0);
		free(da);
		free(db);
	}
	assert_true(compressed ? inflated > 0 : inflated == 0);
	assert_int_equal(elf_getphdrnum(a, &na), 0);
	for (i = 0; i < na; i++) {
		assert_non_null(gelf_getphdr(a, (int)i, &pa));
		assert_non_null(gelf_getphdr(b, (int)i, &pb));
		assert_memory_equal(&pa, &pb, sizeof(pa));
	}
	elf_end(a);
	elf_end(b);
}

static void copy_made_whole_and_used_again(void **state)
{
	struct stat before, after;
	int fd, orig;
	Dwarf *dw;

	(void)state;
	run_env_cache(cache);
	unlink(copy_at);
	fd = swap();
	assert_int_equal(stat(copy_at, &before), 0);
	orig = open(comp, O_RDONLY);
	same_content(orig, fd, true);
	dw = dwarf_begin(fd, DWARF_C_READ);            /* libdw reads it, nothing to inflate */
	assert_non_null(dw);
	dwarf_end(dw);
	close(orig);
	close(fd);
	assert_true((before.st_mode & 0777) == 0600);
	fd = swap();                                  /* used again, not made again */
	assert_int_equal(stat(copy_at, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	close(fd);
}

/*
 * A process killed as it writes a copy (here by its file size limit, the
 * copy being larger) leaves nothing in the folder: no copy, no file half
 * written; the next one makes the copy whole.
 */
static void killed_while_copying_leaves_nothing(void **state)
{
	struct rlimit small = { 64 << 10, 64 << 10 }, none = { 0, 0 };
	char cmd[4400], list[4400];
	struct stat st;
	pid_t child;
	FILE *ls;
	int status, n = 0;

	(void)state;
	run_env_cache(cache);
	close(swap());                                /* the folder made, and a whole copy's size known */
	assert_int_equal(stat(copy_at, &st), 0);
	assert_true(st.st_size > (64 << 10));
	assert_int_equal(unlink(copy_at), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		setrlimit(RLIMIT_CORE, &none);
		setrlimit(RLIMIT_FSIZE, &small);              /* SIGXFSZ at the limit: killed mid-write */
		close(swap());
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ);
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", cache);
	assert_non_null(ls = popen(cmd, "r"));
	while (fgets(list, sizeof(list), ls))
		n++;
	pclose(ls);
	assert_int_equal(n, 0);
	close(swap());
	assert_int_equal(stat(copy_at, &st), 0);
}

/*
 * Where /proc is not there to name an unnamed file by (a chroot or a
 * container without it; here a mount namespace with an empty /proc), the
 * copy is made through a file renamed into place, whole. Without the
 * check before writing, the unnamed copy was written, could not be
 * named, and the renamed one then failed: libelf had inflated the
 * sections in place, so no copy was ever made.
 */
static void copy_made_without_proc(void **state)
{
	struct stat st;
	pid_t child;
	int status, fd, orig;

	(void)state;
	run_env_cache(cache);
	close(swap());                                /* the folder made */
	assert_int_equal(unlink(copy_at), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", "/proc", "tmpfs", 0, NULL))
			_exit(77);
		close(swap());
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		fprintf(stderr, "skipped: no mount namespace with an empty /proc to be had (root needed)\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(stat(copy_at, &st), 0);
	fd = swap();                                  /* whole: used as it is */
	orig = open(comp, O_RDONLY);
	same_content(orig, fd, true);
	close(orig);
	close(fd);
}

static void broken_copies_made_again(void **state)
{
	struct stat st, now;
	int fd, orig;

	(void)state;
	run_env_cache(cache);
	close(swap());
	assert_int_equal(stat(copy_at, &st), 0);
	assert_int_equal(truncate(copy_at, st.st_size - 1), 0);        /* cut short */
	fd = swap();
	assert_int_equal(stat(copy_at, &now), 0);
	assert_int_equal(now.st_size, st.st_size);
	orig = open(comp, O_RDONLY);
	same_content(orig, fd, true);
	close(fd);
	assert_int_equal(unlink(copy_at), 0);
	assert_int_equal(link(comp, copy_at), 0);      /* compressed: not a copy */
	fd = swap();
	same_content(orig, fd, true);
	close(fd);
	close(orig);
}

static void another_build_id_is_not_used(void **state)
{
	unsigned char other[20] = { 0xab, 0xcd };
	int fd = open(comp, O_RDONLY), got;

	(void)state;
	run_env_cache(cache);
	got = ms_debugcache_swap(fd, other, sizeof(other));   /* the file's own build-id differs */
	assert_int_equal(got, fd);
	close(fd);
}

static void nothing_compressed_left_alone(void **state)
{
	int fd = open(self, O_RDONLY), got;
	char *name = (char *)1;

	(void)state;
	run_env_cache(cache);
	unlink(copy_at);
	got = ms_debugcache_swap(fd, id, (size_t)id_len);
	assert_int_equal(got, fd);
	assert_int_equal(access(copy_at, F_OK), -1);
	close(fd);
	/* No copy, and none under /usr/lib/debug to make one from (the test binary's build-id). */
	assert_int_equal(ms_debugcache_find(id, (size_t)id_len, &name), -1);
	assert_null(name);
}

static void find_answers_from_the_cache(void **state)
{
	char *name = NULL;
	int fd;

	(void)state;
	run_env_cache(cache);
	close(swap());
	fd = ms_debugcache_find(id, (size_t)id_len, &name);
	assert_true(fd >= 0);
	assert_string_equal(name, copy_at);
	free(name);
	close(fd);
}

/* Bytes of a stream in a memfd, inflated by ms_debugcache_inflate() into another: whether it took them, and as want. */
static bool inflates_to(const void *z, size_t zlen, uint32_t type, const void *want, size_t want_len)
{
	int in = memfd_create("z", 0), out = memfd_create("out", 0);
	unsigned char *got = malloc(want_len + 1);
	bool ok;

	assert_true(in >= 0 && out >= 0 && got);
	assert_int_equal(write(in, "hdr", 3), 3);                   /* the stream need not start the file */
	assert_int_equal(write(in, z, zlen), (ssize_t)zlen);
	ok = ms_debugcache_inflate(in, 3, zlen, type, out, 7, want_len);
	if (ok) {
		assert_int_equal(pread(out, got, want_len + 1, 7), (ssize_t)want_len);
		assert_memory_equal(got, want, want_len);
	}
	free(got);
	close(in);
	close(out);
	return ok;
}

/* A little generator of bytes that do not compress (xorshift), the same every run. */
static void noise(unsigned char *p, size_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		*p++ = (unsigned char)x;
	}
}

/*
 * A zlib stream whose first 64 KiB (the inflater's read) inflate to
 * exactly 64 KiB, a block ending there: the inflater's output fills as
 * its input runs out, and zlib then says Z_BUF_ERROR (no progress), which
 * is not an error. Made as one can: noise then zeros, flushed, padded
 * with empty stored blocks to the 64 KiB, then more.
 */
static size_t edge_stream(unsigned char *z, size_t cap, unsigned char *data, size_t *len)
{
	static const unsigned char empty[5] = { 0, 0, 0, 0xff, 0xff };   /* a stored block of nothing */
	z_stream d;
	size_t r, head, gap, i;

	for (r = 65000; r < 65536; r++) {
		noise(data, r);
		memset(data + r, 0, 65536 - r);
		memset(&d, 0, sizeof(d));
		assert_int_equal(deflateInit(&d, 6), Z_OK);
		d.next_in = data;
		d.avail_in = 65536;
		d.next_out = z;
		d.avail_out = (uInt)cap;
		assert_int_equal(deflate(&d, Z_SYNC_FLUSH), Z_OK);
		head = cap - d.avail_out;
		gap = 65536 - head;
		if (head > 65536 || gap % 5 || gap >= 200) {
			deflateEnd(&d);
			continue;
		}
		for (i = 0; i < gap / 5; i++)
			memcpy(z + head + 5 * i, empty, 5);
		memset(data + 65536, 'x', 4096);
		d.next_in = data + 65536;
		d.avail_in = 4096;
		d.next_out = z + 65536;
		d.avail_out = (uInt)(cap - 65536);
		assert_int_equal(deflate(&d, Z_FINISH), Z_STREAM_END);
		*len = 65536 + 4096;
		r = cap - d.avail_out;
		deflateEnd(&d);
		return r;
	}
	fail_msg("no stream made that fills 64 KiB exactly");
	return 0;
}

/*
 * The inflater on what libelf and objcopy seldom write: a zlib stream
 * whose output fills as a read of its input ends, zstd's frames one after
 * another; and refused: bytes after the stream, a stream cut short, one
 * that inflates to more or less than its header says.
 */
static void inflater_edges(void **state)
{
	size_t cap = 1 << 18, len = 0, zlen, a, b;
	unsigned char *z = malloc(cap), *data = malloc(cap);

	(void)state;
	assert_true(z && data);
	zlen = edge_stream(z, cap, data, &len);
	assert_true(inflates_to(z, zlen, ELFCOMPRESS_ZLIB, data, len));
	assert_false(inflates_to(z, zlen - 1, ELFCOMPRESS_ZLIB, data, len));         /* cut short */
	z[zlen] = 'x';
	assert_false(inflates_to(z, zlen + 1, ELFCOMPRESS_ZLIB, data, len));         /* a byte after it */
	assert_false(inflates_to(z, zlen, ELFCOMPRESS_ZLIB, data, len - 1));         /* more than it says */
	assert_false(inflates_to(z, zlen, ELFCOMPRESS_ZLIB, data, len + 1));         /* less */
	/* zstd: two frames, the second over a 64 KiB read's end */
	a = ZSTD_compress(z, cap, data, 70000, 3);
	assert_false(ZSTD_isError(a));
	noise(data + 70000, 90000);
	b = ZSTD_compress(z + a, cap - a, data + 70000, 90000, 3);
	assert_false(ZSTD_isError(b));
	assert_true(a + b > 65536);
	assert_true(inflates_to(z, a + b, ELFCOMPRESS_ZSTD, data, 160000));
	z[a + b] = 'x';
	assert_false(inflates_to(z, a + b + 1, ELFCOMPRESS_ZSTD, data, 160000));    /* a byte after them */
	assert_false(inflates_to(z, a + b - 1, ELFCOMPRESS_ZSTD, data, 160000));    /* cut short */
	assert_false(inflates_to(z, a + b, ELFCOMPRESS_ZSTD, data, 159999));
	assert_false(inflates_to(z, a + b, 3, data, 160000));                       /* no such type */
	/* One frame that inflates to exactly one 64 KiB output, read in one go: done when zstd says so. */
	memset(data, 'y', 65536);
	a = ZSTD_compress(z, cap, data, 65536, 3);
	assert_false(ZSTD_isError(a));
	assert_true(a < 65536);
	assert_true(inflates_to(z, a, ELFCOMPRESS_ZSTD, data, 65536));
	free(z);
	free(data);
}

static bool has_compressed(const char *path);

/*
 * With no cache to keep it in, swap gives a copy all the same, for this
 * process only: a file with no name (in $TMPDIR), whole, inflated.
 */
static void scratch_only(void)
{
	char tmp[4300];
	struct stat st;
	int fd, got, orig;

	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	mkdir(tmp, 0700);
	setenv("TMPDIR", tmp, 1);
	fd = open(comp, O_RDONLY);
	got = ms_debugcache_swap(fd, id, (size_t)id_len);
	unsetenv("TMPDIR");
	assert_true(got >= 0 && got != fd);
	assert_int_equal(fstat(got, &st), 0);
	assert_int_equal(st.st_nlink, 0);
	orig = open(comp, O_RDONLY);
	same_content(orig, got, true);
	close(orig);
	close(got);
	assert_int_equal(rmdir(tmp), 0);              /* nothing left there */
}

/*
 * zstd's sections (objcopy --compress-debug-sections=zstd), which this
 * libelf cannot inflate, are inflated in the copy too: its sections are
 * those of the uncompressed file, and libdw reads it.
 */
static void zstd_sections_inflated(void **state)
{
	char zst[4300], cmd[9000];
	int fd, got, plain;
	Dwarf *dw;

	(void)state;
	snprintf(zst, sizeof(zst), "%s/zstd.debug", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zstd '%s' '%s' 2>/dev/null", self, zst);
	if (system(cmd) != 0 || !has_compressed(zst)) {
		fprintf(stderr, "skipped: this objcopy does not compress with zstd\n");
		skip();
	}
	run_env_cache("off");
	fd = open(zst, O_RDONLY);
	got = ms_debugcache_swap(fd, id, (size_t)id_len);
	assert_true(got >= 0 && got != fd);
	plain = open(self, O_RDONLY);
	same_content(plain, got, false);
	assert_non_null(dw = dwarf_begin(got, DWARF_C_READ));
	dwarf_end(dw);
	close(plain);
	close(got);
	unlink(zst);
}

static void unsafe_or_off_folders_refused(void **state)
{
	char loose[4300], target[4300];
	struct stat st;
	int got;

	(void)state;
	run_env_cache("off");
	scratch_only();
	snprintf(loose, sizeof(loose), "%s/loose", dir);
	assert_int_equal(mkdir(loose, 0700), 0);
	assert_int_equal(chmod(loose, 0777), 0);      /* others may write there */
	run_env_cache(loose);
	scratch_only();
	assert_int_equal(rmdir(loose), 0);            /* nothing written there */
	/* A link planted at the copy's name is replaced, its target left alone. */
	run_env_cache(cache);
	unlink(copy_at);
	snprintf(target, sizeof(target), "%s/target", dir);
	close(open(target, O_WRONLY | O_CREAT, 0600));
	assert_int_equal(symlink(target, copy_at), 0);
	got = swap();
	assert_true(got >= 0);
	close(got);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(lstat(copy_at, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(target);
}

/* Whether path has a compressed section (objcopy compresses only what there is). */
static bool has_compressed(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool yes = false;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			yes = true;
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return yes;
}

static int setup(void **state)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char cmd[9000];
	int i, at;

	(void)state;
	elf_version(EV_CURRENT);
	if (n <= 0 || !mkdtemp(dir))
		return -1;
	self[n] = '\0';
	snprintf(comp, sizeof(comp), "%s/comp.debug", dir);
	snprintf(cache, sizeof(cache), "%s/cache/debug", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s' 2>/dev/null", self, comp);
	id_len = ms_elf_build_id(self, id, sizeof(id));
	if (id_len <= 0 || system(cmd) != 0 || !has_compressed(comp)) {
		fprintf(stderr, "skipped: this test binary has no build-id or no DWARF, or there is no objcopy to "
				"compress it\n");
		exit(77);
	}
	at = snprintf(copy_at, sizeof(copy_at), "%s/", cache);
	for (i = 0; i < id_len; i++, at += 2)
		snprintf(copy_at + at, 3, "%02x", id[i]);
	strcat(copy_at, ".debug");
	return 0;
}

static int teardown(void **state)
{
	char cmd[4300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copy_made_whole_and_used_again),
		cmocka_unit_test(broken_copies_made_again),
		cmocka_unit_test(killed_while_copying_leaves_nothing),
		cmocka_unit_test(copy_made_without_proc),
		cmocka_unit_test(another_build_id_is_not_used),
		cmocka_unit_test(nothing_compressed_left_alone),
		cmocka_unit_test(find_answers_from_the_cache),
		cmocka_unit_test(unsafe_or_off_folders_refused),
		cmocka_unit_test(zstd_sections_inflated),
		cmocka_unit_test(inflater_edges),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
