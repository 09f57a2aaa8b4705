/*
 * Demangling: C++ and Rust (legacy and v0) names read as perf prints them,
 * without parameters or Rust's hash; what is not mangled, or is damaged,
 * is left as it is; one string per raw name, so that callers can group by
 * the pointer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "symbols/internal.h"

static void expect(const char *raw, const char *want)
{
	char *d = ms_demangle(raw);

	assert_non_null(d);
	assert_string_equal(d, want);
	free(d);
}

static void cxx_without_parameters(void **state)
{
	(void)state;
	/* What node's report showed raw, as perf shows it. */
	expect("_ZN2v88internal11FactoryBaseINS0_7FactoryEE23NewFixedArrayWithFillerENS0_6HandleINS0_3MapEEEiNS4_INS0_"
	       "7OddballEEENS0_14AllocationTypeE",
	       "v8::internal::FactoryBase<v8::internal::Factory>::NewFixedArrayWithFiller");
	expect("_ZN2v88internal19EvacuateVisitorBase16RawMigrateObjectILNS1_13MigrationModeE1EEEvPS1_NS0_10HeapObjectES5_"
	       "iNS0_15AllocationSpaceE",
	       "v8::internal::EvacuateVisitorBase::RawMigrateObject<(v8::internal::EvacuateVisitorBase::MigrationMode)1>");
	expect("_ZNKSt5ctypeIcE8do_widenEc", "std::ctype<char>::do_widen");
	expect("_Znwm", "operator new");
	expect("_Z3fooi", "foo");
}

static void rust_legacy_and_v0(void **state)
{
	(void)state;
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");    /* the hash dropped */
	expect("_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17h1e4ff1d9b4f27e66E",
	       "<alloc::string::String as core::fmt::Display>::fmt");
	expect("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
}

static void others_left_alone(void **state)
{
	(void)state;
	assert_null(ms_demangle("main"));
	assert_null(ms_demangle("_int_malloc"));
	assert_null(ms_demangle("_Z"));
	assert_null(ms_demangle("_ZN3foo"));           /* cut short */
	assert_null(ms_demangle("_RNv"));
	assert_null(ms_demangle(NULL));
}

/* "_Z<len><len x's>v": one function named len x's. */
static char *long_name(size_t len)
{
	char *raw = malloc(len + 32);
	int at;

	assert_non_null(raw);
	at = snprintf(raw, 32, "_Z%zu", len);
	memset(raw + at, 'x', len);
	strcpy(raw + at + len, "v");
	return raw;
}

/* Past the length cap a name stays mangled rather than costing without bound. */
static void huge_name_left_mangled(void **state)
{
	char *ok = long_name(1000), *huge = long_name(70000), *d = ms_demangle(ok);

	(void)state;
	assert_non_null(d);
	assert_int_equal(strlen(d), 1000);
	assert_null(ms_demangle(huge));
	free(d);
	free(ok);
	free(huge);
}

static void one_string_per_raw_name(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	char a[] = "_Z3fooi", b[] = "_Z3fooi", c[] = "plain", more[1000][8];
	const char *da, *db;
	int i;

	(void)state;
	assert_non_null(s);
	da = ms_symbols_demangled(s, a);
	db = ms_symbols_demangled(s, b);
	assert_string_equal(da, "foo");
	assert_string_equal(db, "foo");
	assert_ptr_not_equal(da, db);                    /* two symbols stay two */
	assert_ptr_equal(ms_symbols_demangled(s, a), da);
	assert_ptr_equal(ms_symbols_demangled(s, c), c);
	for (i = 0; i < 1000; i++) {                     /* the table grows and keeps its answers */
		strcpy(more[i], "_Z3bari");
		assert_string_equal(ms_symbols_demangled(s, more[i]), "bar");
	}
	assert_ptr_equal(ms_symbols_demangled(s, a), da);
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cxx_without_parameters),
		cmocka_unit_test(rust_legacy_and_v0),
		cmocka_unit_test(others_left_alone),
		cmocka_unit_test(huge_name_left_mangled),
		cmocka_unit_test(one_string_per_raw_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
