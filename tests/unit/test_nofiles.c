/*
 * The watch part (libmapscope-watch, linked here instead of libmapscope):
 * a file session and symbols are refused with ENOTSUP, not crashed into,
 * and a watch opens in whatever mode this machine allows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mapscope/session.h>
#include <mapscope/symbols.h>
#include <mapscope/watch.h>

static void files_and_symbols_refused(void **state)
{
	(void)state;
	errno = 0;
	assert_null(ms_session_open("/dev/null", NULL));
	assert_int_equal(errno, ENOTSUP);
	errno = 0;
	assert_null(ms_symbols_new());
	assert_int_equal(errno, ENOTSUP);
}

static void a_watch_opens(void **state)
{
	struct ms_watch *w;

	(void)state;
	assert_int_equal(ms_watch_open(0, MS_WATCH_NO_KERNEL | MS_WATCH_NO_UFFD, &w), 0);
	assert_int_equal(ms_watch_mode(w), MS_WATCH_INTERPOSE);
	ms_watch_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(files_and_symbols_refused),
		cmocka_unit_test(a_watch_opens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
