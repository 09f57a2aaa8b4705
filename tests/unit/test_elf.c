/*
 * Opening binaries a recording names: only regular ELF files, never one
 * under /proc, /sys or /dev, and never blocking on a FIFO (a hang here
 * ends in the alarm, a failure).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/symbols.h>

#include "symbols/internal.h"

static char dir[64];
static char path[128];

static const char *in_dir(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void fifo_refused_without_blocking(void **state)
{
	unsigned char id[64];
	uint64_t size;
	struct bin b;
	char fifo[128];

	snprintf(fifo, sizeof(fifo), "%s", in_dir("fifo"));
	assert_int_equal(mkfifo(fifo, 0700), 0);
	assert_int_equal(ms_elf_open(fifo), -ENOEXEC);
	assert_true(ms_elf_build_id(fifo, id, sizeof(id)) < 0);
	assert_true(ms_elf_first_load(fifo, 0, &size) < 0);
	memset(&b, 0, sizeof(b));
	b.path = fifo;
	ms_bin_read_segments(&b);
	assert_int_equal(b.state, -1);               /* quietly unusable, like any file that is not ELF */
	unlink(fifo);
}

static void regular_file_not_elf_refused(void **state)
{
	const char *shadow = in_dir("shadow");
	unsigned char id[64];
	FILE *f = fopen(shadow, "w");

	assert_non_null(f);
	fputs("root:$6$salt$hash:19000:0:99999:7:::\n", f);
	fclose(f);
	assert_int_equal(chmod(shadow, 0600), 0);
	assert_int_equal(ms_elf_open(shadow), -ENOEXEC);
	assert_true(ms_elf_build_id(shadow, id, sizeof(id)) < 0);
	unlink(shadow);
}

/*
 * Regular files under /sys on file systems other than sysfs (cgroup's),
 * and under /dev (a tmpfs, /dev/shm), named another way or through a
 * link: refused before they are opened, as those places are.
 */
static void sys_and_dev_files_refused_through_links(void **state)
{
	static const char *const cgroup[] = { "/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/memory/memory.stat",
					      "/sys/fs/cgroup/unified/cgroup.controllers" };
	const char *link = in_dir("cglink");
	char twice[4200], shm[64];
	int fd, checked = 0;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cgroup) / sizeof(cgroup[0]); i++) {
		if (access(cgroup[i], R_OK))
			continue;
		snprintf(twice, sizeof(twice), "/%s", cgroup[i]);
		assert_int_equal(ms_elf_open(twice), -EPERM);
		assert_int_equal(symlink(cgroup[i], link), 0);
		assert_int_equal(ms_elf_open(link), -EPERM);
		unlink(link);
		checked++;
	}
	snprintf(shm, sizeof(shm), "/dev/shm/ms-test-elf.%d", (int)getpid());
	unlink(shm);
	if ((fd = open(shm, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0) {
		assert_int_equal(write(fd, "\177ELF", 4), 4);
		close(fd);
		assert_int_equal(symlink(shm, link), 0);
		assert_int_equal(ms_elf_open(link), -EPERM);
		unlink(link);
		unlink(shm);
		checked++;
	}
	if (!checked) {
		fprintf(stderr, "skipped: no cgroup file under /sys/fs/cgroup and no /dev/shm to name\n");
		skip();
	}
}

static void proc_sys_dev_refused(void **state)
{
	const char *link = in_dir("environ");

	assert_int_equal(ms_elf_open("/proc/self/exe"), -EPERM);   /* an ELF file behind it, all the same */
	assert_int_equal(ms_elf_open("/proc"), -EPERM);
	assert_int_equal(ms_elf_open("/sys/kernel/notes"), -EPERM);
	assert_int_equal(ms_elf_open("/dev/null"), -EPERM);
	/* A link elsewhere to a file of /proc: the descriptor's file system says where it is. */
	assert_int_equal(symlink("/proc/self/environ", link), 0);
	assert_int_equal(ms_elf_open(link), -EPERM);
	unlink(link);
	/*
	 * Named another way, or through a link, a place is refused before it
	 * is opened: a device there would be -ENOEXEC (not a regular file)
	 * had its name not been seen through.
	 */
	assert_int_equal(ms_elf_open("//dev/null"), -EPERM);
	assert_int_equal(ms_elf_open("/tmp/../dev/null"), -EPERM);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(ms_elf_open(link), -EPERM);
	unlink(link);
	assert_int_equal(ms_elf_open("//proc/self/exe"), -EPERM);
	assert_int_equal(ms_elf_open(in_dir("missing")), -ENOENT);
}

static void real_elf_opens(void **state)
{
	char exe[4096];
	unsigned char magic[4], id[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;
	uint64_t size = 0;
	struct bin b;
	int fd;

	assert_true(n > 0);
	exe[n] = '\0';
	fd = ms_elf_open(exe);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, magic, 4), 4);
	assert_memory_equal(magic, "\177ELF", 4);
	close(fd);
	assert_true(ms_elf_build_id(exe, id, sizeof(id)) > 0);
	assert_int_equal(stat(exe, &st), 0);
	assert_int_equal(ms_elf_first_load(exe, st.st_ino, &size), 0);
	assert_true(size > 0 && size % 4096 == 0);
	assert_int_equal(ms_elf_first_load(exe, st.st_ino + 1, &size), -ESTALE);
	memset(&b, 0, sizeof(b));
	b.path = exe;
	ms_bin_read_segments(&b);
	assert_int_equal(b.state, 1);
	assert_true(b.nr_segs >= 2 && b.lo < b.hi);
	free(b.segs);
	ms_bin_elf_release(&b);
}

