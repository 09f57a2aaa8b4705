/*
 * The syscalls record follows: the kernel filters on the entries that are
 * mostly about something else (ioctl, prctl), the stack each entry copies
 * (the calls that make memory with alloc stacks; userfaultfd's argument;
 * the strings of prctl and rename), and which entries wake the reader.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <mapscope/live.h>

#include "kernel/sysevents.h"

static void filters(void **state)
{
	(void)state;
	assert_string_equal(ms_sysevent_filter("ioctl", true), "cmd == 0xc020aa00 || cmd == 0x8010aa01");
	assert_string_equal(ms_sysevent_filter("prctl", true), "option == 0x53564d41 || option == 67");
	assert_null(ms_sysevent_filter("ioctl", false));       /* an exit holds the result only */
	assert_null(ms_sysevent_filter("mmap", true));
}

static void stacks(void **state)
{
	(void)state;
	assert_int_equal(ms_sysevent_stack_bytes("mmap", true, MS_LIVE_ALLOC_STACKS, true), MS_LIVE_ALLOC_STACK_BYTES);
	assert_int_equal(ms_sysevent_stack_bytes("mmap", true, 0, true), 0);
	assert_int_equal(ms_sysevent_stack_bytes("mmap", false, MS_LIVE_ALLOC_STACKS, true), 0);
	assert_int_equal(ms_sysevent_stack_bytes("munmap", true, MS_LIVE_CALLCHAIN, true), 64);
	assert_int_equal(ms_sysevent_stack_bytes("ioctl", true, 0, true), 2048);
	assert_int_equal(ms_sysevent_stack_bytes("renameat2", true, 0, true), MS_LIVE_ALLOC_STACK_BYTES);
	assert_int_equal(ms_sysevent_stack_bytes("prctl", true, 0, false), 0);   /* no registers, no stack */
	assert_true(ms_sysevent_wakes("prctl", true));
	assert_true(ms_sysevent_wakes("rename", true));
	assert_false(ms_sysevent_wakes("rename", false));
	assert_false(ms_sysevent_wakes("mmap", true));
}

static void table(void **state)
{
	size_t i;
	bool prctl = false, pkey = false;

	(void)state;
	for (i = 0; i < ms_nr_sysevents; i++) {
		prctl |= !strcmp(ms_sysevents[i], "prctl");
		/* mprotect with a key: optional (from MS_SYSEVENTS_FIRST_OPTIONAL on) */
		pkey |= !strcmp(ms_sysevents[i], "pkey_mprotect") && i >= MS_SYSEVENTS_FIRST_OPTIONAL;
	}
	assert_true(prctl);
	assert_true(pkey);
	assert_string_equal(ms_sysevents[0], "mmap");     /* the required ones first */
	assert_true(ms_nr_sysevents <= 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(filters),
		cmocka_unit_test(stacks),
		cmocka_unit_test(table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
