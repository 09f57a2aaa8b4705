/*
 * The report's memo of code names: every answer it gives is the one
 * naming without it gives (ms_code_name(), asked of the same symbols at
 * the same moment), for this test's own functions, a kernel address and
 * an address no binary holds; a second ask is a hit, in the process
 * that asked and not in another (the same address, the same binary); a
 * map in the process makes its next ask a miss, a map in another process
 * does not; two addresses that share a slot each get their own answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "analysis/codememo.h"
#include "own_maps.h"

int __attribute__((noinline)) memo_marker_a(int x);
int __attribute__((noinline)) memo_marker_b(int x);

int __attribute__((noinline)) memo_marker_a(int x)
{
	return x * 5 + 2;
}

int __attribute__((noinline)) memo_marker_b(int x)
{
	return x * 7 + 3;
}

/* The memo's answer for (pid, ip), checked against naming without it; whether it was a hit. */
static bool ask(struct ms_code_memo *m, struct ms_symbols *s, uint32_t pid, uint64_t ip)
{
	const char *dso, *want_dso, *name, *want;
	uint64_t hits = m->hits;

	name = ms_code_memo_name(m, s, pid, ip, &dso);
	want = ms_code_name(s, pid, ip, &want_dso);
	assert_string_equal(name, want);
	assert_string_equal(dso, want_dso);
	return m->hits > hits;
}

/* A map of an anonymous page into pid: its generation moves. */
static void map_anon(struct ms_symbols *s, uint32_t pid, uint64_t at)
{
	struct ms_event e = task_ev(MS_EV_MAP, pid);

	e.map = (struct ms_event_map){ .start = at, .end = at + 4096, .vma_start = at, .vma_end = at + 4096,
				       .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon" };
	ms_symbols_track(s, &e);
}

static void answers_are_namings(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	struct ms_code_memo *m = calloc(1, sizeof(*m));
	uint32_t pid = (uint32_t)getpid(), child = pid + 1000;
	const uint64_t ips[] = { (uint64_t)(uintptr_t)memo_marker_a + 1, (uint64_t)(uintptr_t)memo_marker_b + 2,
				 (uint64_t)(uintptr_t)ask, 0xffffffff81000010ULL, 0x1000 };
	const size_t n = sizeof(ips) / sizeof(ips[0]);
	const char *dso;
	struct ms_event e;
	struct text t[32];
	size_t i;

	(void)state;
	assert_non_null(s);
	assert_non_null(m);
	assert_true(map_own_code(s, t, 32) >= 1);
	e = task_ev(MS_EV_FORK, pid);
	e.fork.child_pid = e.fork.child_tid = child;
	ms_symbols_track(s, &e);
	assert_string_equal(ms_code_memo_name(m, s, pid, ips[0], &dso), "memo_marker_a");
	assert_non_null(strstr(dso, "test_codememo"));
	assert_string_equal(ms_code_memo_name(m, s, pid, ips[3], &dso), "[kernel]");
	assert_string_equal(dso, "[kernel]");
	assert_string_equal(ms_code_memo_name(m, s, pid, ips[4], &dso), "[unknown]");
	assert_string_equal(dso, "[unknown]");
	m->hits = m->misses = 0;
	for (i = 0; i < n; i++) {
		map_anon(s, pid, 0x7f0000200000ULL + i * 4096);
		assert_false(ask(m, s, pid, ips[i]));    /* a map since: asked again */
		assert_true(ask(m, s, pid, ips[i]));     /* asked just before: from the memo */
		assert_false(ask(m, s, child, ips[i]));  /* another process: its own answer */
		assert_true(ask(m, s, child, ips[i]));
		map_anon(s, child, 0x7f0000000000ULL + i * 4096);   /* the child's map: our answer stays */
		assert_true(ask(m, s, pid, ips[i]));
		map_anon(s, pid, 0x7f0000100000ULL + i * 4096);     /* ours: asked again */
		assert_false(ask(m, s, pid, ips[i]));
		assert_true(ask(m, s, pid, ips[i]));
	}
	assert_int_equal(m->hits, 4 * n);
	assert_int_equal(m->misses, 3 * n);
	free(m);
	ms_symbols_free(s);
}

/* Two addresses of one slot, asked in turn: each misses, and each gets its own name. */
static void slot_shared(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	struct ms_code_memo *m = calloc(1, sizeof(*m));
	uint32_t pid = (uint32_t)getpid();
	uint64_t a = (uint64_t)(uintptr_t)memo_marker_a, b = a + 0x10000;   /* same low bits, same next byte */
	const char *dso;
	struct text t[32];
	int k;

	(void)state;
	assert_non_null(m);
	map_own_code(s, t, 32);
	assert_false(ask(m, s, pid, a));
	assert_true(ask(m, s, pid, a));
	for (k = 0; k < 4; k++) {
		assert_false(ask(m, s, pid, b));
		assert_false(ask(m, s, pid, a));
	}
	assert_string_equal(ms_code_memo_name(m, s, pid, a, &dso), "memo_marker_a");
	free(m);
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(answers_are_namings),
		cmocka_unit_test(slot_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
