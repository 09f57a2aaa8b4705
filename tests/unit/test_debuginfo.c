/*
 * .gnu_debuglink: the debug file is found beside the binary, in its
 * .debug folder, or under /usr/lib/debug by its folder, in that order;
 * taken only if it is the binary's (its build-id, or the link's CRC where
 * the binary has no build-id); never a path the link smuggles in, never
 * the binary itself, never what is not an ELF file.
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

#include <zlib.h>

#include "symbols/internal.h"

static char dir[] = "/tmp/ms-debuginfo.XXXXXX", self[4096], prog[4200], beside[4200], dotdebug[4200];
static unsigned char id[64];
static int id_len;
static uint32_t crc;

static void copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

static uint32_t crc_of(const char *path)
{
	char buf[65536];
	uLong c = crc32(0, NULL, 0);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, (const Bytef *)buf, (uInt)n);
	close(fd);
	return (uint32_t)c;
}

/* The path found for prog's link, or NULL. */
static char *find(const char *link, uint32_t want_crc, const unsigned char *want_id, size_t len)
{
	char *found = NULL;
	int fd = ms_debuglink_find(prog, link, want_crc, want_id, len, &found);

	if (fd < 0) {
		assert_null(found);
		return NULL;
	}
	close(fd);
	return found;
}

static void found_in_order_by_build_id(void **state)
{
	char *p;

	(void)state;
	copy(self, dotdebug);
	p = find("prog.debug", 0, id, (size_t)id_len);
	assert_non_null(p);
	assert_string_equal(p, dotdebug);            /* its .debug folder */
	free(p);
	copy(self, beside);
	p = find("prog.debug", 0, id, (size_t)id_len);
	assert_string_equal(p, beside);              /* beside it comes first */
	free(p);
	unlink(beside);
}

static void another_binarys_refused(void **state)
{
	unsigned char other[20] = { 1, 2, 3 };
	char *p;

	(void)state;
	copy(self, dotdebug);
	assert_null(find("prog.debug", 0, other, sizeof(other)));     /* another build-id */
	assert_null(find("prog.debug", crc ^ 1, NULL, 0));            /* no build-id: the CRC decides */
	p = find("prog.debug", crc, NULL, 0);
	assert_string_equal(p, dotdebug);
	free(p);
}

static void links_that_are_not_names_refused(void **state)
{
	(void)state;
	copy(self, dotdebug);
	assert_null(find(".debug/prog.debug", 0, id, (size_t)id_len));   /* a path, not a name */
	assert_null(find("", 0, id, (size_t)id_len));
	assert_null(find(NULL, 0, id, (size_t)id_len));
	copy(self, prog);
	assert_null(find("prog", 0, id, (size_t)id_len));                /* the binary itself */
	unlink(prog);
	assert_int_equal(mkfifo(beside, 0600), 0);                       /* not ELF: skipped, never blocks */
	unlink(dotdebug);
	assert_null(find("prog.debug", 0, id, (size_t)id_len));
	unlink(beside);
}

static int setup(void **state)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	if (n <= 0 || !mkdtemp(dir))
		return -1;
	self[n] = '\0';
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(beside, sizeof(beside), "%s/prog.debug", dir);
	snprintf(dotdebug, sizeof(dotdebug), "%s/.debug", dir);
	if (mkdir(dotdebug, 0755))
		return -1;
	strcat(dotdebug, "/prog.debug");
	id_len = ms_elf_build_id(self, id, sizeof(id));
	crc = crc_of(self);
	return id_len > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char d[4200];

	(void)state;
	unlink(dotdebug);
	unlink(beside);
	unlink(prog);
	snprintf(d, sizeof(d), "%s/.debug", dir);
	rmdir(d);
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_in_order_by_build_id),
		cmocka_unit_test(another_binarys_refused),
		cmocka_unit_test(links_that_are_not_names_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
