/*
 * The recorder's watchdog: its teardown runs when the recorder's end of the
 * pipe closes, not before; a teardown that fails is reported as -EIO.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/watchdog.h"

static char mark[64];

static int touch_mark(void *arg)
{
	FILE *f = fopen(mark, "w");

	if (!f)
		return -errno;
	fputs(arg, f);
	fclose(f);
	return 0;
}

static int failing(void *arg)
{
	(void)arg;
	return -EBUSY;
}

static void runs_at_stop(void **state)
{
	struct ms_watchdog w;

	(void)state;
	snprintf(mark, sizeof(mark), "/tmp/ms-watchdog.%d", (int)getpid());
	unlink(mark);
	assert_int_equal(ms_watchdog_start(&w, touch_mark, "done"), 0);
	assert_true(w.pid > 0);
	usleep(50000);
	assert_int_not_equal(access(mark, F_OK), 0);        /* not while the recorder lives */
	assert_int_equal(ms_watchdog_stop(&w), 0);
	assert_int_equal(access(mark, F_OK), 0);
	unlink(mark);
	assert_int_equal(ms_watchdog_stop(&w), 0);           /* again: nothing left to do */
}

static void failure_reported(void **state)
{
	struct ms_watchdog w;

	(void)state;
	assert_int_equal(ms_watchdog_start(&w, failing, NULL), 0);
	assert_int_equal(ms_watchdog_stop(&w), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_at_stop),
		cmocka_unit_test(failure_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
