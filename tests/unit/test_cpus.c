/* CPU lists as the kernel writes them ("0-3,6"), and this machine's online CPUs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/cpus.h"

static void lists(void **state)
{
	int cpus[8];

	(void)state;
	assert_int_equal(ms_cpus_parse("0-3,6\n", cpus, 8), 5);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 6);
	assert_int_equal(ms_cpus_parse("5", cpus, 8), 1);
	assert_int_equal(cpus[0], 5);
	assert_int_equal(ms_cpus_parse("0-15", cpus, 8), 8);      /* filled up to max */
	assert_int_equal(ms_cpus_parse("3-1", cpus, 8), -EINVAL);
	assert_int_equal(ms_cpus_parse("x", cpus, 8), -EINVAL);
}

static void online(void **state)
{
	int cpus[4096];

	(void)state;
	assert_int_equal(ms_cpus_online(cpus, 4096), (int)sysconf(_SC_NPROCESSORS_ONLN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lists),
		cmocka_unit_test(online),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
