/*
 * A JIT's table: an address is named by the entry holding it that is live
 * at the instant asked, the latest loaded where two are (a reused
 * address); a move ends the old place and starts the new; names are
 * interned, one pointer per name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "symbols/jit.h"

static const char *name_at(const struct jit_table *t, uint64_t addr, uint64_t at)
{
	const struct jit_entry *e = ms_jit_find(t, addr, at);

	return e ? e->name : NULL;
}

static void untimed_later_line_wins(void **state)
{
	struct jit_table *t = ms_jit_new("/tmp/perf-1.map");

	(void)state;
	assert_non_null(t);
	assert_int_equal(ms_jit_add(t, 0x1000, 0x100, 0, 0, "old"), 0);
	assert_int_equal(ms_jit_add(t, 0x2000, 0x100, 0, 0, "other"), 0);
	assert_int_equal(ms_jit_add(t, 0x1080, 0x100, 0, 0, "new"), 0);   /* over old's second half */
	assert_null(name_at(t, 0x1000, 0));                               /* not sorted yet: nothing */
	ms_jit_sort(t);
	assert_string_equal(name_at(t, 0x1000, 0), "old");
	assert_string_equal(name_at(t, 0x107f, 0), "old");
	assert_string_equal(name_at(t, 0x1080, 0), "new");
	assert_string_equal(name_at(t, 0x10ff, 0), "new");
	assert_string_equal(name_at(t, 0x117f, 0), "new");
	assert_null(name_at(t, 0x1180, 0));
	assert_null(name_at(t, 0xfff, 0));
	assert_string_equal(name_at(t, 0x20ff, 0), "other");
	assert_null(name_at(t, 0x2100, 0));
	ms_jit_free(t);
}

static void timed_by_instant(void **state)
{
	struct jit_table *t = ms_jit_new("jit-1.dump");

	(void)state;
	assert_int_equal(ms_jit_add(t, 0x1000, 0x40, 100, 1, "first"), 0);
	assert_int_equal(ms_jit_add(t, 0x1000, 0x40, 200, 2, "second"), 0);   /* the address reused */
	ms_jit_sort(t);
	assert_null(name_at(t, 0x1010, 99));                 /* before any load */
	assert_string_equal(name_at(t, 0x1010, 100), "first");
	assert_string_equal(name_at(t, 0x1010, 199), "first");
	assert_string_equal(name_at(t, 0x1010, 200), "second");
	assert_string_equal(name_at(t, 0x1010, UINT64_MAX - 1), "second");
	ms_jit_free(t);
}

static void move_ends_and_starts(void **state)
{
	struct jit_table *t = ms_jit_new("jit-1.dump");

	(void)state;
	assert_int_equal(ms_jit_add(t, 0x1000, 0x40, 100, 7, "f"), 0);
	assert_int_equal(ms_jit_move(t, 7, 0x1000, 0x5000, 0x40, 300), 0);
	assert_int_equal(ms_jit_move(t, 8, 0x1000, 0x6000, 0x40, 300), -ENOENT);  /* no such code */
	ms_jit_sort(t);
	assert_string_equal(name_at(t, 0x1000, 299), "f");
	assert_null(name_at(t, 0x1000, 300));
	assert_null(name_at(t, 0x5000, 299));
	assert_string_equal(name_at(t, 0x503f, 300), "f");
	assert_ptr_equal(name_at(t, 0x1000, 299), name_at(t, 0x5000, 300));
	ms_jit_free(t);
}

static void names_interned(void **state)
{
	struct jit_table *t = ms_jit_new("/tmp/perf-1.map");
	char name[32];
	int i;

	(void)state;
	for (i = 0; i < 2000; i++) {                         /* the name table grows */
		snprintf(name, sizeof(name), "JS:*f%d", i % 700);
		assert_int_equal(ms_jit_add(t, 0x10000 + (uint64_t)i * 0x100, 0x100, 0, 0, name), 0);
	}
	ms_jit_sort(t);
	assert_int_equal(t->nr_names, 700);
	assert_ptr_equal(name_at(t, 0x10000, 0), name_at(t, 0x10000 + 700 * 0x100, 0));
	assert_string_equal(name_at(t, 0x10000 + 1999 * 0x100 + 0xff, 0), "JS:*f599");
	ms_jit_free(t);
}

/* An entry reaching past the top of the address space is cut there, not wrapped. */
static void size_overflow_clamped(void **state)
{
	struct jit_table *t = ms_jit_new("/tmp/perf-1.map");

	(void)state;
	assert_int_equal(ms_jit_add(t, UINT64_MAX - 0x10, 0x100, 0, 0, "top"), 0);
	ms_jit_sort(t);
	assert_string_equal(name_at(t, UINT64_MAX - 1, 0), "top");
	assert_null(name_at(t, 0x10, 0));
	ms_jit_free(t);
	ms_jit_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(untimed_later_line_wins),
		cmocka_unit_test(timed_by_instant),
		cmocka_unit_test(move_ends_and_starts),
		cmocka_unit_test(names_interned),
		cmocka_unit_test(size_overflow_clamped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
