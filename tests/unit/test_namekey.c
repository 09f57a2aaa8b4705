/*
 * The keys of the namer's answers: words in another order, strings cut
 * elsewhere or a NULL for "", other keys, and chains alike but for one
 * address each unlike the others in both words; the code that names has a
 * build-id here; and a binary's key moves with everything its names
 * depend on: its state, its build-id, the file as read, a debug file
 * that appears or goes (by .gnu_debuglink, by build-id under
 * /usr/lib/debug where this test may write, the decompressed copy where
 * the original is gone), the dwz file a debug file names, and a .dwp.
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

#include "symbols/internal.h"
#include "symbols/namekey.h"

static char dir[] = "/tmp/ms-namekey.XXXXXX";

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

static int setup(void **state)
{
	char cache[64];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(cache, sizeof(cache), "%s/debug-cache", dir);
	setenv("MAPSCOPE_DEBUG_CACHE", cache, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static void run(const char *cmd)
{
	assert_int_equal(system(cmd), 0);
}

static void touch_file(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0600);

	assert_true(fd >= 0);
	close(fd);
}

/* Words in another order, strings cut in another place, NULL for "", another seed: other keys. */
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
	ms_namekey_str(&a, NULL);
	ms_namekey_init(&b, 0);
	ms_namekey_str(&b, "");
	assert_false(same_key(ms_namekey_done(&a), ms_namekey_done(&b)));
	ms_namekey_init(&a, 0);
	ms_namekey_word(&a, 1);
	ms_namekey_word(&a, 2);
	ms_namekey_init(&b, 0);
	ms_namekey_word(&b, 2);
	ms_namekey_word(&b, 1);
	assert_false(same_key(ms_namekey_done(&a), ms_namekey_done(&b)));
	ms_namekey_init(&a, 0);
	assert_true(ms_namekey_code(&a));       /* built with build-ids, as Debian builds */
}

static struct ms_namekey bin_key(const char *path, int state, const unsigned char *id, size_t id_len)
{
	struct ms_namekey k;

	assert_true(ms_namekey_bin(&k, path, state, id, id_len, NULL, NULL, 0));
	return k;
}

/* bin: a copy of this test, stripped, with .gnu_debuglink to dbg, which is moved to dbg.away. */
static bool stripped_copy(char *bin, char *dbg, size_t len)
{
	char cmd[2048];

	snprintf(bin, len, "%s/prog", dir);
	snprintf(dbg, len, "%s/prog.debug", dir);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s && objcopy --only-keep-debug %s %s && "
		 "objcopy --strip-debug --add-gnu-debuglink=%s %s && mv %s %s.away", (int)getpid(), bin, bin, dbg,
		 dbg, bin, dbg, dbg);
	return !system(cmd);
}

