/*
 * Code addresses named later (analysis/codelater.h): each entry's frames
 * are those ms_symbols_code_frames() gave when it was added, though the
 * process's binaries went by exec since; named on the namer's thread, or
 * through the pin where there is none; an address met again, or in a
 * forked child at the same place of the same binary, is named as the
 * first entry with it; an address no binary holds has no frame; a skipped
 * entry is never asked for; where nothing can be pinned (no build-ids
 * known), each is named as it is added. The code is this test's and its C library's.
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
 * Entries added, the binaries gone, the frames asked for in order: as
 * named when added; with a namer where namer. Without the binaries'
 * build-ids (ids false) a binary not read yet cannot be pinned: the first
 * entry of each is named at once (and reads it), the others pinned.
 */
static void named_as_when_added(bool namer, bool ids)
{
	uint32_t pid = (uint32_t)getpid(), child = pid + 100000;
	const uint64_t inner = (uint64_t)(uintptr_t)later_inner + 4, outer = (uint64_t)(uintptr_t)later_outer + 4,
		       libc = (uint64_t)(uintptr_t)getpid + 2;
	/* pid, ip of each entry: [4] is [0] again, [5] is [1] in the child, [6] skipped, [7] no binary's */
	const struct { uint32_t pid; uint64_t ip; } e[] = { { pid, inner }, { pid, outer }, { pid, libc },
							     { pid, inner + 1 }, { pid, inner }, { child, outer },
							     { pid, 0 }, { pid, 0x1000 } };
	enum { N = sizeof(e) / sizeof(e[0]) };
	struct ms_frame want[N][MS_NAMER_FRAMES], got[MS_NAMER_FRAMES];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_namer *n = NULL;
	struct ms_code_later c;
	int nwant[N], k, f;
	struct ms_event ev;
	struct text t[32];
	size_t i, same;

	if (ids)
		expect_own_build_ids(s);
	map_own_code(s, t, 32);
	ev = task_ev(MS_EV_FORK, pid);
	ev.fork.child_pid = child;
	ms_symbols_track(s, &ev);
	if (namer) {
		unsetenv("MAPSCOPE_NAMER");
		if (!(n = ms_namer_new(s, 768, 0))) {
			ms_symbols_free(s);
			skip();                           /* one CPU: no namer to hand the code to */
		}
	}
	ms_code_later_init(&c, s, n);
	for (i = 0; i < N; i++) {
		if (ids)
			nwant[i] = ms_symbols_code_frames(s, e[i].pid, e[i].ip, want[i], MS_NAMER_FRAMES);
		assert_int_equal(i == 6 ? ms_code_later_skip(&c) : ms_code_later_add(&c, e[i].pid, e[i].ip), 0);
		if (!ids)                                 /* after: the entry met its binary unread */
			nwant[i] = ms_symbols_code_frames(s, e[i].pid, e[i].ip, want[i], MS_NAMER_FRAMES);
	}
	assert_int_equal(c.n, N);
	assert_string_equal(want[0][nwant[0] - 1].name, "later_inner");   /* named: the test tests something */
	assert_true(want[0][nwant[0] - 1].line > 0);
	assert_string_equal(want[5][nwant[5] - 1].name, "later_outer");
	assert_int_equal(nwant[7], 0);
	ev = task_ev(MS_EV_EXEC, pid);                    /* the binaries go */
	ms_symbols_track(s, &ev);
	ev = task_ev(MS_EV_EXEC, child);
	ms_symbols_track(s, &ev);
	assert_int_equal(ms_symbols_code_frames(s, pid, inner, got, MS_NAMER_FRAMES), 0);
	for (i = 0; i < N; i++) {
		if (i == 6)
			continue;
		k = ms_code_later_frames(&c, i, e[i].pid, e[i].ip, got, MS_NAMER_FRAMES, &same);
		if (ids && (i == 4 || i == 5))
			assert_true(k == -1 && same == i - 4);   /* named as the first with its binary and place */
		if (k == -1) {
			assert_true(same < i && nwant[same] == nwant[i]);
			for (f = 0; f < nwant[i]; f++)
				assert_true(same_frame(&want[same][f], &want[i][f]));
			continue;
		}
		assert_int_equal(k, nwant[i]);
		for (f = 0; f < k; f++)
			assert_true(same_frame(&got[f], &want[i][f]));
	}
	ms_code_later_release(&c);
	ms_namer_free(n);
	ms_symbols_free(s);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_on_the_namers_thread),
		cmocka_unit_test(named_through_the_pins),
		cmocka_unit_test(named_at_once_where_a_binary_is_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
