/* The fields every format writes alike: permissions, what a change did, code, set-aside samples. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "output/format.h"

static void perms(void **state)
{
	char p[5];

	(void)state;
	ms_format_perms(PROT_READ | PROT_WRITE, MAP_PRIVATE, p);
	assert_string_equal(p, "rw-p");
	ms_format_perms(PROT_READ | PROT_EXEC, MAP_SHARED, p);
	assert_string_equal(p, "r-xs");
	ms_format_perms(PROT_NONE, MAP_PRIVATE, p);
	assert_string_equal(p, "---p");
}

/* Decimal as printf's "%" PRIu64 writes it, every width up to the largest. */
static void decimal_as_printf(void **state)
{
	char a[24], b[24];
	uint64_t v;
	int k;

	(void)state;
	for (k = 0, v = 0; k < 64; k++, v = v * 3 + 7) {
		*ms_format_dec(a, v) = '\0';
		snprintf(b, sizeof(b), "%" PRIu64, v);
		assert_string_equal(a, b);
	}
	*ms_format_dec(a, UINT64_MAX) = '\0';
	assert_string_equal(a, "18446744073709551615");
	*ms_format_dec(a, 0) = '\0';
	assert_string_equal(a, "0");
}

/*
 * What printf's "%.1f" writes of the size in the unit ms_format_size()
 * chose for it (the digits were printf's before they were written by hand).
 */
static void size_by_printf(uint64_t bytes, const char *got, char out[16])
{
	static const char units[] = "KMGTPE";
	const char *unit = strchr(got, ' ');
	double v = (double)bytes;
	int u;

	if (bytes < 1024 || !unit || !strchr(units, unit[1])) {
		snprintf(out, 16, "%u B", (unsigned int)bytes);
		return;
	}
	for (u = 0; u <= (int)(strchr(units, unit[1]) - units); u++)
		v /= 1024;
	snprintf(out, 16, "%.1f %s", v, unit + 1);
}

/* Every size near a tenth's rounding edge (ties included: 1280 bytes is 1.25 KiB) says what printf says. */
static void size_as_printf(void **state)
{
	char a[16], b[16];
	uint64_t base, d, v;
	int shift, t;

	(void)state;
	for (shift = 0; shift < 64; shift += 10)
		for (t = 0; t <= 10250; t++) {
			/* t/10 + 1/20 of 1024^k: the rounding edge of tenths, and the bytes either side of it */
			base = (uint64_t)(((unsigned __int128)(2 * t + 1) << shift) * 1024 / 20);
			for (d = 0; d < 5; d++) {
				v = base + d - 2;
				ms_format_size(v, a);
				size_by_printf(v, a, b);
				assert_string_equal(a, b);
			}
		}
	for (v = 0; v < 200000; v++) {
		ms_format_size(v, a);
		size_by_printf(v, a, b);
		assert_string_equal(a, b);
	}
	for (shift = 52; shift < 64; shift++)              /* past 2^53 the double rounds the size */
		for (d = 0; d < 3000; d++) {
			v = (UINT64_C(1) << shift) + d * 104729 - 1;
			ms_format_size(v, a);
			size_by_printf(v, a, b);
			assert_string_equal(a, b);
		}
	ms_format_size(1280, a);
	assert_string_equal(a, "1.2 KiB");                  /* 1.25 exactly: a tie, to even */
	ms_format_size(1331, a);
	assert_string_equal(a, "1.3 KiB");
}