static int by_word(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Keys of chains alike but for their addresses, as the namer makes them:
 * the first, a middle or the last frame's address xor 1..N, one frame
 * more; and two frames each xor i, or i and i's neighbour in two frames,
 * or the two swapped, which only mixing across words tells apart. Each of
 * the key's two words is unlike every other key's, as 64 good bits would
 * be (one collision among these: about 1 in 10^8).
 */
static void keys_spread(void **state)
{
	enum { N = 1 << 15, FRAMES = 6, WAYS = 7 };
	static const size_t at[WAYS] = { 0, 2, FRAMES - 1, FRAMES, 1, 1, 1 };
	uint64_t *half = malloc(2 * WAYS * N * sizeof(*half)), chain[FRAMES + 1], t;
	struct ms_namekey k;
	size_t n = 0, i, j, way, len;

	(void)state;
	assert_non_null(half);
	for (way = 0; way < WAYS; way++)
		for (i = 1; i <= N; i++) {
			for (j = 0; j <= FRAMES; j++)
				chain[j] = 0x7f3a5c6d1000 + 0x40 * j;
			chain[at[way]] ^= i;
			if (way == 4)
				chain[4] ^= i;           /* two frames, one change */
			else if (way == 5)
				chain[4] ^= i + 1;
			else if (way == 6) {
				t = chain[1];            /* the changed frame moved one down */
				chain[1] = chain[2];
				chain[2] = t;
			}
			len = at[way] == FRAMES ? FRAMES + 1 : FRAMES;
			ms_namekey_init(&k, 'S');
			ms_namekey_word(&k, len);
			for (j = 0; j < len; j++) {
				ms_namekey_word(&k, 2);
				ms_namekey_word(&k, chain[j]);
			}
			k = ms_namekey_done(&k);
			half[n] = k.a;
			half[WAYS * N + n++] = k.b;
		}
	for (j = 0; j < 2; j++) {
		qsort(half + j * WAYS * N, WAYS * N, sizeof(*half), by_word);
		for (i = 1; i < WAYS * N; i++)
			assert_true(half[j * WAYS * N + i] != half[j * WAYS * N + i - 1]);
	}
	free(half);
}

/*
 * The same for the same file, another for another state or build-id;
 * another once the debug file its .gnu_debuglink names appears beside
 * it, or goes; another once the file changes, build-id or not; and the
 * file as the caller read it counts, not what is at the path now.
 */
static void binary_keys(void **state)
{
	const unsigned char id[20] = { 1, 2, 3 };
	char bin[256], dbg[256], cmd[2048];
	struct ms_namekey k0, k1;
	struct stat read_then;

	(void)state;
	if (!stripped_copy(bin, dbg, sizeof(bin)))
		skip();                         /* no objcopy (binutils) */
	k0 = bin_key(bin, 2, NULL, 0);
	assert_true(same_key(k0, bin_key(bin, 2, NULL, 0)));
	assert_false(same_key(k0, bin_key(bin, -2, NULL, 0)));
	assert_false(same_key(k0, bin_key(bin, 2, id, sizeof(id))));
	snprintf(cmd, sizeof(cmd), "mv %s.away %s", dbg, dbg);
	run(cmd);
	k1 = bin_key(bin, 2, NULL, 0);
	assert_false(same_key(k0, k1));
	assert_true(same_key(k1, bin_key(bin, 2, NULL, 0)));
	k0 = bin_key(bin, 2, id, sizeof(id));
	assert_int_equal(unlink(dbg), 0);
	assert_false(same_key(k0, bin_key(bin, 2, id, sizeof(id))));
	/* Stripped, a binary keeps its build-id and loses its symbols. */
	assert_int_equal(stat(bin, &read_then), 0);
	k0 = bin_key(bin, 2, id, sizeof(id));
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all %s", bin);
	run(cmd);
	assert_false(same_key(k0, bin_key(bin, 2, id, sizeof(id))));
	/* The file as the caller read it (fstat then), whatever is at the path now. */
	assert_true(ms_namekey_bin(&k1, bin, 2, id, sizeof(id), &read_then, NULL, 0));
	assert_true(same_key(k0, k1));
	k0 = bin_key(bin, 2, NULL, 0);
	snprintf(cmd, sizeof(cmd), "cp %s %s.new && mv %s.new %s", bin, bin, bin, bin);
	run(cmd);
	assert_false(same_key(k0, bin_key(bin, 2, NULL, 0)));
	/* A split DWARF package put beside it. */
	k0 = bin_key(bin, 2, NULL, 0);
	snprintf(cmd, sizeof(cmd), "touch %s.dwp", bin);
	run(cmd);
	assert_false(same_key(k0, bin_key(bin, 2, NULL, 0)));
}

/*
 * A debug file's dwz file (.gnu_debugaltlink, libdw reads it for the
 * DWARF the two share): the key moves when it appears beside the debug
 * file.
 */
static void dwz_file(void **state)
{
	char bin[256], dbg[256], link[256], cmd[2048];
	struct ms_namekey k0;
	FILE *f;

	(void)state;
	if (!stripped_copy(bin, dbg, sizeof(bin)))
		skip();
	snprintf(link, sizeof(link), "%s/altlink.bin", dir);
	assert_non_null(f = fopen(link, "wb"));
	fwrite("common.dwz\0\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff\x01\x02\x03\x04\x05", 1,
	       11 + 20, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "mv %s.away %s && objcopy --add-section .gnu_debugaltlink=%s %s", dbg, dbg, link,
		 dbg);
	run(cmd);
	k0 = bin_key(bin, 2, NULL, 0);
	snprintf(cmd, sizeof(cmd), "touch %s/common.dwz", dir);
	run(cmd);
	assert_false(same_key(k0, bin_key(bin, 2, NULL, 0)));
}

/*
 * By build-id: the debug file under /usr/lib/debug/.build-id (where this
 * test may write there), and its decompressed copy in the debug cache,
 * which decides only where the original is gone.
 */
static void by_build_id(void **state)
{
	const unsigned char id[20] = { 0xfe, 0xed, 0x5a, 0x7e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	char sys[256], copy[4200];
	struct ms_namekey k0, k1;
	const char *bin = "/proc/self/exe";
	bool made_dir = false;

	(void)state;
	assert_true(ms_debugcache_copy_path(copy, sizeof(copy), id, sizeof(id), true));
	k0 = bin_key(bin, 2, id, sizeof(id));
	touch_file(copy);
	k1 = bin_key(bin, 2, id, sizeof(id));
	assert_false(same_key(k0, k1));      /* no original: the copy decides */
	snprintf(sys, sizeof(sys), "/usr/lib/debug/.build-id/fe");
	if (mkdir(sys, 0755) == 0)
		made_dir = true;
	else if (errno != EEXIST) {
		unlink(copy);
		skip();                         /* /usr/lib/debug is not writable here */
	}
	snprintf(sys, sizeof(sys), "/usr/lib/debug/.build-id/fe/ed5a7e0102030405060708090a0b0c0d0e0f10.debug");
	assert_int_equal(access(sys, F_OK), -1);
	touch_file(sys);
	k0 = bin_key(bin, 2, id, sizeof(id));
	assert_false(same_key(k0, k1));      /* the original appeared */
	unlink(copy);
	assert_true(same_key(k0, bin_key(bin, 2, id, sizeof(id))));   /* with it there, the copy does not count */
	unlink(sys);
	if (made_dir)
		rmdir("/usr/lib/debug/.build-id/fe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys),
		cmocka_unit_test(keys_spread),
		cmocka_unit_test(binary_keys),
		cmocka_unit_test(dwz_file),
		cmocka_unit_test(by_build_id),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
