/*
 * The names of code a report's memo left for later (codenames.h): with a
 * later list, without a namer (through the pins) and with one, code in
 * binaries is an entry for later and a kernel address is named at once;
 * the binaries gone, the entries' names are the ones naming gave when
 * asked, one pair of strings for each symbol (two addresses of
 * names_a share theirs, and their string's place in the table), and
 * an address nothing holds is named with the very strings naming it at
 * once gives.
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

#include "analysis/codememo.h"
#include "analysis/codenames.h"
#include "own_maps.h"

/* Two functions of this test, each long enough for two addresses in it. */
long __attribute__((noinline)) names_a(long x);
long __attribute__((noinline)) names_b(long x);

long __attribute__((noinline)) names_a(long x)
{
	return x * 11 - 4;
}

long __attribute__((noinline)) names_b(long x)
{
	return x * 13 + 6;
}

static void named_later(bool namer)
{
	struct ms_symbols *s = ms_symbols_new();
	struct ms_code_memo *m = calloc(1, sizeof(*m));
	uint32_t pid = (uint32_t)getpid();
	const uint64_t ips[] = { (uint64_t)(uintptr_t)names_a + 1, (uint64_t)(uintptr_t)names_a + 3,
				 (uint64_t)(uintptr_t)names_b + 2, 0x1000, 0xffffffff81000010ULL };
	enum { N = sizeof(ips) / sizeof(ips[0]) };
	const char *want[N], *want_dso[N], *got[N], *dso[N];
	struct ms_code_names names = { 0 };
	struct ms_code_sym sym[3];
	struct ms_code_later later;
	struct ms_namer *n = NULL;
	struct ms_event e;
	struct text t[32];
	size_t i;

	assert_non_null(m);
	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	if (namer) {
		unsetenv("MAPSCOPE_NAMER");
		if (!(n = ms_namer_new(s, 768, 0))) {
			free(m);
			ms_symbols_free(s);
			skip();                           /* one CPU: no namer */
		}
	}
	ms_code_later_init_symbols(&later, s, n);
	m->later = &later;
	for (i = 0; i < N; i++) {
		want[i] = ms_code_name(s, pid, ips[i], &want_dso[i]);
		got[i] = ms_code_memo_name(m, s, pid, ips[i], &dso[i]);
		assert_true(i == N - 1 ? dso[i] == want_dso[i] && got[i] == want[i] : dso[i] == ms_code_later_tag);
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(ms_symbols_code_symbol(s, pid, ips[i], &sym[i]), 1);
	assert_true(sym[0].id && sym[0].id == sym[1].id && sym[2].id && sym[0].id != sym[2].id);
	assert_int_equal(sym[0].id >> 56, 1);           /* the first table: where its string lies in it */
	assert_string_equal(want[0], "names_a");   /* named: the test tests something */
	assert_string_equal(want[2], "names_b");
	assert_string_equal(want[3], "[unknown]");
	assert_int_equal(m->later_error, 0);
	e = task_ev(MS_EV_EXEC, pid);                    /* the binaries go */
	ms_symbols_track(s, &e);
	assert_int_equal(ms_code_names_take(&names, &later), 0);
	for (i = 0; i < N; i++) {
		ms_code_names_get(&names, &got[i], &dso[i]);
		assert_string_equal(got[i], want[i]);
		assert_string_equal(dso[i], want_dso[i]);
	}
	assert_true(got[0] == got[1] && dso[0] == dso[1] && got[0] != got[2]);
	assert_true(got[3] == want[3] && dso[3] == want_dso[3]);
	ms_code_names_release(&names);
	ms_code_later_release(&later);
	ms_namer_free(n);
	free(m);
	ms_symbols_free(s);
}

static void named_later_through_the_pins(void **state)
{
	(void)state;
	named_later(false);
}

static void named_later_on_the_namers_thread(void **state)
{
	(void)state;
	named_later(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_later_through_the_pins),
		cmocka_unit_test(named_later_on_the_namers_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
