/*
 * The library's log: messages reach the installed callback whole, and
 * nothing without one; a thread's deferred messages wait in order until
 * handed on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/log.h"

struct seen {
	int calls;
	enum ms_log_level level;
	char msg[2048];
};

static void record(enum ms_log_level level, const char *msg, void *ctx)
{
	struct seen *s = ctx;

	s->calls++;
	s->level = level;
	strncpy(s->msg, msg, sizeof(s->msg) - 1);
}

static void reaches_the_callback(void **state)
{
	struct seen s = { 0 };

	(void)state;
	ms_log_set(record, &s);
	ms_err("cannot open '%s': %s", "x.data", "No such file or directory");
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.level, MS_LOG_ERROR);
	assert_string_equal(s.msg, "cannot open 'x.data': No such file or directory");
	ms_warn("%d records lost", 42);
	assert_int_equal(s.level, MS_LOG_WARN);
	assert_string_equal(s.msg, "42 records lost");
	ms_debug("d");
	assert_int_equal(s.level, MS_LOG_DEBUG);
	assert_int_equal(s.calls, 3);
	ms_log_set(NULL, NULL);
}

/* NULL silences the library: no call, no crash. */
static void silenced(void **state)
{
	struct seen s = { 0 };

	(void)state;
	ms_log_set(record, &s);
	ms_log_set(NULL, NULL);
	ms_err("nobody hears this");
	assert_int_equal(s.calls, 0);
}

/* A long message is cut, still NUL-terminated, never overrun. */
static void long_message_is_bounded(void **state)
{
	struct seen s = { 0 };
	char big[4096];

	(void)state;
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ms_log_set(record, &s);
	ms_warn("%s", big);
	assert_int_equal(s.calls, 1);
	assert_true(strlen(s.msg) > 0 && strlen(s.msg) < sizeof(big) - 1);
	assert_true(strspn(s.msg, "z") == strlen(s.msg));
	ms_log_set(NULL, NULL);
}

/* Deferred: nothing reaches the callback until the queue is flushed, then all of it, in order. */
static void deferred_in_order(void **state)
{
	struct seen s = { 0 };
	struct ms_logq q = { 0 };

	(void)state;
	ms_log_set(record, &s);
	ms_log_defer(&q);
	ms_err("first %d", 1);
	ms_warn("second");
	ms_log_defer(NULL);
	assert_int_equal(s.calls, 0);
	assert_int_equal(q.n, 2);
	ms_err("direct");
	assert_int_equal(s.calls, 1);
	ms_logq_flush(&q);
	assert_int_equal(s.calls, 3);
	assert_int_equal(s.level, MS_LOG_WARN);
	assert_string_equal(s.msg, "second");
	assert_int_equal(q.n, 0);
	ms_logq_flush(&q);                   /* empty: nothing again */
	assert_int_equal(s.calls, 3);
	ms_log_defer(&q);
	ms_debug("dropped");
	ms_log_defer(NULL);
	ms_logq_release(&q);
	assert_int_equal(s.calls, 3);
	ms_log_set(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deferred_in_order),
		cmocka_unit_test(reaches_the_callback),
		cmocka_unit_test(silenced),
		cmocka_unit_test(long_message_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