/* The descriptors this process has open. */
static int open_fds(void)
{
	char p[64];
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n += !access(p, F_OK);
	}
	return n;
}

/*
 * The descriptor a binary's segments were read from is the one its names
 * and unwinding take, not opened again; past 512 binaries so held,
 * segments come from a file opened and closed for them (a report of
 * thousands of binaries must not run out of descriptors), the same
 * segments.
 */
/*
 * The program headers read with the magic where they lie in the file's
 * first 4 KiB, and from the file where they do not: a copy of this test
 * binary with its headers moved past its end has the same segments.
 */
static void segments_wherever_the_headers_lie(void **state)
{
	char exe[4096], moved[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct bin a = { 0 }, m = { 0 };
	Elf64_Ehdr eh;
	unsigned char *ph;
	struct stat st;
	size_t len;
	int in, out;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(moved, sizeof(moved), "%s", in_dir("moved"));
	assert_true((in = open(exe, O_RDONLY)) >= 0);
	assert_true((out = open(moved, O_RDWR | O_CREAT | O_TRUNC, 0600)) >= 0);
	assert_int_equal(fstat(in, &st), 0);
	assert_true(st.st_size > 8192);
	assert_int_equal(copy_file_range(in, NULL, out, NULL, (size_t)st.st_size, 0), st.st_size);
	assert_int_equal(pread(in, &eh, sizeof(eh), 0), sizeof(eh));
	assert_true(eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize <= 4096);   /* as nearly every binary */
	len = (size_t)eh.e_phnum * eh.e_phentsize;
	assert_non_null(ph = malloc(len));
	assert_int_equal(pread(in, ph, len, (off_t)eh.e_phoff), (ssize_t)len);
	eh.e_phoff = (uint64_t)st.st_size;             /* the headers after the last byte */
	assert_int_equal(pwrite(out, ph, len, st.st_size), (ssize_t)len);
	assert_int_equal(pwrite(out, &eh, sizeof(eh), 0), sizeof(eh));
	close(in);
	close(out);
	free(ph);
	elf_version(EV_CURRENT);
	assert_non_null(a.path = strdup(exe));
	assert_non_null(m.path = strdup(moved));
	ms_bin_read_segments(&a);
	ms_bin_read_segments(&m);
	assert_int_equal(a.state, 1);
	assert_int_equal(m.state, 1);
	assert_true(a.nr_segs >= 2);
	assert_int_equal(m.nr_segs, a.nr_segs);
	assert_memory_equal(m.segs, a.segs, a.nr_segs * sizeof(*a.segs));
	ms_bin_elf_release(&a);
	ms_bin_elf_release(&m);
	free(a.segs);
	free(m.segs);
	free(a.path);
	free(m.path);
	unlink(moved);
}

/* A bin of path from its file as opened ahead (symbols/preopen.h): its descriptor, head and ELF made there. */
static void from_ahead(struct bin *b, const char *file)
{
	unsigned char head[MS_ELF_HEAD];
	bool written = true;
	size_t len = 0;
	Elf *made;
	int fd;

	memset(b, 0, sizeof(*b));
	assert_non_null(b->path = strdup(file));
	fd = ms_elf_open_head(file, head, sizeof(head), &len);
	assert_true(fd >= 0);
	made = ms_bin_elf_ahead(fd, &written);
	assert_non_null(made);
	ms_bin_segments_from(b, fd, head, len, made, written);
}

/* Past HELD_MAX descriptors held, an ELF made ahead is ended and its descriptor closed, as one read would be. */
static void past_held_ended(const char *exe)
{
	struct bin b;

	from_ahead(&b, exe);
	assert_int_equal(b.state, 1);
	assert_int_equal(b.elf_state, 0);
	assert_null(b.elf);
	assert_int_equal(b.seg_fd, 0);
	free(b.segs);
	free(b.path);
}

/*
 * A binary's ELF made ahead is the one ms_bin_elf() then gives, with no
 * open more, and is let go with the binary; one with no PT_LOAD (an
 * object file) is ended at once, its descriptor closed.
 */
static void elf_made_ahead(void **state)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	Elf64_Ehdr rel = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
			   .e_type = ET_REL, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			   .e_ehsize = sizeof(Elf64_Ehdr) };
	const char *obj = in_dir("obj.o");
	int fds = open_fds();
	struct bin b;
	Elf *elf;
	FILE *f;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	elf_version(EV_CURRENT);
	from_ahead(&b, exe);
	assert_int_equal(b.state, 1);
	assert_int_equal(b.elf_state, 1);
	assert_non_null(b.elf);
	assert_false(b.elf_written);
	assert_int_equal(open_fds(), fds + 1);
	assert_int_equal(ms_bin_elf(&b, &elf), 0);
	assert_ptr_equal(elf, b.elf);
	assert_int_equal(open_fds(), fds + 1);
	ms_bin_elf_release(&b);
	assert_int_equal(open_fds(), fds);
	free(b.segs);
	free(b.path);
	assert_non_null(f = fopen(obj, "w"));
	assert_int_equal(fwrite(&rel, sizeof(rel), 1, f), 1);
	assert_int_equal(fclose(f), 0);
	from_ahead(&b, obj);
	assert_int_equal(b.state, -1);
	assert_int_equal(b.elf_state, 0);
	assert_int_equal(open_fds(), fds);
	free(b.segs);
	free(b.path);
	unlink(obj);
}

