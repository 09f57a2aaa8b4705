/*
 * The namer's answers on disk: what is put and saved is got back by the
 * next run, under its config only; a save with nothing new writes
 * nothing; runs add to what the file holds; a file that is damaged,
 * another's or writable by others is taken for none and written again;
 * and a binary's key moves with what its names depend on (its state, its
 * build-id, the file itself, a debug file that appears or goes).
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

#include "symbols/namecache.h"

static char dir[] = "/tmp/ms-namecache.XXXXXX";

static struct ms_namekey key_of(uint64_t seed, uint64_t w)
{
	struct ms_namekey k;

	ms_namekey_init(&k, seed);
	ms_namekey_word(&k, w);
	return ms_namekey_done(&k);
}

static bool same_key(struct ms_namekey a, struct ms_namekey b)
{
	return a.a == b.a && a.b == b.b;
}

/* The one cache file in dir: its path into out; false where there is none. */
static bool the_file(char *out, size_t len)
{
	char cmd[256];
	FILE *p;
	bool ok;

	snprintf(cmd, sizeof(cmd), "ls %s/*.names 2>/dev/null | head -1", dir);
	p = popen(cmd, "r");
	ok = p && fgets(out, (int)len, p);
	if (p)
		pclose(p);
	if (ok)
		out[strcspn(out, "\n")] = '\0';
	return ok;
}

static void remove_files(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*.names %s/*.tmp", dir, dir);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	setenv("MAPSCOPE_NAME_CACHE", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

/* Words in another order, strings cut in another place, another seed: other keys. */
static void keys(void **state)
{
	struct ms_namekey a, b;

	(void)state;
	assert_true(same_key(key_of(1, 2), key_of(1, 2)));
	assert_false(same_key(key_of(1, 2), key_of(2, 2)));
	assert_false(same_key(key_of(1, 2), key_of(1, 3)));
	ms_namekey_init(&a, 0);
	ms_namekey_str(&a, "ab");
	ms_namekey_str(&a, "c");
	ms_namekey_init(&b, 0);
	ms_namekey_str(&b, "a");
	ms_namekey_str(&b, "bc");
	assert_false(same_key(ms_namekey_done(&a), ms_namekey_done(&b)));
	ms_namekey_init(&a, 0);
	ms_namekey_word(&a, 1);
	ms_namekey_word(&a, 2);
	ms_namekey_init(&b, 0);
	ms_namekey_word(&b, 2);
	ms_namekey_word(&b, 1);
	assert_false(same_key(ms_namekey_done(&a), ms_namekey_done(&b)));
	ms_namekey_init(&a, 0);
	assert_true(ms_namecache_self_id(&a));       /* the test is built with a build-id, as Debian builds */
}

/* "off", a relative path: no cache. */
static void off(void **state)
{
	struct ms_namekey config = key_of(7, 7);

	(void)state;
	setenv("MAPSCOPE_NAME_CACHE", "off", 1);
	assert_null(ms_namecache_open(&config));
	setenv("MAPSCOPE_NAME_CACHE", "relative/dir", 1);
	assert_null(ms_namecache_open(&config));
	setenv("MAPSCOPE_NAME_CACHE", dir, 1);
}

/* Put, saved, got back by the next run under the same config, and by no other. */
static void saved_and_got(void **state)
{
	struct ms_namekey config = key_of(1, 1), other = key_of(1, 2), k1 = key_of(3, 1), k2 = key_of(3, 2);
	struct ms_namecache *c;
	const char *got;
	size_t len;

	(void)state;
	remove_files();
	assert_non_null(c = ms_namecache_open(&config));
	assert_null(ms_namecache_get(c, &k1, &len));
	assert_int_equal(ms_namecache_put(c, &k1, "first\0answer", 12), 0);
	assert_int_equal(ms_namecache_put(c, &k2, "", 0), 0);
	assert_null(ms_namecache_get(c, &k1, &len));     /* this run's answers are the file's only once saved */
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);

	assert_non_null(c = ms_namecache_open(&config));
	assert_non_null(got = ms_namecache_get(c, &k1, &len));
	assert_int_equal(len, 12);
	assert_memory_equal(got, "first\0answer", 12);
	assert_non_null(ms_namecache_get(c, &k2, &len));
	assert_int_equal(len, 0);
	ms_namecache_free(c);

	assert_non_null(c = ms_namecache_open(&other));
	assert_null(ms_namecache_get(c, &k1, &len));
	ms_namecache_free(c);
}

