/*
 * glibc's version from the banner in a libc's .rodata (libcver.c): the
 * libc this test runs on against gnu_get_libc_version(), and files a
 * recording may name instead: an ELF with no banner, a banner in a file
 * that is not ELF, a FIFO, and a .rodata larger than it reads.
 */
#include <elf.h>
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
#include <gnu/libc-version.h>

#include "symbols/libcver.h"

static char dir[64];
static char path[128];

static const char *in_dir(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* The libc.so.6 this test runs on, from its own maps: into buf, or "" where none is mapped. */
static void own_libc(char *buf, size_t len)
{
	char line[4608], *p;
	FILE *f = fopen("/proc/self/maps", "r");

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if ((p = strchr(line, '/')) && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(buf, len, "%s", p);
			break;
		}
	if (f)
		fclose(f);
}

static void glibc_minor_read_from_the_banner(void **state)
{
	const char *banner = in_dir("libc.so.6");
	char libc[4096];
	FILE *f;

	own_libc(libc, sizeof(libc));
	if (!libc[0])
		skip();
	/* glibc says which it is: 2.NN */
	assert_int_equal(ms_elf_glibc_minor(libc), atoi(strchr(gnu_get_libc_version(), '.') + 1));
	/* ELF, with no banner: built with -nostdlib. */
	assert_int_equal(ms_elf_glibc_minor(SYMGAPS_FIXTURE), -1);
	/* The banner in a file that is not ELF is not read: a recording names any path. */
	assert_non_null(f = fopen(banner, "w"));
	fputs("GNU C Library (Debian GLIBC 2.36-9) stable release version 2.36.\n", f);
	fclose(f);
	assert_int_equal(ms_elf_glibc_minor(banner), -1);
	unlink(banner);
	/* A FIFO by that name: not opened for reading, which would block. */
	assert_int_equal(mkfifo(banner, 0700), 0);
	assert_int_equal(ms_elf_glibc_minor(banner), -1);
	unlink(banner);
	assert_int_equal(ms_elf_glibc_minor(in_dir("gone.so")), -1);
	(void)state;
}

/* The whole of file f into a buffer of *len bytes (the caller frees it), or NULL. */
static unsigned char *slurp(const char *f, size_t *len)
{
	struct stat st;
	unsigned char *b;
	int fd = open(f, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || !(b = malloc((size_t)st.st_size)) ||
	    read(fd, b, (size_t)st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/*
 * A copy of the libc whose .rodata says it is 64 MiB, the file made as
 * long (sparse): its banner is still in its first bytes, but it is not
 * read, as no section over 16 MiB is. libelf reads a section whole.
 */
static void rodata_too_large_not_read(void **state)
{
	const char *copy = in_dir("big-libc.so.6");
	unsigned char *b;
	char libc[4096];
	size_t len, i;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	int fd;

	(void)state;
	own_libc(libc, sizeof(libc));
	if (!libc[0] || !(b = slurp(libc, &len)))
		skip();
	eh = (Elf64_Ehdr *)b;
	assert_true(eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) <= len);
	sh = (Elf64_Shdr *)(b + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp((const char *)b + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name, ".rodata"))
			break;
	assert_true(i < eh->e_shnum);
	sh[i].sh_size = 64u << 20;
	assert_true((fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	assert_int_equal(ftruncate(fd, (off_t)(sh[i].sh_offset + sh[i].sh_size)), 0);
	close(fd);
	free(b);
	assert_int_equal(ms_elf_glibc_minor(copy), -1);
	unlink(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(glibc_minor_read_from_the_banner),
		cmocka_unit_test(rodata_too_large_not_read),
	};
	int rc;

	alarm(60);                           /* a FIFO opened for reading would block for ever */
	snprintf(dir, sizeof(dir), "/tmp/test_libcver.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
