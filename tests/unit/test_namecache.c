/*
 * The namer's answers on disk: what is put and saved is got back by the
 * next run, under its config only; a save with nothing new writes
 * nothing; runs add to what the file holds, and an answer named again
 * replaces the one kept; a file that is damaged, another's or writable by
 * others is taken for none and written again; no file passes 16 MiB, and
 * one that does is none; the folder is made only by a save, which clears
 * what killed runs left.
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
	damage(path, 8 + 16, &(uint64_t){ 48 }, 8);    /* nslots not a power of two */
	assert_false(found_then_mended(&config, &k));
	one_saved(&config, &k, path, sizeof(path));
	damage(path, 8 + 16 + 16, &(uint64_t){ 4 }, 8);   /* heap_len not what follows the slots */
	assert_false(found_then_mended(&config, &k));
	one_saved(&config, &k, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(chmod(path, st.st_mode | S_IWGRP), 0);
	assert_false(found_then_mended(&config, &k));
}

/* An answer named again (the one kept could not be read) replaces it at the save. */
static void named_again_replaces(void **state)
{
	struct ms_namekey config = key_of(8, 1), k = key_of(8, 2);
	struct ms_namecache *c;
	const char *got;
	size_t len;

	(void)state;
	remove_files();
	assert_non_null(c = ms_namecache_open(&config));
	assert_int_equal(ms_namecache_put(c, &k, "BAD", 4), 0);
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_non_null(c = ms_namecache_open(&config));
	assert_int_equal(ms_namecache_put(c, &k, "good", 5), 0);
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_non_null(c = ms_namecache_open(&config));
	assert_non_null(got = ms_namecache_get(c, &k, &len));
	assert_string_equal(got, "good");
	ms_namecache_free(c);
}

/*
 * No file passes 16 MiB: a run's answers that would are not all kept
 * (-ENOSPC), the file saved is read back whole by the next run, and old
 * answers that would not fit beside a run's new ones are let go.
 */
static void sizes(void **state)
{
	struct ms_namekey config = key_of(10, 1), k;
	struct ms_namecache *c;
	char path[4096], answer[48];
	struct stat st;
	size_t len, i, kept = 0;
	int err = 0;

	(void)state;
	remove_files();
	assert_non_null(c = ms_namecache_open(&config));
	for (i = 0; !err; i++) {             /* small answers: the slots weigh more than they */
		k = key_of(11, i);
		snprintf(answer, sizeof(answer), "%zu", i);
		if (!(err = ms_namecache_put(c, &k, answer, strlen(answer) + 1)))
			kept++;
	}
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_true(the_file(path, sizeof(path)));
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 16 << 20 && st.st_size > 8 << 20);
	assert_non_null(c = ms_namecache_open(&config));
	for (i = 0; i < kept; i += kept / 97)
		assert_non_null(ms_namecache_get(c, &(struct ms_namekey){ key_of(11, i).a, key_of(11, i).b }, &len));
	k = key_of(12, 1);
	assert_int_equal(ms_namecache_put(c, &k, "new", 4), 0);
	assert_int_equal(ms_namecache_save(c), 0);     /* no room beside the old: the new alone */
	ms_namecache_free(c);
	assert_non_null(c = ms_namecache_open(&config));
	assert_non_null(ms_namecache_get(c, &k, &len));
	k = key_of(11, 0);
	assert_null(ms_namecache_get(c, &k, &len));
	ms_namecache_free(c);
	damage(path, -1, NULL, (16u << 20) + 4096);    /* past the size a save writes: none */
	assert_non_null(c = ms_namecache_open(&config));
	k = key_of(12, 1);
	assert_null(ms_namecache_get(c, &k, &len));
	ms_namecache_free(c);
}

/* Opening makes nothing on disk; a save makes the folder (0700), and removes what killed runs left in it. */
static void folder_made_at_save(void **state)
{
	struct ms_namekey config = key_of(13, 1), k = key_of(13, 2);
	char sub[256], stale[300], fresh[300], cmd[1024];
	struct ms_namecache *c;
	struct stat st;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/not/yet", dir);
	setenv("MAPSCOPE_NAME_CACHE", sub, 1);
	assert_non_null(c = ms_namecache_open(&config));
	assert_int_equal(stat(sub, &st), -1);
	assert_int_equal(ms_namecache_put(c, &k, "x", 2), 0);
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(stale, sizeof(stale), "%s/a.names.AAAAAA.tmp", sub);
	snprintf(fresh, sizeof(fresh), "%s/b.names.BBBBBB.tmp", sub);
	snprintf(cmd, sizeof(cmd), "touch %s %s && touch -d '2 hours ago' %s", stale, fresh, stale);
	assert_int_equal(system(cmd), 0);
	assert_non_null(c = ms_namecache_open(&config));
	k = key_of(13, 3);
	assert_int_equal(ms_namecache_put(c, &k, "y", 2), 0);
	assert_int_equal(ms_namecache_save(c), 0);
	ms_namecache_free(c);
	assert_int_equal(access(stale, F_OK), -1);     /* left by a run killed two hours ago */
	assert_int_equal(access(fresh, F_OK), 0);      /* another run's, saving now */
	setenv("MAPSCOPE_NAME_CACHE", dir, 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(off),
		cmocka_unit_test(saved_and_got),
		cmocka_unit_test(runs_add),
		cmocka_unit_test(damaged_files),
		cmocka_unit_test(too_big),
		cmocka_unit_test(named_again_replaces),
		cmocka_unit_test(sizes),
		cmocka_unit_test(folder_made_at_save),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