/* A run that put nothing writes nothing; a run that put more keeps what was there with it. */
static void runs_add(void **state)
{
	struct ms_namekey config = key_of(2, 1), k;
	struct ms_namecache *c;
	struct stat before, after;
	char path[4096], answer[32];
	const char *got;
	size_t len;
	int i;

	(void)state;
	remove_files();
	for (i = 0; i < 300; i++) {        /* a run each, of one answer: the table grows across them */
		assert_non_null(c = ms_namecache_open(&config));
		k = key_of(9, (uint64_t)i);
		snprintf(answer, sizeof(answer), "answer %d", i);
		assert_int_equal(ms_namecache_put(c, &k, answer, strlen(answer) + 1), 0);
		assert_int_equal(ms_namecache_save(c), 0);
		assert_int_equal(ms_namecache_save(c), 0);    /* the second: nothing new */
		ms_namecache_free(c);
	}
	assert_true(the_file(path, sizeof(path)));
	assert_int_equal(stat(path, &before), 0);
	assert_non_null(c = ms_namecache_open(&config));
	for (i = 0; i < 300; i++) {
		k = key_of(9, (uint64_t)i);
		snprintf(answer, sizeof(answer), "answer %d", i);
		assert_non_null(got = ms_namecache_get(c, &k, &len));
		assert_string_equal(got, answer);
	}
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);      /* not written again */
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

/* The file's bytes changed at off to v (len bytes), or cut to len where off is -1. */
static void damage(const char *path, long off, const void *v, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	if (off < 0)
		assert_int_equal(ftruncate(fd, (off_t)len), 0);
	else
		assert_int_equal(pwrite(fd, v, len, off), (ssize_t)len);
	close(fd);
}

/* One answer saved under config, and the file's path. */
static void one_saved(const struct ms_namekey *config, const struct ms_namekey *k, char *path, size_t len)
{
	struct ms_namecache *c;

	remove_files();
	assert_non_null(c = ms_namecache_open(config));
	assert_int_equal(ms_namecache_put(c, k, "kept", 5), 0);
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_true(the_file(path, len));
}

/* Whether the next run finds k's answer, and where it does not, that it writes a whole file again. */
static bool found_then_mended(const struct ms_namekey *config, const struct ms_namekey *k)
{
	struct ms_namecache *c = ms_namecache_open(config);
	bool found;
	size_t len;

	assert_non_null(c);
	found = ms_namecache_get(c, k, &len) != NULL;
	if (!found) {
		assert_int_equal(ms_namecache_put(c, k, "kept", 5), 0);
		assert_int_equal(ms_namecache_save(c), 0);
	}
	ms_namecache_free(c);
	if (!found) {
		assert_non_null(c = ms_namecache_open(config));
		assert_non_null(ms_namecache_get(c, k, &len));
		ms_namecache_free(c);
	}
	return found;
}

/*
 * Cut short, its magic changed, a slot pointing past the file, group-
 * writable: each is taken for no file, and the run writes a whole one.
 */
