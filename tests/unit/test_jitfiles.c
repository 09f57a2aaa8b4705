/*
 * The files JITs write for perf: perf maps as node, the JVM and Python
 * 3.12's -X perf write them (hex with or without 0x, names with spaces),
 * lines that do not parse skipped, perf's owner rule; jitdumps with loads,
 * moves, records cut short, another process's dump, the CPU-counter clock;
 * and neither read from, nor even opened, anything but a regular file.
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
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/jit.h"

static char dir[] = "/tmp/ms-jitfiles.XXXXXX";

static const char *path_of(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void write_file(const char *name, const void *data, size_t len)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static const char *name_at(const struct jit_table *t, uint64_t addr, uint64_t at)
{
	const struct jit_entry *e = ms_jit_find(t, addr, at);

	return e ? e->name : NULL;
}

static void perf_maps_of_three_runtimes(void **state)
{
	static const char text[] =
		"18c4000 300 Builtin:DeoptimizationEntry_Eager\n"            /* node */
		"305c1cf04b06 1a1 JS:~processPromiseRejections node:internal/process/promises:436:34\n"
		"0x00007f7354ecb2a0 0x00000000000001d8 long Touch.fill(int)\n"  /* the JVM */
		"7f3a2c001000 b py::compute:/tmp/work.py\n"                  /* python 3.12 -X perf */
		"not a line\n"
		"7f0000 0 zero sized\n"
		"7f1000 10\n"
		"7f2000 10 crlf\r\n"
		"7f3000 zz bad size\n";
	struct jit_table *t;

	(void)state;
	write_file("perf-1.map", text, sizeof(text) - 1);
	t = ms_perfmap_read(path_of("perf-1.map"));
	assert_non_null(t);
	assert_int_equal(t->n, 5);
	assert_string_equal(name_at(t, 0x18c4000 + 0x2ff, 0), "Builtin:DeoptimizationEntry_Eager");
	assert_string_equal(name_at(t, 0x305c1cf04b06, 0), "JS:~processPromiseRejections node:internal/process/promises:436:34");
	assert_string_equal(name_at(t, 0x7f7354ecb2a0 + 0x1d7, 0), "long Touch.fill(int)");
	assert_null(name_at(t, 0x7f7354ecb2a0 + 0x1d8, 0));
	assert_string_equal(name_at(t, 0x7f3a2c00100a, 0), "py::compute:/tmp/work.py");
	assert_string_equal(name_at(t, 0x7f2000, 0), "crlf");
	assert_null(name_at(t, 0x7f3000, 0));
	assert_string_equal(t->path, path_of("perf-1.map"));
	ms_jit_free(t);
	write_file("perf-1.map", "", 0);             /* an empty map: an empty table */
	t = ms_perfmap_read(path_of("perf-1.map"));
	assert_non_null(t);
	assert_int_equal(t->n, 0);
	assert_null(name_at(t, 0x1000, 0));
	ms_jit_free(t);
}

/* perf's rule: a map in /tmp could be anyone's; only this user's or root's is read. */
static void perf_map_of_another_user_refused(void **state)
{
	(void)state;
	if (geteuid())
		skip();                   /* giving a file away needs root */
	write_file("perf-2.map", "1000 10 f\n", 10);
	assert_int_equal(chown(path_of("perf-2.map"), 65534, 65534), 0);
	errno = 0;
	assert_null(ms_perfmap_read(path_of("perf-2.map")));
	assert_int_equal(errno, EPERM);
}

static void not_regular_files_refused(void **state)
{
	(void)state;
	assert_int_equal(mkfifo(path_of("perf-3.map"), 0600), 0);   /* would block a reader for ever */
	assert_null(ms_perfmap_read(path_of("perf-3.map")));
	assert_int_equal(errno, EPERM);
	assert_null(ms_perfmap_read(path_of("perf-4.map")));
	assert_int_equal(errno, ENOENT);
	assert_null(ms_jitdump_read(path_of("perf-3.map"), 1, true));
	assert_int_equal(errno, EPERM);
	assert_null(ms_jitdump_read("/proc/self/status", 1, true));
	assert_int_equal(errno, EPERM);
	assert_null(ms_jitdump_read("/dev/null", 1, true));
	assert_int_equal(errno, EPERM);
}

/* Opening a FIFO, even without blocking, tells its writer a reader came; a terminal could become ours. */
static void not_regular_files_not_opened(void **state)
{
	char ev[4096];
	int in;

	(void)state;
	assert_int_equal(mkfifo(path_of("perf-5.map"), 0600), 0);
	assert_int_equal(symlink("perf-5.map", path_of("jit-5.dump")), 0);     /* beside it */
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, dir, IN_OPEN) >= 0);
	assert_null(ms_perfmap_read(path_of("perf-5.map")));
	assert_null(ms_jitdump_read(path_of("jit-5.dump"), 5, true));
	assert_int_equal(read(in, ev, sizeof(ev)), -1);    /* no IN_OPEN event: nothing was opened */
	assert_int_equal(errno, EAGAIN);
	close(in);
}

/* A jitdump as the jitdump specification lays it out. */
struct dump {
	unsigned char b[4096];
	size_t n;
};

