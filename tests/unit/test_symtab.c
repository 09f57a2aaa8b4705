/*
 * Symbol tables: the sorted table names every address as libdwfl's own search
 * does (dwfl_module_addrinfo(), a walk over all symbols), checked on the
 * binaries this test runs from: itself, the C library and the loader, and on
 * a stripped compiler; so do the gaps between symbols, made from the
 * table's own pass over them; and every byte of a table made for the
 * rules. The sort of its keys orders as qsort does.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* Maps path (st: its inode) whole at at into process pid of s. */
static void map_whole(struct ms_symbols *s, uint32_t pid, const char *path, const struct stat *st, uint64_t at,
		      uint64_t len)
{
	struct ms_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MS_EV_MAP;
	ev.pid = ev.tid = pid;
	ev.map = (struct ms_event_map){ .start = at, .end = at + len, .vma_start = at, .vma_end = at + len,
					.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .ino = st->st_ino,
					.name = path };
	ms_symbols_track(s, &ev);
}

/*
 * A large .dynsym alone (a stripped cc1's 28,401 symbols, read in one
 * pass, 32 ahead; an ET_EXEC, mapped whole at its own addresses): most of its addresses lie in no sized symbol, named by
 * the gaps from the table lent to them. Every answer is libdwfl's own, in
 * code and data, at random, in runs of neighbours and at symbols' starts.
 */
static void stripped_compiler_named_as_libdwfl_does(void **state)
{
	static const char *const paths[] = { "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
					     "/usr/libexec/gcc/x86_64-linux-gnu/12/cc1" };
	struct ms_symbols *fast, *exact;
	const char *path = NULL;
	struct ms_sym a, b;
	uint64_t addr = 0x400000, len;
	size_t i, named = 0;
	struct stat st;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && !path; i++)
		if (!stat(paths[i], &st))
			path = paths[i];
	if (!path)
		skip();                      /* no compiler here */
	len = ((uint64_t)st.st_size + 4095) & ~(uint64_t)4095;
	fast = ms_symbols_new();
	exact = ms_symbols_new();
	assert_non_null(fast);
	assert_non_null(exact);
	ms_symbols_exact_only(exact, true);
	map_whole(fast, 7, path, &st, 0x400000, len);
	map_whole(exact, 7, path, &st, 0x400000, len);
	srand(5);
	for (i = 0; i < 1500; i++) {
		addr = i % 3 ? 0x400000 + ((uint64_t)rand() << 16 ^ (uint64_t)rand()) % len : addr + 1;
		assert_int_equal(ms_symbols_resolve(fast, 7, addr, false, &a), ms_symbols_resolve(exact, 7, addr, false, &b));
		if (i % 25 == 0 && b.name && b.offset) {     /* and the start of the symbol named */
			addr -= b.offset;
			assert_int_equal(ms_symbols_resolve(fast, 7, addr, false, &a),
					 ms_symbols_resolve(exact, 7, addr, false, &b));
		}
		if (!same(a.name, b.name) || a.offset != b.offset)
			fail_msg("0x%llx in %s: %s+%llu, libdwfl says %s+%llu", (unsigned long long)addr, path,
				 a.name ? a.name : "(none)", (unsigned long long)a.offset,
				 b.name ? b.name : "(none)", (unsigned long long)b.offset);
		named += a.name != NULL;
	}
	print_message("%zu of 1500 named\n", named);
	assert_true(named > 100);
	ms_symbols_free(fast);
	ms_symbols_free(exact);
}

/*
 * Every byte of a table made for the rules (tests/unit/dso/symgaps.c),
 * named through the sorted table as libdwfl's search names it: where two
 * sized symbols start at one address and bind alike, the narrower where
 * it holds the address, whichever is listed first.
 */
