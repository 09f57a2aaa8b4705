/*
 * Code addresses named later (analysis/codelater.h): each entry's frames
 * are those ms_symbols_code_frames() gave when it was added, though the
 * process's binaries went by exec since; named on the namer's thread, or
 * through the pin where there is none; an address met again, or in a
 * forked child at the same place of the same binary, is named as the
 * first entry with it; an address no binary holds has no frame; a skipped
 * entry is never asked for; where nothing can be pinned (no build-ids
 * known), each is named as it is added. The same for a list of symbols
 * (the report's children). The code is this test's and its C library's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "analysis/codelater.h"
#include "own_maps.h"

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

static bool same_frame(const struct ms_frame *a, const struct ms_frame *b)
{
	return !strcmp(a->name ? a->name : "-", b->name ? b->name : "-") &&
	       !strcmp(a->file ? a->file : "-", b->file ? b->file : "-") && a->line == b->line;
}

/*
 * The entries each test adds (pid, ip): [4] is [0] again, [5] is [1] in
 * the child, [6] skipped, [7] no binary's; the symbols of this process
 * with a child forked, build-ids known where ids, and a namer where namer
 * (the test skipped where none can run).
 */
enum { N = 8 };

struct fixture {
	struct ms_symbols *s;
	struct ms_namer *n;
	uint32_t pid[N];
	uint64_t ip[N];
	struct text t[32];
};

static void fixture_begin(struct fixture *x, bool namer, bool ids)
{
	uint32_t pid = (uint32_t)getpid(), child = pid + 100000;
	const uint64_t inner = (uint64_t)(uintptr_t)later_inner + 4, outer = (uint64_t)(uintptr_t)later_outer + 4;
	const uint64_t ip[N] = { inner, outer, (uint64_t)(uintptr_t)getpid + 2, inner + 1, inner, outer, 0, 0x1000 };
	struct ms_event ev;
	int i;

	for (i = 0; i < N; i++) {
		x->pid[i] = i == 5 ? child : pid;
		x->ip[i] = ip[i];
	}
	x->s = ms_symbols_new();
	x->n = NULL;
	if (ids)
		expect_own_build_ids(x->s);
	map_own_code(x->s, x->t, 32);
	ev = task_ev(MS_EV_FORK, pid);
	ev.fork.child_pid = child;
	ms_symbols_track(x->s, &ev);
	if (namer) {
		unsetenv("MAPSCOPE_NAMER");
		if (!(x->n = ms_namer_new(x->s, 768, 0))) {
			ms_symbols_free(x->s);
			skip();                           /* one CPU: no namer to hand the code to */
		}
	}
}

/* Entry i added to c (entry 6 skipped). */
static void add(struct fixture *x, struct ms_code_later *c, int i)
{
	assert_int_equal(i == 6 ? ms_code_later_skip(c) : ms_code_later_add(c, x->pid[i], x->ip[i]), 0);
}

/* The process and its child go by exec: their binaries with them. */
static void binaries_gone(struct fixture *x)
{
	struct ms_event ev = task_ev(MS_EV_EXEC, x->pid[0]);

	ms_symbols_track(x->s, &ev);
	ev = task_ev(MS_EV_EXEC, x->pid[5]);
	ms_symbols_track(x->s, &ev);
}

static void fixture_end(struct fixture *x, struct ms_code_later *c)
{
	ms_code_later_release(c);
	ms_namer_free(x->n);
	ms_symbols_free(x->s);
}

/*
 * Entries added, the binaries gone, the frames asked for in order: as
 * named when added; with a namer where namer. Without the binaries'
 * build-ids (ids false) a binary not read yet cannot be pinned: the first
 * entry of each is named at once (and reads it), the others pinned.
 */
