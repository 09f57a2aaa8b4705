/* The JSON writer: commas and nesting, the layout, escapes, UTF-8 checked byte by byte. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/json.h"

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct ms_json w;
};

static void out_open(struct out *o, unsigned flags)
{
	o->buf = NULL;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	ms_json_init(&o->w, o->f, flags);
}

/* Closes the stream, checks the text and what ms_json_finish() said. */
static void out_check(struct out *o, int finish, const char *want)
{
	assert_int_equal(ms_json_finish(&o->w), finish);
	fclose(o->f);
	assert_string_equal(o->buf, want);
	free(o->buf);
}

/* A string value alone, as the writer escapes it. */
static void check_str(const char *in, size_t len, const char *want)
{
	struct out o;

	out_open(&o, 0);
	ms_json_str_len(&o.w, in, len);
	out_check(&o, 0, want);
}

/*
 * A key and its value go out in one write where nothing needs escaping
 * and they are short; a long or escaped key or value takes the other way:
 * the bytes are the same either way, numbers of every length among them.
 */
static void test_quick_and_slow_keys(void **state)
{
	static const uint64_t nums[] = { 0, 7, 10, 99, 100, 101, 12345, 1000000000000000ULL, UINT64_MAX };
	char long_key[80], want[4096], *p = want;
	struct out o;
	size_t i;

	(void)state;
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	out_open(&o, MS_JSON_SCRIPT);
	ms_json_object_begin(&o.w);
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		ms_json_key_u64(&o.w, "n", nums[i]);
	ms_json_key_u64(&o.w, long_key, 1);
	ms_json_key_u64(&o.w, "a<b", 2);
	ms_json_key_str(&o.w, "s", "plain");
	ms_json_key_str(&o.w, "s", "a\"b");
	ms_json_key_str(&o.w, long_key, long_key);
	ms_json_key_addr(&o.w, "at", 0);
	ms_json_key_addr(&o.w, "at", 0xffffffffffffffffULL);
	ms_json_key_addr(&o.w, long_key, 0x10);
	ms_json_key_null(&o.w, "z");
	ms_json_key_bool(&o.w, "t", true);
	ms_json_key_bool(&o.w, long_key, false);
	ms_json_object_end(&o.w);
	p += sprintf(p, "{");
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		p += sprintf(p, "%s\"n\": %llu", i ? ", " : "", (unsigned long long)nums[i]);
	sprintf(p, ", \"%s\": 1, \"a\\u003cb\": 2, \"s\": \"plain\", \"s\": \"a\\\"b\", \"%s\": \"%s\", "
		"\"at\": \"0x0\", \"at\": \"0xffffffffffffffff\", \"%s\": \"0x10\", \"z\": null, \"t\": true, "
		"\"%s\": false}", long_key, long_key, long_key, long_key, long_key);
	out_check(&o, 0, want);
}

static void test_commas_and_nesting(void **state)
{
	struct out o;

	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	ms_json_key_u64(&o.w, "samples", 123);
	ms_json_key_int(&o.w, "line", -4);
	ms_json_key(&o.w, "set_aside");
	ms_json_object_begin(&o.w);
	ms_json_object_end(&o.w);
	ms_json_key(&o.w, "a");
	ms_json_array_begin(&o.w);
	ms_json_bool(&o.w, true);
	ms_json_null(&o.w);
	ms_json_object_begin(&o.w);
	ms_json_key_addr(&o.w, "start", 0x7f00);
	ms_json_key_bool(&o.w, "ok", false);
	ms_json_object_end(&o.w);
	ms_json_array_begin(&o.w);
	ms_json_array_end(&o.w);
	ms_json_array_end(&o.w);
	ms_json_key_str(&o.w, "alloc", NULL);
	ms_json_key_addr_or_null(&o.w, "end", 1, false);
	ms_json_object_end(&o.w);
	out_check(&o, 0, "{\"samples\": 123, \"line\": -4, \"set_aside\": {}, \"a\": [true, null, "
			 "{\"start\": \"0x7f00\", \"ok\": false}, []], \"alloc\": null, \"end\": null}");
}

/* Today's report layout: new lines where asked, tight arrays, 16-digit addresses. */
static void test_layout(void **state)
{
	struct out o;
	int i;

	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	ms_json_key_bool(&o.w, "uncertain", false);
	ms_json_newline(&o.w, 1);
	ms_json_key(&o.w, "regions");
	ms_json_array_begin(&o.w);
	for (i = 0; i < 2; i++) {
		ms_json_newline(&o.w, 2);
		ms_json_object_begin(&o.w);
		ms_json_key_u64(&o.w, "id", (uint64_t)i);
		ms_json_object_end(&o.w);
	}
	ms_json_array_end(&o.w);
	ms_json_key(&o.w, "cells");
	ms_json_array_begin_tight(&o.w);
	ms_json_u64(&o.w, 3);
	ms_json_u64(&o.w, UINT64_MAX);
	ms_json_addr16(&o.w, 0x1000);
	ms_json_array_end(&o.w);
	ms_json_object_end(&o.w);
	out_check(&o, 0, "{\"uncertain\": false,\n \"regions\": [\n  {\"id\": 0},\n  {\"id\": 1}], "
			 "\"cells\": [3,18446744073709551615,\"0000000000001000\"]}");
}