static void segments_keep_the_file(void **state)
{
	enum { N = 530 };
	char exe[4096], name[32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct bin *b = calloc(N, sizeof(*b));
	int i, fds, held = 0;
	Elf *elf;

	assert_true(n > 0 && b);
	exe[n] = '\0';
	elf_version(EV_CURRENT);
	fds = open_fds();
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "link%d", i);
		assert_int_equal(symlink(exe, in_dir(name)), 0);
		assert_non_null(b[i].path = strdup(path));
		ms_bin_read_segments(&b[i]);
		assert_int_equal(b[i].state, 1);
		assert_int_equal(b[i].nr_segs, b[0].nr_segs);
		assert_memory_equal(b[i].segs, b[0].segs, b[0].nr_segs * sizeof(*b->segs));
		held += b[i].seg_fd != 0;
		assert_int_equal(b[i].elf_state, 0);        /* nothing mapped until names ask */
	}
	assert_int_equal(held, 512);
	assert_int_equal(open_fds(), fds + 512);
	assert_int_equal(ms_bin_elf(&b[0], &elf), 0);       /* the descriptor kept: none more */
	assert_ptr_equal(elf, b[0].elf);
	assert_int_equal(b[0].seg_fd, 0);
	assert_int_equal(open_fds(), fds + 512);
	assert_int_equal(ms_bin_elf(&b[N - 1], &elf), 0);   /* not kept: opened now */
	assert_int_equal(open_fds(), fds + 513);
	past_held_ended(exe);
	assert_int_equal(open_fds(), fds + 513);
	for (i = 0; i < N; i++) {
		ms_bin_elf_release(&b[i]);
		free(b[i].segs);
		free(b[i].path);
		snprintf(name, sizeof(name), "link%d", i);
		unlink(in_dir(name));
	}
	assert_int_equal(open_fds(), fds);
	free(b);
}

/* A binary's file is opened once whoever asks (its symbols, its unwinder), each of those holding a reference of its own. */
static void bin_file_opened_once(void **state)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *shadow = in_dir("notelf");
	FILE *f = fopen(shadow, "w");
	Elf *e1 = NULL, *e2 = NULL, *ref;
	struct bin b, bad;
	GElf_Ehdr eh;

	assert_true(n > 0);
	exe[n] = '\0';
	elf_version(EV_CURRENT);
	memset(&b, 0, sizeof(b));
	b.path = exe;
	assert_int_equal(ms_bin_elf(&b, &e1), 0);
	assert_int_equal(ms_bin_elf(&b, &e2), 0);
	assert_non_null(e1);
	assert_ptr_equal(e1, e2);
	ref = ms_bin_elf_ref(e1);
	assert_ptr_equal(ref, e1);
	ms_bin_elf_release(&b);
	assert_non_null(gelf_getehdr(ref, &eh));   /* the reference outlives the bin's own */
	elf_end(ref);
	assert_null(b.elf);
	/* Not ELF: refused once, saying why, and not tried again. */
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	memset(&bad, 0, sizeof(bad));
	bad.path = (char *)shadow;
	assert_int_equal(ms_bin_elf(&bad, &e1), -ENOEXEC);
	unlink(shadow);
	assert_int_equal(ms_bin_elf(&bad, &e1), -ENOEXEC);
	assert_int_equal(bad.elf_state, -ENOEXEC);
	ms_bin_elf_release(&bad);
	/* Gone: open()'s errno. */
	memset(&bad, 0, sizeof(bad));
	bad.path = (char *)shadow;
	assert_int_equal(ms_bin_elf(&bad, &e1), -ENOENT);
	ms_bin_elf_release(&bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fifo_refused_without_blocking),
		cmocka_unit_test(regular_file_not_elf_refused),
		cmocka_unit_test(proc_sys_dev_refused),
		cmocka_unit_test(real_elf_opens),
		cmocka_unit_test(bin_file_opened_once),
		cmocka_unit_test(segments_keep_the_file),
		cmocka_unit_test(elf_made_ahead),
		cmocka_unit_test(segments_wherever_the_headers_lie),
		cmocka_unit_test(sys_and_dev_files_refused_through_links),
	};
	int rc;

	alarm(60);                           /* a FIFO opened for reading would block for ever */
	snprintf(dir, sizeof(dir), "/tmp/test_elf.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