static void named_as_when_added(bool namer, bool ids)
{
	struct ms_frame want[N][MS_NAMER_FRAMES], got[MS_NAMER_FRAMES];
	struct ms_code_later c;
	struct fixture x;
	int nwant[N], k, f, i;
	size_t same;

	fixture_begin(&x, namer, ids);
	ms_code_later_init(&c, x.s, x.n);
	for (i = 0; i < N; i++) {
		if (ids)
			nwant[i] = ms_symbols_code_frames(x.s, x.pid[i], x.ip[i], want[i], MS_NAMER_FRAMES);
		add(&x, &c, i);
		if (!ids)                                 /* after: the entry met its binary unread */
			nwant[i] = ms_symbols_code_frames(x.s, x.pid[i], x.ip[i], want[i], MS_NAMER_FRAMES);
	}
	assert_int_equal(c.n, N);
	assert_string_equal(want[0][nwant[0] - 1].name, "later_inner");   /* named: the test tests something */
	assert_true(want[0][nwant[0] - 1].line > 0);
	assert_string_equal(want[5][nwant[5] - 1].name, "later_outer");
	assert_int_equal(nwant[7], 0);
	binaries_gone(&x);
	assert_int_equal(ms_symbols_code_frames(x.s, x.pid[0], x.ip[0], got, MS_NAMER_FRAMES), 0);
	for (i = 0; i < N; i++) {
		if (i == 6)
			continue;
		k = ms_code_later_frames(&c, (size_t)i, x.pid[i], x.ip[i], got, MS_NAMER_FRAMES, &same);
		if (ids && (i == 4 || i == 5))
			assert_true(k == -1 && same == (size_t)i - 4);   /* named as the first with its binary and place */
		if (k == -1) {
			assert_true(same < (size_t)i && nwant[same] == nwant[i]);
			for (f = 0; f < nwant[i]; f++)
				assert_true(same_frame(&want[same][f], &want[i][f]));
			continue;
		}
		assert_int_equal(k, nwant[i]);
		for (f = 0; f < k; f++)
			assert_true(same_frame(&got[f], &want[i][f]));
	}
	fixture_end(&x, &c);
}

static void named_on_the_namers_thread(void **state)
{
	(void)state;
	named_as_when_added(true, true);
}

static void named_through_the_pins(void **state)
{
	(void)state;
	named_as_when_added(false, true);
}

static void named_at_once_where_a_binary_is_unread(void **state)
{
	(void)state;
	named_as_when_added(true, false);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * The same entries in a list of symbols (ms_code_later_init_symbols()):
 * each as ms_symbols_code_symbol() named it when added, though the
 * binaries went by exec since; an address no binary holds has none (no
 * JIT could name it: it was pinned), and a skipped entry is the caller's.
 */
static void symbols_as_when_added(bool namer, bool ids)
{
	struct ms_code_sym want[N], got;
	struct ms_code_later c;
	struct fixture x;
	int held[N], k, i;
	size_t same;

	fixture_begin(&x, namer, ids);
	ms_code_later_init_symbols(&c, x.s, x.n);
	for (i = 0; i < N; i++) {
		held[i] = ms_symbols_code_symbol(x.s, x.pid[i], x.ip[i], &want[i]);
		add(&x, &c, i);
	}
	assert_int_equal(c.n, N);
	assert_true(held[0] == 1 && held[5] == 1 && held[2] == 1 && held[7] == 0);
	assert_string_equal(want[0].name, "later_inner");  /* named: the test tests something */
	assert_string_equal(want[5].name, "later_outer");
	assert_non_null(want[2].dso);
	assert_true(ms_code_later_none(&c, 6) && !ms_code_later_none(&c, 0));   /* 7 is pinned: nothing could name it */
	if (ids)
		assert_true(ms_code_later_first(&c, 4) == 0 && ms_code_later_first(&c, 5) == 1);
	binaries_gone(&x);
	assert_int_equal(ms_symbols_code_symbol(x.s, x.pid[0], x.ip[0], &got), 0);
	for (i = 0; i < N; i++) {
		if (ms_code_later_none(&c, (size_t)i))
			continue;
		k = ms_code_later_symbol(&c, (size_t)i, &got, &same);
		if (ids && (i == 4 || i == 5))
			assert_true(k == -1 && same == (size_t)i - 4);   /* named as the first with its binary and place */
		if (k == -1) {
			assert_true(same < (size_t)i && held[same] == held[i] && same_str(want[same].raw, want[i].raw) &&
				    same_str(want[same].dso, want[i].dso));
			continue;
		}
		assert_int_equal(k, held[i]);
		assert_true(same_str(got.name, want[i].name) && same_str(got.raw, want[i].raw) &&
			    same_str(got.dso, want[i].dso));
	}
	fixture_end(&x, &c);
}

static void symbols_on_the_namers_thread(void **state)
{
	(void)state;
	symbols_as_when_added(true, true);
}

static void symbols_through_the_pins(void **state)
{
	(void)state;
	symbols_as_when_added(false, true);
}

static void symbols_at_once_where_a_binary_is_unread(void **state)
{
	(void)state;
	symbols_as_when_added(true, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_on_the_namers_thread),
		cmocka_unit_test(named_through_the_pins),
		cmocka_unit_test(named_at_once_where_a_binary_is_unread),
		cmocka_unit_test(symbols_on_the_namers_thread),
		cmocka_unit_test(symbols_through_the_pins),
		cmocka_unit_test(symbols_at_once_where_a_binary_is_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