/* Sizes for people, in powers of 1024; ranges low to high with 0x. */
static void size_and_range(void **state)
{
	char b[16], r[40];

	(void)state;
	ms_format_size(0, b);
	assert_string_equal(b, "0 B");
	ms_format_size(1023, b);
	assert_string_equal(b, "1023 B");
	ms_format_size(4096, b);
	assert_string_equal(b, "4.0 KiB");
	ms_format_size(64ULL << 20, b);
	assert_string_equal(b, "64.0 MiB");
	ms_format_size(1477468749824ULL, b);          /* a V8 cage's reservation */
	assert_string_equal(b, "1.3 TiB");
	ms_format_size((1ULL << 20) - 1, b);         /* not "1024.0 KiB" */
	assert_string_equal(b, "1.0 MiB");
	ms_format_size(UINT64_MAX, b);
	assert_string_equal(b, "16.0 EiB");
	ms_format_range(0x1000, 0x3000, r);
	assert_string_equal(r, "0x1000-0x3000");
	ms_format_range(0x150f6000, 0x150ee000, r);  /* a brk shrink: old break, new break */
	assert_string_equal(r, "0x150ee000-0x150f6000");
	ms_format_range(0xffffffffff600000ULL, 0xffffffffff601000ULL, r);
	assert_string_equal(r, "0xffffffffff600000-0xffffffffff601000");
	ms_format_range(0, 0, r);
	assert_string_equal(r, "0x0-0x0");
	ms_format_range(UINT64_MAX, 0xa, r);
	assert_string_equal(r, "0xa-0xffffffffffffffff");
	ms_format_range(0x10, UINT64_MAX, r);
	assert_string_equal(r, "0x10-0xffffffffffffffff");
}

static void change_what(void **state)
{
	struct ms_change c = { .prot = -1, .advice = -1, .lock = -1 };
	char buf[16];

	(void)state;
	assert_string_equal(ms_format_change_what(&c, buf), "");
	c.prot = PROT_READ | PROT_EXEC;
	assert_string_equal(ms_format_change_what(&c, buf), "r-x");
	c.prot = -1;
	c.advice = MADV_DONTNEED;
	assert_string_equal(ms_format_change_what(&c, buf), "dontneed");
	c.advice = 9999;
	assert_string_equal(ms_format_change_what(&c, buf), "advice-9999");
	c.advice = -1;
	c.lock = 0;
	assert_string_equal(ms_format_change_what(&c, buf), "unlocked");
	c.lock = MS_LOCK_ONFAULT;
	assert_string_equal(ms_format_change_what(&c, buf), "onfault");
	/* The timeline's word: the same, but a brk down from its old break shrinks. */
	assert_string_equal(ms_format_change_word(&c, buf), "onfault");
	c = (struct ms_change){ .op = MS_OP_BRK, .start = 0x20000, .end = 0x10000, .prot = -1, .advice = -1, .lock = -1 };
	assert_string_equal(ms_format_change_word(&c, buf), "shrink");
	assert_string_equal(ms_format_change_what(&c, buf), "");
	c.end = 0x30000;
	assert_string_equal(ms_format_change_word(&c, buf), "");
}

static void code_without_symbols(void **state)
{
	const char *file = "x";
	char buf[64];
	int line = 7;

	(void)state;
	ms_format_code(NULL, 1, 0x401234, buf, sizeof(buf), &file, &line);
	assert_non_null(strstr(buf, "401234"));            /* no symbols: the raw address */
	assert_null(file);
	assert_int_equal(line, 0);
}

static void set_aside(void **state)
{
	struct ms_session_stats st = { 0 };
	char out[512];

	(void)state;
	ms_format_set_aside(&st, out, sizeof(out));
	assert_string_equal(out, "");
	st.zero_addr = 3;
	st.bad_samples = 1;
	ms_format_set_aside(&st, out, sizeof(out));
	assert_string_equal(out, "3 at address 0 (no data address: perf -d writes 0 for events without one), "
				 "1 that do not fit their records");
	st.samples = 10;
	st.other_samples = 5;
	assert_int_equal(ms_format_file_samples(&st), 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perms),
		cmocka_unit_test(size_and_range),
		cmocka_unit_test(size_as_printf),
		cmocka_unit_test(decimal_as_printf),
		cmocka_unit_test(change_what),
		cmocka_unit_test(code_without_symbols),
		cmocka_unit_test(set_aside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
