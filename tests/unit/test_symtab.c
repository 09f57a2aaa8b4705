/*
 * Symbol tables: the sorted table names every address as libdwfl's own search
 * does (dwfl_module_addrinfo(), a walk over all symbols), checked on the
 * binaries this test runs from: itself, the C library and the loader.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "symbols/internal.h"     /* ms_symbols_exact_only() */

#include "own_maps.h"

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void table_names_as_libdwfl_does(void **state)
{
	struct ms_symbols *fast = ms_symbols_new(), *exact = ms_symbols_new();
	struct text t[32];
	struct ms_sym a, b;
	uint32_t pid = (uint32_t)getpid();
	size_t n, i, k, w, named = 0, checked = 0;
	uint64_t addr, span;

	assert_non_null(fast);
	assert_non_null(exact);
	ms_symbols_exact_only(exact, true);
	n = map_own_code(fast, t, 32);
	assert_int_equal(map_own_code(exact, t, 32), n);
	assert_true(n >= 3);                 /* this test, libc, the loader */
	srand(7);
	for (i = 0; i < n; i++) {
		span = t[i].end - t[i].start;
		/* Spread over the whole text, then dense windows where symbols meet. */
		for (k = 0; k < 1500; k++) {
			addr = t[i].start + (uint64_t)rand() % span;
			for (w = 0; w < (k % 150 == 0 ? 256 : 1); w++, addr += 4) {
				if (addr >= t[i].end)
					break;
				assert_int_equal(ms_symbols_resolve(fast, pid, addr, false, &a),
						 ms_symbols_resolve(exact, pid, addr, false, &b));
				if (!same(a.name, b.name) || a.offset != b.offset || !same(a.dso, b.dso))
					fail_msg("0x%llx in %s: %s+%llu, libdwfl says %s+%llu", (unsigned long long)addr,
						 b.dso ? b.dso : "?", a.name ? a.name : "(none)",
						 (unsigned long long)a.offset, b.name ? b.name : "(none)",
						 (unsigned long long)b.offset);
				named += a.name != NULL;
				checked++;
			}
		}
	}
	print_message("%zu addresses in %zu binaries, %zu named\n", checked, n, named);
	assert_true(named > checked / 2);
	ms_symbols_free(fast);
	ms_symbols_free(exact);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_names_as_libdwfl_does),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
