/*
 * The index file's checks: an index of another recording, or of this one
 * before it changed, is stale; a foreign file or another version is not an
 * index; one cut short or with a byte flipped is damaged; a good one
 * written and opened again answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/index.h"
#include "session/indexfmt.h"

static struct ms_indexer *small(void)
{
	struct ms_indexer *x = ms_indexer_new();
	struct ms_vma v = { .start = 0x1000, .end = 0x3000, .prot = 3, .name = "[heap]" };
	struct ms_stream_stats st = { .samples = 1 };
	struct ms_stream_lost lost = { 7, 3, 40, 45 };

	assert_non_null(x);
	assert_int_equal(ms_indexer_seen(x, 7, 10), 0);
	assert_int_equal(ms_indexer_listing(x, 7, 10, &v, 1), 0);
	ms_indexer_facts(x, 10, 0, 0, &st, &lost, 1);
	return x;
}

static void write_file(const char *path, size_t size, unsigned char fill)
{
	unsigned char *b = malloc(size);
	FILE *f = fopen(path, "w");

	assert_non_null(b);
	assert_non_null(f);
	memset(b, fill, size);
	assert_int_equal(fwrite(b, 1, size, f), size);
	fclose(f);
	free(b);
}

static void damage_is_told(void **state)
{
	struct ms_index_stamp st = { 1, 2, 3 }, other = { 1, 2, 4 };
	struct ms_indexer *x = small();
	struct ms_index *ix = NULL;
	struct ms_buf b;
	unsigned char *copy;

	(void)state;
	ms_buf_init(&b);
	assert_int_equal(ms_indexer_serialize(x, &st, &b), 0);
	assert_int_equal(ms_index_parse(b.data, b.len, &st, &ix), 0);
	ms_index_free(ix);
	assert_int_equal(ms_index_parse(b.data, b.len, &other, &ix), -ESTALE);
	assert_int_equal(ms_index_parse(b.data, b.len - 1, &st, &ix), -EBADMSG);
	assert_int_equal(ms_index_parse(b.data, 12, &st, &ix), -EBADMSG);
	copy = malloc(b.len);
	memcpy(copy, b.data, b.len);
	copy[b.len - 5] ^= 0x40;
	assert_int_equal(ms_index_parse(copy, b.len, &st, &ix), -EBADMSG);
	memcpy(copy, b.data, b.len);
	copy[8] ^= 1;                                   /* the version */
	assert_int_equal(ms_index_parse(copy, b.len, &st, &ix), -EPROTO);
	memcpy(copy, b.data, b.len);
	memcpy(copy + 8, &(uint32_t){ 0x01000001u }, 4);   /* made by the model before a refused munmap split */
	assert_int_equal(ms_index_parse(copy, b.len, &st, &ix), -EPROTO);
	memcpy(copy, "PERFILE2", 8);
	assert_int_equal(ms_index_parse(copy, b.len, &st, &ix), -EPROTO);
	assert_int_equal(ms_index_parse(copy, 3, &st, &ix), -EPROTO);
	free(copy);
	ms_buf_release(&b);
	ms_indexer_free(x);
}

static void stale_after_a_change(void **state)
{
	char dir[] = "/tmp/test-indexfile-XXXXXX", rec[64], idx[80];
	struct ms_index_stamp a, c;
	struct ms_indexer *x = small();
	struct ms_index *ix = NULL;
	struct ms_index_maps m;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(rec, sizeof(rec), "%s/r.data", dir);
	snprintf(idx, sizeof(idx), "%s%s", rec, MS_INDEX_SUFFIX);
	write_file(rec, 3 << 20, 'a');
	assert_int_equal(ms_index_stamp_file(rec, &a), 0);
	assert_int_equal(a.size, 3 << 20);
	assert_int_equal(ms_indexer_write(x, rec, idx), 0);
	assert_int_equal(ms_index_open(rec, idx, &ix), 0);
	assert_int_equal(ms_index_maps(ix, 7, 10, false, &m, NULL, NULL), 0);
	assert_true(m.seen);
	ms_index_free(ix);
	/* A byte at 2 MiB, one of the blocks hashed, with size and mtime kept. */
	fd = open(rec, O_WRONLY);
	assert_true(pwrite(fd, "b", 1, 2 << 20) == 1);
	close(fd);
	assert_int_equal(ms_index_stamp_file(rec, &c), 0);
	assert_true(c.hash != a.hash);
	ix = NULL;
	assert_int_equal(ms_index_open(rec, idx, &ix), -ESTALE);
	assert_null(ix);
	write_file(rec, 3 << 20, 'a');                  /* the same bytes again: a newer file */
	assert_int_equal(ms_index_stamp_file(rec, &c), 0);
	assert_int_equal(c.hash, a.hash);
	assert_int_equal(ms_index_open(rec, "/nonexistent/x.msidx", &ix), -ENOENT);
	/* No index: the recording is not read (a directory, which a read of would fail with EISDIR). */
	assert_int_equal(ms_index_open(dir, "/nonexistent/x.msidx", &ix), -ENOENT);
	assert_int_equal(ms_index_open(dir, idx, &ix), -EISDIR);
	unlink(idx);
	unlink(rec);
	rmdir(dir);
	ms_indexer_free(x);
}

/* A link planted at the temporary name is refused, and what it points at is left alone. */
static void planted_link_refused(void **state)
{
	char dir[] = "/tmp/test-indexfile-XXXXXX", rec[64], idx[80], tmp[96], victim[80], got[8] = { 0 };
	struct ms_indexer *x = small();
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(rec, sizeof(rec), "%s/r.data", dir);
	snprintf(idx, sizeof(idx), "%s%s", rec, MS_INDEX_SUFFIX);
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", idx, (int)getpid());
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	write_file(rec, 4096, 'a');
	write_file(victim, 4, 'v');
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(ms_indexer_write(x, rec, idx), -EEXIST);
	fd = open(victim, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got)), 4);
	close(fd);
	assert_string_equal(got, "vvvv");
	assert_int_equal(access(idx, F_OK), -1);
	unlink(tmp);
	unlink(victim);
	unlink(rec);
	rmdir(dir);
	ms_indexer_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(damage_is_told),
		cmocka_unit_test(stale_after_a_change),
		cmocka_unit_test(planted_link_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