static void test_misuse(void **state)
{
	struct out o;

	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	ms_json_u64(&o.w, 1);                 /* a value with no key */
	ms_json_object_end(&o.w);
	out_check(&o, -EINVAL, "{1}");

	out_open(&o, 0);
	ms_json_array_begin(&o.w);
	ms_json_key(&o.w, "k");               /* a key in an array */
	ms_json_object_end(&o.w);             /* and the wrong end */
	out_check(&o, -EINVAL, "[");

	out_open(&o, 0);
	ms_json_object_begin(&o.w);           /* never closed */
	out_check(&o, -EINVAL, "{");

	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	ms_json_key(&o.w, "k");
	ms_json_object_end(&o.w);             /* the key's value missing */
	out_check(&o, -EINVAL, "{\"k\": ");
}

static void test_depth(void **state)
{
	struct out o;
	int i;

	out_open(&o, 0);
	for (i = 0; i < MS_JSON_MAX_DEPTH; i++)
		ms_json_array_begin(&o.w);
	for (i = 0; i < MS_JSON_MAX_DEPTH; i++)
		ms_json_array_end(&o.w);
	assert_int_equal(ms_json_finish(&o.w), 0);
	for (i = 0; i <= MS_JSON_MAX_DEPTH; i++)
		ms_json_array_begin(&o.w);
	assert_int_equal(ms_json_finish(&o.w), -EINVAL);
	fclose(o.f);
	free(o.buf);
}

static void test_escapes(void **state)
{
	struct out o;

	check_str("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	check_str("\n\t\x01\x1f\x7f", 5, "\"\\u000a\\u0009\\u0001\\u001f\\u007f\"");
	/* C1 controls (U+0080-U+009F; U+009B is a terminal's CSI) escaped; U+00A0 on is text. */
	check_str("\xc2\x80\xc2\x9b[2J\xc2\x9f\xc2\xa0", 11, "\"\\u0080\\u009b[2J\\u009f\xc2\xa0\"");
	/* A lone C2 at the end is not UTF-8. */
	check_str("\xc2", 1, "\"\\ufffd\"");
	check_str("x\0y", 3, "\"x\\u0000y\"");
	check_str("</script>&", 10, "\"</script>&\"");

	out_open(&o, MS_JSON_SCRIPT);
	ms_json_object_begin(&o.w);
	ms_json_key_str(&o.w, "<k>", "</script>&");
	ms_json_object_end(&o.w);
	out_check(&o, 0, "{\"\\u003ck\\u003e\": \"\\u003c/script\\u003e\\u0026\"}");
}

static void test_valid_utf8_kept(void **state)
{
	/* é, €, U+10FFFF, and the last code points before each boundary */
	static const char s[] = "caf\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xdf\xbf \xef\xbf\xbf \xed\x9f\xbf";

	check_str(s, strlen(s), "\"caf\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xdf\xbf \xef\xbf\xbf \xed\x9f\xbf\"");
}

static void test_invalid_utf8(void **state)
{
	/* The file name of the issue: Latin-1 é and a byte no UTF-8 has. */
	check_str("caf\xe9-\xff.bin", 10, "\"caf\\ufffd-\\ufffd.bin\"");
	/* A lone continuation byte, and a lead byte cut short at the end. */
	check_str("\x80x", 2, "\"\\ufffdx\"");
	check_str("x\xe2\x82", 3, "\"x\\ufffd\"");
	/* A truncated sequence followed by ASCII: one U+FFFD, the ASCII kept. */
	check_str("\xe2\x82z", 3, "\"\\ufffdz\"");
	check_str("\xf0\x9f\x98", 3, "\"\\ufffd\"");
}

