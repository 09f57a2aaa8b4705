/*
 * dwarf_getscopes() from an index of each compile unit: for addresses all
 * over this test's own binary (libmapscope's code, and inlined calls made
 * here, nested) and the C library (where its debug file is installed),
 * the same count and the same DIEs as dwarf_getscopes itself; answered by
 * the index, each unit indexed once.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <elfutils/libdwfl.h>

#include "symbols/scopes.h"

volatile int scopes_sink;

static inline __attribute__((always_inline)) void scopes_leaf(int n)
{
	scopes_sink += n;
	scopes_sink ^= n << 3;
}

static inline __attribute__((always_inline)) void scopes_middle(int n)
{
	scopes_leaf(n);                       /* an inlined call inside an inlined call */
	scopes_sink *= 7;
	scopes_leaf(n + 1);
}

__attribute__((noinline)) void scopes_outer(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		scopes_middle(i);
		if (scopes_sink & 1) {
			int k = scopes_sink;      /* a lexical block */

			scopes_leaf(k);
		}
	}
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
};

struct tally {
	unsigned long asked, differ;
	uint64_t units, answers;
};

/* Both answers for pc in cu: counted, and where they differ, said. */
static void compare(struct ms_scopes **s, Dwarf_Die *cu, Dwarf_Addr pc, struct tally *t)
{
	Dwarf_Die *want = NULL, *got = NULL;
	int n = dwarf_getscopes(cu, pc, &want), m = ms_scopes_get(s, cu, pc, &got);

	t->asked++;
	if (n != m || (n > 0 && memcmp(want, got, (size_t)n * sizeof(*want)))) {
		if (t->differ++ < 5)
			print_message("0x%llx: %d scopes, %d from the index\n", (unsigned long long)pc, n, m);
	}
	if (n > 0)
		free(want);
	if (m > 0)
		free(got);
}

/* Every step-th address of each unit of the binary at path, where it has DWARF; false where it has none. */
static bool compare_binary(const char *path, unsigned int step, struct tally *t)
{
	int fd = open(path, O_RDONLY);
	Dwfl *dwfl = dwfl_begin(&callbacks);
	struct ms_scopes *s = NULL;
	Dwarf_Addr bias, base, lo, hi, pc;
	Dwfl_Module *mod = NULL;
	Dwarf_Die *cu = NULL;
	ptrdiff_t off;
	char copy[4096];

	assert_true(fd >= 0);
	assert_non_null(dwfl);
	snprintf(copy, sizeof(copy), "%s", path);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, basename(copy), path, fd, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	assert_non_null(mod);
	if (!dwfl_module_getdwarf(mod, &bias)) {
		dwfl_end(dwfl);
		return false;
	}
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)))
		for (off = 0; (off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0;)
			for (pc = lo; pc < hi; pc += step)
				compare(&s, cu, pc, t);
	ms_scopes_counts(s, &t->units, &t->answers);
	ms_scopes_free(s);
	dwfl_end(dwfl);
	return true;
}

static void answers_as_libdw_here(void **state)
{
	struct tally t = { 0 };
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	scopes_outer(3);
	assert_true(n > 0);
	self[n] = '\0';
	if (!compare_binary(self, 3, &t))
		skip();                           /* built without debug information */
	print_message("%lu addresses, %llu units, %llu answered by the index\n", t.asked,
		      (unsigned long long)t.units, (unsigned long long)t.answers);
	assert_int_equal(t.differ, 0);
	assert_true(t.asked > 300);
	assert_true(t.answers > t.asked / 2);     /* the index answered */
	assert_true(t.units > 0 && t.units < t.asked / 10);
}

static void answers_as_libdw_in_libc(void **state)
{
	struct tally t = { 0 };
	Dl_info info;

	(void)state;
	assert_true(dladdr((void *)(uintptr_t)&qsort, &info) && info.dli_fname);
	if (!compare_binary(info.dli_fname, 211, &t))
		skip();                           /* no debug file for it (libc6-dbg) */
	assert_int_equal(t.differ, 0);
	assert_true(t.answers > t.asked / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(answers_as_libdw_here),
		cmocka_unit_test(answers_as_libdw_in_libc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
