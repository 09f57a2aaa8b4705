/*
 * The user's cache folders: the environment's absolute path, none for
 * "off" or a relative one, else under $XDG_CACHE_HOME or ~/.cache; made
 * 0700 with the folders above; and a folder others may write, or not a
 * folder, is not one to use.
 */
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

#include "util/cachedir.h"

static void where(void **state)
{
	char buf[256];

	(void)state;
	setenv("MS_TEST_CACHE", "/some/where", 1);
	assert_true(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, sizeof(buf)));
	assert_string_equal(buf, "/some/where");
	setenv("MS_TEST_CACHE", "off", 1);
	assert_false(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, sizeof(buf)));
	setenv("MS_TEST_CACHE", "relative", 1);
	assert_false(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, sizeof(buf)));
	unsetenv("MS_TEST_CACHE");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	assert_true(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, sizeof(buf)));
	assert_string_equal(buf, "/xdg/mapscope/leaf");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/someone", 1);
	assert_true(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, sizeof(buf)));
	assert_string_equal(buf, "/home/someone/.cache/mapscope/leaf");
	assert_false(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, 10));   /* too long for buf */
	unsetenv("HOME");
	assert_false(ms_cachedir_path("MS_TEST_CACHE", "leaf", buf, sizeof(buf)));
}

static void made_and_owned(void **state)
{
	char top[] = "/tmp/ms-cachedir.XXXXXX", path[256], file[300], cmd[300];
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(path, sizeof(path), "%s/a/b/c", top);
	assert_false(ms_cachedir_own(path));
	assert_true(ms_cachedir_make(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_true(ms_cachedir_own(path));
	assert_int_equal(chmod(path, 0770), 0);
	assert_false(ms_cachedir_own(path));    /* its group may write it */
	assert_false(ms_cachedir_make(path));
	snprintf(file, sizeof(file), "%s/file", top);
	assert_non_null(f = fopen(file, "w"));
	fclose(f);
	assert_false(ms_cachedir_own(file));    /* not a folder */
	assert_false(ms_cachedir_make(file));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(where),
		cmocka_unit_test(made_and_owned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