static void test_overlong(void **state)
{
	/* '/' as two bytes, NUL as two, '/' as three and four: each byte replaced (C0, C1, E0 80, F0 80 never start one). */
	check_str("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");
	check_str("\xc1\x80", 2, "\"\\ufffd\\ufffd\"");
	check_str("\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	check_str("\xf0\x80\x80\xaf", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* Past U+10FFFF. */
	check_str("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	check_str("\xf5\x80", 2, "\"\\ufffd\\ufffd\"");
}

static void test_surrogates(void **state)
{
	/* U+D800 and U+DFFF encoded (CESU-8 style): not UTF-8. */
	check_str("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	check_str("\xed\xbf\xbf", 3, "\"\\ufffd\\ufffd\\ufffd\"");
}

/*
 * The writer's buffer: what it wrote is in f once the outermost container
 * closes (a caller then writes a new line itself, as JSON Lines do), and
 * output past the buffer's size, long strings and many keys among it,
 * comes out whole and in order.
 */
static void test_buffer(void **state)
{
	static char keys[200][12];
	char *big = malloc(3 * MS_JSON_BUF), *want = malloc(8 * MS_JSON_BUF), *p = want;
	struct out o;
	size_t i;

	(void)state;
	assert_non_null(big);
	assert_non_null(want);
	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	ms_json_key_u64(&o.w, "a", 1);
	ms_json_object_end(&o.w);
	fputc('\n', o.f);
	ms_json_object_begin(&o.w);
	ms_json_key_str(&o.w, "b", "x");
	ms_json_object_end(&o.w);
	fputc('\n', o.f);
	out_check(&o, 0, "{\"a\": 1}\n{\"b\": \"x\"}\n");

	memset(big, 'y', 3 * MS_JSON_BUF);
	big[5] = '"';                            /* an escape in a string written straight to f */
	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	p += sprintf(p, "{");
	for (i = 0; i < 200; i++) {              /* 200 keys in 64 slots: remembered, replaced, all right */
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
		ms_json_key_u64(&o.w, keys[i], i * 1000003);
		p += sprintf(p, "%s\"k%zu\": %zu", i ? ", " : "", i, i * 1000003);
	}
	ms_json_key(&o.w, "big");
	ms_json_str_len(&o.w, big, 3 * MS_JSON_BUF);
	p += sprintf(p, ", \"big\": \"yyyyy\\\"");
	memset(p, 'y', 3 * MS_JSON_BUF - 6);
	p += 3 * MS_JSON_BUF - 6;
	*p++ = '"';
	for (i = 0; i < 200; i++) {              /* the same keys again, from their slots or not */
		ms_json_key_bool(&o.w, keys[i], i & 1);
		p += sprintf(p, ", \"k%zu\": %s", i, i & 1 ? "true" : "false");
	}
	ms_json_object_end(&o.w);
	strcpy(p, "}");
	out_check(&o, 0, want);
	free(big);
	free(want);
}

/* A key remembered as plain by one writer is escaped by a writer for a <script> element. */
static void test_script_keys(void **state)
{
	static const char key[] = "a<b";
	struct out o;

	(void)state;
	out_open(&o, 0);
	ms_json_object_begin(&o.w);
	ms_json_key_u64(&o.w, key, 1);
	ms_json_key_u64(&o.w, key, 2);
	ms_json_object_end(&o.w);
	out_check(&o, 0, "{\"a<b\": 1, \"a<b\": 2}");
	out_open(&o, MS_JSON_SCRIPT);
	ms_json_object_begin(&o.w);
	ms_json_key_u64(&o.w, key, 1);
	ms_json_key_u64(&o.w, key, 2);
	ms_json_object_end(&o.w);
	out_check(&o, 0, "{\"a\\u003cb\": 1, \"a\\u003cb\": 2}");
}

/* A stream whose writes ask, from another thread, whether f's lock is held while they run. */
struct locked_probe {
	FILE *f;
	int writes, unlocked;           /* writes, and those made without f's lock held */
};

static void *try_lock(void *arg)
{
	struct locked_probe *lp = arg;

	if (!ftrylockfile(lp->f)) {     /* free: the writer did not hold it */
		lp->unlocked++;
		funlockfile(lp->f);
	}
	return NULL;
}

static ssize_t probe_write(void *cookie, const char *buf, size_t len)
{
	struct locked_probe *lp = cookie;
	pthread_t t;

	(void)buf;
	lp->writes++;
	assert_int_equal(pthread_create(&t, NULL, try_lock, lp), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	return (ssize_t)len;
}

/*
 * The writer writes to the caller's f under f's lock, as stdio does: a
 * library caller's other threads may write to f too (ms_advice_write()).
 * Both ways to f: the buffer drained, and a long string straight there.
 */
static void test_writes_hold_the_lock(void **state)
{
	struct locked_probe lp = { 0 };
	cookie_io_functions_t io = { .write = probe_write };
	char *big = malloc(MS_JSON_BUF);
	struct ms_json w;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', MS_JSON_BUF);
	lp.f = fopencookie(&lp, "w", io);
	assert_non_null(lp.f);
	setvbuf(lp.f, NULL, _IONBF, 0);  /* each write of the writer reaches probe_write() as it is made */
	ms_json_init(&w, lp.f, 0);
	ms_json_object_begin(&w);
	ms_json_key_u64(&w, "a", 1);
	ms_json_key(&w, "big");
	ms_json_str_len(&w, big, MS_JSON_BUF);
	ms_json_object_end(&w);
	assert_int_equal(ms_json_finish(&w), 0);
	assert_true(lp.writes >= 3);
	assert_int_equal(lp.unlocked, 0);
	fclose(lp.f);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commas_and_nesting),
		cmocka_unit_test(test_quick_and_slow_keys),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_valid_utf8_kept),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_overlong),
		cmocka_unit_test(test_surrogates),
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_script_keys),
		cmocka_unit_test(test_writes_hold_the_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
