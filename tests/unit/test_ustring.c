/*
 * mapscope:user_string: a sample's layout (8-byte aligned, the string at
 * its __data_loc), strings read from the stack copy before the process's
 * memory (the stack as it was at the call wins), and paths made absolute
 * as d_path prints them: "." and ".." dropped, relative to the working
 * directory or an open directory (a fake /proc), links in the directory
 * resolved.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/ustring.h"

static void test_encode(void **state)
{
	unsigned char rec[256] __attribute__((aligned(8)));
	struct perf_event_header h;
	uint32_t raw_size, arg, loc;
	uint64_t id;
	size_t n = ms_ustring_encode(77, 10, 11, 12345, 2, "/tmp/a b", rec, sizeof(rec));

	(void)state;
	assert_true(n > 0);
	assert_int_equal(n % 8, 0);
	memcpy(&h, rec, sizeof(h));
	assert_int_equal(h.type, PERF_RECORD_SAMPLE);
	assert_int_equal(h.size, n);
	memcpy(&id, rec + 8, 8);
	assert_true(id == MS_USTRING_ID);
	memcpy(&raw_size, rec + 48, 4);
	assert_int_equal(52 + raw_size, n);
	memcpy(&arg, rec + 52 + 8, 4);
	memcpy(&loc, rec + 52 + 12, 4);
	assert_int_equal(arg, 2);
	assert_int_equal(loc >> 16, strlen("/tmp/a b") + 1);
	assert_string_equal((const char *)rec + 52 + (loc & 0xffff), "/tmp/a b");
	assert_int_equal(ms_ustring_encode(77, 10, 11, 1, 1, "/tmp/a b", rec, 40), 0);   /* no room */
}

static void test_format(void **state)
{
	struct ms_buf b;

	(void)state;
	ms_buf_init(&b);
	ms_ustring_format(65534, &b);
	ms_buf_append(&b, "", 1);
	assert_non_null(strstr((const char *)b.data, "name: user_string\nID: 65534\n"));
	assert_non_null(strstr((const char *)b.data, "field:__data_loc char[] str;\toffset:12;\tsize:4;"));
	ms_buf_release(&b);
}

static void test_read(void **state)
{
	static const char live[] = "in-memory";
	unsigned char stack[64];
	uint64_t sp = 0x7000;
	char out[32];

	(void)state;
	memset(stack, 'x', sizeof(stack));
	memcpy(stack + 16, "on-the-stack", 13);
	assert_int_equal(ms_ustring_read(getpid(), sp + 16, stack, sp, sizeof(stack), out, sizeof(out)), 0);
	assert_string_equal(out, "on-the-stack");
	/* Not on the stack copy (or no NUL there): the process's memory, here our own. */
	assert_int_equal(ms_ustring_read(getpid(), (uint64_t)(uintptr_t)live, stack, sp, sizeof(stack), out,
					 sizeof(out)), 0);
	assert_string_equal(out, "in-memory");
	assert_int_equal(ms_ustring_read(getpid(), (uint64_t)(uintptr_t)live, NULL, 0, 0, out, 4), -ENAMETOOLONG);
	assert_int_equal(ms_ustring_read(getpid(), 0, NULL, 0, 0, out, sizeof(out)), -EFAULT);
}

static void test_path(void **state)
{
	char root[] = "/tmp/ms-ustring-XXXXXX", p[PATH_MAX], want[PATH_MAX], out[PATH_MAX], *real;

	(void)state;
	assert_non_null(mkdtemp(root));
	real = realpath(root, NULL);          /* /tmp may itself be a link */
	assert_non_null(real);
	snprintf(p, sizeof(p), "%s/dir", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/link", root);
	assert_int_equal(symlink("dir", p), 0);
	snprintf(p, sizeof(p), "mkdir -p %s/proc/7/task/8 %s/proc/7/fd", root, root);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/proc/7/task/8/cwd", root);
	assert_int_equal(symlink(real, p), 0);
	snprintf(p, sizeof(p), "%s/proc/7/fd/5", root);
	snprintf(want, sizeof(want), "%s/dir", real);
	assert_int_equal(symlink(want, p), 0);
	snprintf(p, sizeof(p), "%s/proc", root);

	assert_int_equal(ms_ustring_path(p, 7, 8, AT_FDCWD, "/a//b/./c/../d", out, sizeof(out)), 0);
	assert_string_equal(out, "/a/b/d");         /* no such directory: "." and ".." dropped */
	assert_int_equal(ms_ustring_path(p, 7, 8, AT_FDCWD, "link/f", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/dir/f", real);
	assert_string_equal(out, want);             /* the working directory's, the link resolved */
	assert_int_equal(ms_ustring_path(p, 7, 8, 5, "../dir/./g", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/dir/g", real);
	assert_string_equal(out, want);             /* the open directory's */
	assert_int_equal(ms_ustring_path(p, 7, 8, 6, "g", out, sizeof(out)), -ENOENT);
	/* Empty: read after the call ran, its memory used again. Not the working directory's name. */
	assert_int_equal(ms_ustring_path(p, 7, 8, AT_FDCWD, "", out, sizeof(out)), -ENOENT);
	assert_int_equal(ms_ustring_path(p, 7, 8, AT_FDCWD, "/../..", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	snprintf(p, sizeof(p), "rm -rf %s", root);
	assert_int_equal(system(p), 0);
	free(real);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