static void every_byte_of_a_made_table(void **state)
{
	struct ms_symbols *fast = ms_symbols_new(), *exact = ms_symbols_new();
	const uint64_t at = 0x7f0000000000;
	struct ms_sym a, b;
	size_t named = 0, narrow = 0;
	uint64_t addr, end;
	struct stat st;

	(void)state;
	assert_int_equal(stat(SYMGAPS_FIXTURE, &st), 0);
	assert_non_null(fast);
	assert_non_null(exact);
	ms_symbols_exact_only(exact, true);
	map_whole(fast, 7, SYMGAPS_FIXTURE, &st, at, 4096);
	map_whole(exact, 7, SYMGAPS_FIXTURE, &st, at, 4096);
	assert_int_equal(fast->nr_bins, 1);
	assert_int_equal(ms_symbols_resolve(fast, 7, at, false, &a), 0);
	end = at + fast->bins[0].hi;
	assert_true(fast->bins[0].lo == 0 && end > at);
	for (addr = at; addr < end; addr++) {
		assert_int_equal(ms_symbols_resolve(fast, 7, addr, false, &a), ms_symbols_resolve(exact, 7, addr, false, &b));
		if (!same(a.name, b.name) || a.offset != b.offset)
			fail_msg("0x%llx: %s+%llu, libdwfl says %s+%llu", (unsigned long long)(addr - at),
				 a.name ? a.name : "(none)", (unsigned long long)a.offset,
				 b.name ? b.name : "(none)", (unsigned long long)b.offset);
		named += a.name != NULL;
		narrow += a.name && !strcmp(a.name, "l_narrow");
	}
	assert_int_equal(narrow, 16);
	assert_true(named > 500);
	ms_symbols_free(fast);
	ms_symbols_free(exact);
}

/*
 * A binary's table holds its entries, not a slot for each of its symbols:
 * made for all of them, it is cut to what it keeps (a stripped library
 * has few sizeless globals), within the page a large block is rounded to.
 */
static void tables_cut_to_what_they_hold(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	const struct bin *b;
	struct text t[32];
	struct ms_sym sym;
	size_t n, i, built = 0;

	assert_non_null(s);
	n = map_own_code(s, t, 32);
	for (i = 0; i < n; i++)
		assert_int_equal(ms_symbols_resolve(s, (uint32_t)getpid(), t[i].start + (t[i].end - t[i].start) / 2,
						    false, &sym), 0);
	for (i = 0; i < s->nr_bins; i++) {
		b = &s->bins[i];
		if (!b->table)
			continue;
		built++;
		assert_true(malloc_usable_size(b->sized) <= b->nr_sized * sizeof(*b->sized) + 4096 + 16);
		assert_true(malloc_usable_size(b->sizeless) <= b->nr_sizeless * sizeof(*b->sizeless) + 4096 + 16);
		assert_true(b->nr_sizeless || !b->sizeless);
	}
	assert_true(built >= 3);             /* this test, libc, the loader */
	ms_symbols_free(s);
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * ms_u64_sort() against qsort: the sizes either side of the insertion
 * sort's bound and of each digit width, keys close together far from 0
 * (addresses), over all 64 bits, and all alike.
 */
static void sorts_as_qsort_does(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 23, 24, 25, 100, 1000, 5000, 20000, 100000 };
	static const uint64_t spans[] = { 0, 1, 1000, 1ull << 26, 1ull << 40, UINT64_MAX };
	uint64_t *v = malloc(100000 * sizeof(*v)), *w = malloc(100000 * sizeof(*w));
	size_t i, j, k;

	(void)state;
	assert_non_null(v);
	assert_non_null(w);
	srand(3);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (j = 0; j < sizeof(spans) / sizeof(spans[0]); j++) {
			for (k = 0; k < sizes[i]; k++) {
				v[k] = ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^ (uint64_t)rand();
				v[k] = spans[j] == UINT64_MAX ? v[k] : 0x7f0000000000ull + (spans[j] ? v[k] % spans[j] : 0);
				w[k] = v[k];
			}
			ms_u64_sort(v, sizes[i]);
			qsort(w, sizes[i], sizeof(*w), u64_order);
			for (k = 0; k < sizes[i]; k++)
				if (v[k] != w[k])
					fail_msg("%zu keys in a span of %llu: 0x%llx at %zu, qsort says 0x%llx", sizes[i],
						 (unsigned long long)spans[j], (unsigned long long)v[k], k,
						 (unsigned long long)w[k]);
		}
	free(v);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_names_as_libdwfl_does),
		cmocka_unit_test(stripped_compiler_named_as_libdwfl_does),
		cmocka_unit_test(every_byte_of_a_made_table),
		cmocka_unit_test(sorts_as_qsort_does),
		cmocka_unit_test(tables_cut_to_what_they_hold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