static void put(struct dump *d, const void *p, size_t n)
{
	assert_true(d->n + n <= sizeof(d->b));
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static void header(struct dump *d, uint32_t pid, uint64_t flags)
{
	uint32_t h[6] = { 0x4A695444, 1, 40, 62, 0, pid };
	uint64_t h2[2] = { 1, flags };

	d->n = 0;
	put(d, h, sizeof(h));
	put(d, h2, sizeof(h2));
}

static void load(struct dump *d, uint64_t t, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	uint32_t len = (uint32_t)strlen(name) + 1, pr[2] = { 0, 16 + 40 + len + 3 };
	uint64_t f[4] = { addr, addr, size, index };
	uint32_t ids[2] = { 1, 1 };

	put(d, pr, sizeof(pr));
	put(d, &t, 8);
	put(d, ids, sizeof(ids));
	put(d, f, sizeof(f));
	put(d, name, len);
	put(d, "\xc3\xc3\xc3", 3);                /* the code */
}

static void move(struct dump *d, uint64_t t, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	uint32_t pr[2] = { 1, 16 + 48 }, ids[2] = { 1, 1 };
	uint64_t f[5] = { to, from, to, size, index };

	put(d, pr, sizeof(pr));
	put(d, &t, 8);
	put(d, ids, sizeof(ids));
	put(d, f, sizeof(f));
}

static void jitdump_by_time(void **state)
{
	struct dump d;
	struct jit_table *t;
	uint32_t other[4] = { 3, 16, 0, 0 };       /* a record of another kind (CLOSE): skipped */

	(void)state;
	header(&d, 42, 0);
	load(&d, 100, 0x1000, 0x40, 1, "first");
	put(&d, other, sizeof(other));
	load(&d, 200, 0x1000, 0x40, 2, "second");
	move(&d, 300, 0x1000, 0x2000, 0x40, 2);
	write_file("jit-42.dump", d.b, d.n);
	t = ms_jitdump_read(path_of("jit-42.dump"), 42, true);
	assert_non_null(t);
	assert_string_equal(name_at(t, 0x1001, 150), "first");
	assert_string_equal(name_at(t, 0x1001, 250), "second");
	assert_null(name_at(t, 0x1001, 350));
	assert_string_equal(name_at(t, 0x2001, 350), "second");
	ms_jit_free(t);
	/* Untimed (another clock): the last state at every instant, the move included. */
	t = ms_jitdump_read(path_of("jit-42.dump"), 42, false);
	assert_non_null(t);
	assert_null(name_at(t, 0x1001, 150));
	assert_string_equal(name_at(t, 0x2001, 0), "second");
	ms_jit_free(t);
	/* The CPU's counter (JITDUMP_FLAGS_ARCH_TIMESTAMP) is no clock of the recording's: untimed. */
	header(&d, 42, 1);
	load(&d, 100, 0x1000, 0x40, 1, "first");
	load(&d, 200, 0x1000, 0x40, 2, "second");
	write_file("jit-42.dump", d.b, d.n);
	t = ms_jitdump_read(path_of("jit-42.dump"), 42, true);
	assert_non_null(t);
	assert_string_equal(name_at(t, 0x1001, 0), "second");
	ms_jit_free(t);
}

static void jitdump_damaged(void **state)
{
	struct dump d;
	struct jit_table *t;
	uint32_t huge[4] = { 0, 0xfffffff0, 0, 0 };

	(void)state;
	header(&d, 42, 0);
	load(&d, 100, 0x1000, 0x40, 1, "kept");
	put(&d, huge, sizeof(huge));              /* a size past the end: the reading stops */
	load(&d, 200, 0x3000, 0x40, 2, "lost");
	write_file("jit-42.dump", d.b, d.n);
	t = ms_jitdump_read(path_of("jit-42.dump"), 42, true);
	assert_non_null(t);
	assert_int_equal(t->n, 1);
	assert_string_equal(name_at(t, 0x1000, 100), "kept");
	ms_jit_free(t);
	/* A record cut short at the end of the file. */
	header(&d, 42, 0);
	load(&d, 100, 0x1000, 0x40, 1, "whole");
	load(&d, 200, 0x3000, 0x40, 2, "cut");
	write_file("jit-42.dump", d.b, d.n - 10);
	t = ms_jitdump_read(path_of("jit-42.dump"), 42, true);
	assert_non_null(t);
	assert_int_equal(t->n, 1);
	ms_jit_free(t);
	/* Another process's dump, a file that is none, one cut in its header. */
	assert_null(ms_jitdump_read(path_of("jit-42.dump"), 43, true));
	assert_int_equal(errno, ENOEXEC);
	write_file("jit-42.dump", "JITD but not one of ours, at all, no...", 40);
	assert_null(ms_jitdump_read(path_of("jit-42.dump"), 42, true));
	assert_int_equal(errno, ENOEXEC);
	write_file("jit-42.dump", d.b, 20);
	assert_null(ms_jitdump_read(path_of("jit-42.dump"), 42, true));
	assert_int_equal(errno, ENOEXEC);
}

static void jitdump_paths(void **state)
{
	(void)state;
	assert_true(ms_jitdump_path("/tmp/x/jit-123.dump"));
	assert_true(ms_jitdump_path("jit-1.dump"));
	assert_false(ms_jitdump_path("/tmp/x/jit-.dump"));
	assert_false(ms_jitdump_path("/tmp/x/jit-12a.dump"));
	assert_false(ms_jitdump_path("/tmp/x/jit-12.dump.old"));
	assert_false(ms_jitdump_path("/tmp/x/myjit-12.dump"));
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const files[] = { "perf-1.map", "perf-2.map", "perf-3.map", "perf-5.map", "jit-5.dump",
						       "jit-42.dump" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(path_of(files[i]));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_maps_of_three_runtimes),
		cmocka_unit_test(perf_map_of_another_user_refused),
		cmocka_unit_test(not_regular_files_refused),
		cmocka_unit_test(not_regular_files_not_opened),
		cmocka_unit_test(jitdump_by_time),
		cmocka_unit_test(jitdump_damaged),
		cmocka_unit_test(jitdump_paths),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