static void damaged_files(void **state)
{
	struct ms_namekey config = key_of(4, 1), k = key_of(5, 1);
	uint32_t far = 0x7fffffff;
	char path[4096];
	struct stat st;
	long slots = 8 + 16 + 8 + 8 + 8;  /* the header's size: magic, config, nslots, nused, heap_len */
	int i;

	(void)state;
	one_saved(&config, &k, path, sizeof(path));
	assert_true(found_then_mended(&config, &k));
	damage(path, -1, NULL, 20);
	assert_false(found_then_mended(&config, &k));
	one_saved(&config, &k, path, sizeof(path));
	damage(path, 0, "XXXX", 4);
	assert_false(found_then_mended(&config, &k));
	one_saved(&config, &k, path, sizeof(path));
	for (i = 0; i < 64; i++)          /* every slot's answer offset (its slots are 24 bytes: a, b, off, len) */
		damage(path, slots + (long)i * 24 + 16, &far, 4);
	assert_false(found_then_mended(&config, &k));
	one_saved(&config, &k, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(chmod(path, st.st_mode | S_IWGRP), 0);
	assert_false(found_then_mended(&config, &k));
}

/* An answer over 1 MiB is not kept. */
static void too_big(void **state)
{
	struct ms_namekey config = key_of(6, 1), k = key_of(6, 2);
	struct ms_namecache *c;
	char *big = calloc(1, (1u << 20) + 1);

	(void)state;
	assert_non_null(big);
	assert_non_null(c = ms_namecache_open(&config));
	assert_int_equal(ms_namecache_put(c, &k, big, (1u << 20) + 1), -E2BIG);
	ms_namecache_free(c);
	free(big);
}

static struct ms_namekey bin_key(const char *path, int state, const unsigned char *id, size_t id_len)
{
	struct ms_namekey k;

	assert_true(ms_namecache_bin_key(&k, path, state, id, id_len, NULL, 0));
	return k;
}

/*
 * A binary's key: the same for the same file, another for another state
 * or build-id; with no build-id, another once the file changes; and
 * another once the debug file its .gnu_debuglink names appears beside it.
 */
static void binary_keys(void **state)
{
	char bin[256], dbg[256], cmd[2048];
	const unsigned char id[20] = { 1, 2, 3 };
	struct ms_namekey k0, k1;

	(void)state;
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", dir);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s && objcopy --only-keep-debug %s %s && "
		 "objcopy --strip-debug --add-gnu-debuglink=%s %s && mv %s %s.away", (int)getpid(), bin, bin, dbg,
		 dbg, bin, dbg, dbg);
	if (system(cmd)) {
		skip();                         /* no objcopy (binutils) */
		return;
	}
	k0 = bin_key(bin, 2, NULL, 0);
	assert_true(same_key(k0, bin_key(bin, 2, NULL, 0)));
	assert_false(same_key(k0, bin_key(bin, -2, NULL, 0)));
	assert_false(same_key(k0, bin_key(bin, 2, id, sizeof(id))));
	/* The debug file its link names, put beside it: the names may now have lines. */
	snprintf(cmd, sizeof(cmd), "mv %s.away %s", dbg, dbg);
	assert_int_equal(system(cmd), 0);
	k1 = bin_key(bin, 2, NULL, 0);
	assert_false(same_key(k0, k1));
	assert_true(same_key(k1, bin_key(bin, 2, NULL, 0)));
	/* With the recording's build-id, the same file's key moves with its debug file too. */
	k0 = bin_key(bin, 2, id, sizeof(id));
	assert_int_equal(unlink(dbg), 0);
	assert_false(same_key(k0, bin_key(bin, 2, id, sizeof(id))));
	/* And with the file: stripped, a binary keeps its build-id and loses its symbols. */
	k0 = bin_key(bin, 2, id, sizeof(id));
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all %s", bin);
	assert_int_equal(system(cmd), 0);
	assert_false(same_key(k0, bin_key(bin, 2, id, sizeof(id))));
	/* Without one, the file itself: rewritten, another key. */
	k0 = bin_key(bin, 2, NULL, 0);
	snprintf(cmd, sizeof(cmd), "cp %s %s.new && mv %s.new %s", bin, bin, bin, bin);
	assert_int_equal(system(cmd), 0);
	assert_false(same_key(k0, bin_key(bin, 2, NULL, 0)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys),
		cmocka_unit_test(off),
		cmocka_unit_test(saved_and_got),
		cmocka_unit_test(runs_add),
		cmocka_unit_test(damaged_files),
		cmocka_unit_test(too_big),
		cmocka_unit_test(binary_keys),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
