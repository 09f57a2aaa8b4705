/*
 * Code addresses named later (symbols/codelater.h): each entry's frames
 * are those ms_symbols_frames_dso() gave when it was added, though the
 * process's binaries have gone since (exec), on the namer's thread and
 * without one; an address whose naming depends on the same binary and
 * offset is one entry, asked for as often as wanted; a binary the thread
 * cannot read any more is named through the pin, as it was. The code is
 * this test's own functions and its C library's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/symbols.h>

#include "own_maps.h"
#include "symbols/codelater.h"

#define MAX 16

volatile int later_sink;

__attribute__((noinline)) void later_inner(void)
{
	later_sink++;
	later_sink++;
}

__attribute__((noinline)) void later_outer(void)
{
	later_inner();
	later_sink++;
}

static struct ms_namer *new_namer(struct ms_symbols *s)
{
	struct ms_namer *n;

	unsetenv("MAPSCOPE_NAMER");
	if (!(n = ms_namer_new(s, 256, 0)))
		skip();                      /* one CPU: there is no namer to test */
	return n;
}

/* Whether frames a[0, n) with dso da are b's. */
static void assert_same_frames(const struct ms_frame *a, int n, const char *da, const struct ms_frames_copy *b)
{
	int i;

	assert_int_equal(n, b->n);
	for (i = 0; i < n; i++) {
		assert_true((!a[i].name && !b->f[i].name) || (a[i].name && b->f[i].name && !strcmp(a[i].name, b->f[i].name)));
		assert_true((!a[i].file && !b->f[i].file) || (a[i].file && b->f[i].file && !strcmp(a[i].file, b->f[i].file)));
		assert_int_equal(a[i].line, b->f[i].line);
	}
	assert_true((!da && !b->dso) || (da && b->dso && !strcmp(da, b->dso)));
}

/* Frames named when added, asked for after an exec took every binary away: as they were. */
static void named_as_when_added(bool namer)
{
	uint32_t pid = (uint32_t)getpid();
	const uint64_t ips[] = { (uint64_t)(uintptr_t)later_inner + 4, (uint64_t)(uintptr_t)later_outer + 1,
				 (uint64_t)(uintptr_t)getpid + 2, 0x1000, (uint64_t)(uintptr_t)later_inner + 4 };
	enum { N = sizeof(ips) / sizeof(ips[0]) };
	struct ms_symbols *s = ms_symbols_new();
	struct ms_frames_copy *want[N];
	struct ms_frame f[MAX];
	struct ms_code_later c;
	struct ms_namer *n = NULL;
	int64_t at[N];
	struct ms_event e;
	struct text t[32];
	const char *dso;
	size_t i;
	int k;

	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	if (namer)
		n = new_namer(s);
	ms_code_later_init(&c, s, n);
	for (i = 0; i < N; i++) {
		k = ms_symbols_frames_dso(s, pid, ips[i], f, MAX, &dso);
		assert_non_null(want[i] = ms_frames_copy(f, k, dso));
		assert_true((at[i] = ms_code_later_add(&c, pid, ips[i], MAX)) >= 0);
	}
	assert_true(want[0]->n >= 1 && want[0]->f[want[0]->n - 1].name);
	assert_string_equal(want[0]->f[want[0]->n - 1].name, "later_inner");   /* named, not raw */
	assert_true(want[3]->n <= 0);                           /* nothing there */
	/* The same address pinned again is the entry it was; named at once, each is its own. */
	if (namer)
		assert_int_equal(at[4], at[0]);
	else
		assert_int_equal(at[4], 4);
	e = task_ev(MS_EV_EXEC, pid);
	ms_symbols_track(s, &e);
	for (i = 0; i < N; i++) {
		k = ms_code_later_frames(&c, (size_t)at[i], f, MAX, &dso);
		assert_same_frames(f, k, dso, want[i]);
		k = ms_code_later_frames(&c, (size_t)at[i], f, MAX, &dso);   /* again: the same */
		assert_same_frames(f, k, dso, want[i]);
		free(want[i]);
	}
	ms_code_later_release(&c);
	assert_int_equal(c.n, 0);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void named_on_the_thread(void **state)
{
	(void)state;
	named_as_when_added(true);
}

static void named_at_once(void **state)
{
	(void)state;
	named_as_when_added(false);
}

/* The binary is gone when the thread comes to read it: the entry is named through its pin here. */
static void unreadable_binary_named_through_pin(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t ip = (uint64_t)(uintptr_t)later_inner + 4;
	char path[] = "/tmp/mapscope-codelater-XXXXXX";
	struct ms_symbols *s = ms_symbols_new();
	int fd = mkstemp(path), self = open("/proc/self/exe", O_RDONLY), k;
	struct ms_code_later c;
	struct ms_frame f[MAX];
	unsigned char id[64];
	struct ms_namer *n;
	const char *dso;
	struct stat st;
	int64_t i;

	(void)state;
	assert_true(fd >= 0 && self >= 0);
	assert_int_equal(fstat(self, &st), 0);
	assert_int_equal(sendfile(fd, self, NULL, (size_t)st.st_size), st.st_size);
	close(fd);
	close(self);
	assert_true((k = ms_elf_build_id(path, id, sizeof(id))) > 0);
	ms_symbols_expect_build_id(s, path, id, (size_t)k);
	map_copy(s, path);
	n = new_namer(s);
	ms_code_later_init(&c, s, n);
	assert_int_equal(i = ms_code_later_add(&c, pid, ip, MAX), 0);
	unlink(path);                    /* before the job is handed over: at the wait */
	k = ms_code_later_frames(&c, (size_t)i, f, MAX, &dso);
	assert_true(k >= 1);
	assert_string_equal(f[k - 1].name, "later_inner");
	ms_code_later_release(&c);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void max_checked(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	struct ms_code_later c;

	(void)state;
	ms_code_later_init(&c, s, NULL);
	assert_int_equal(ms_code_later_add(&c, 1, 0x1000, 0), -EINVAL);
	assert_int_equal(ms_code_later_add(&c, 1, 0x1000, NAMER_MAX_FRAMES + 1), -EINVAL);
	assert_int_equal(ms_code_later_add(&c, 1, 0x1000, NAMER_MAX_FRAMES), 0);
	ms_code_later_release(&c);
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_on_the_thread),
		cmocka_unit_test(named_at_once),
		cmocka_unit_test(unreadable_binary_named_through_pin),
		cmocka_unit_test(max_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
