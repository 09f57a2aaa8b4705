/*
 * The HTML page's writer on the golden recording (tests/golden/mapscope-ops.data,
 * whose report is tests/golden/mapscope-ops.report.json: 704 samples, 85
 * regions, 31 of them in process 15330): the page around the data, the
 * data's totals and one object per region, --pid's narrowing, and text
 * from the recording escaped so that it cannot end the page's <script>.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mapscope/report.h>
#include <mapscope/session.h>

#include "golden.h"
#include "output/html.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* The page for process pid (-1: all), its input named input. */
static char *page_of(long pid, const char *input)
{
	struct ms_session *s = ms_session_open(golden_path("mapscope-ops.data"), NULL);
	struct ms_report *rep = ms_report_new(NULL);
	const struct ms_report_row *rows = NULL, *un;
	struct ms_session_stats st;
	struct ms_html *h;
	char *buf = NULL;
	size_t n, len;
	FILE *f;

	if (!s)
		skip();                      /* the checked-in recording is missing */
	assert_non_null(rep);
	assert_int_equal(ms_session_add(s, &ms_report_analysis, rep), 0);
	assert_non_null(h = ms_html_new(s, pid, NULL));
	assert_int_equal(ms_session_run(s), 0);
	assert_int_equal(ms_report_rows(rep, ms_session_aspace(s), NULL, 0, &rows, &n, &un), 0);
	ms_session_stats(s, &st);
	assert_non_null(f = open_memstream(&buf, &len));
	assert_int_equal(ms_html_write(f, &(struct ms_html_report){ .h = h, .input = input, .rep = rep,
								   .n = n, .un = un, .total = ms_report_total(rep),
								   .st = &st }), 0);
	fclose(f);
	ms_html_free(h);
	ms_report_free(rep);
	ms_session_free(s);
	return buf;
}

static void page_and_data(void **state)
{
	char *page = page_of(-1, "ops.data");

	(void)state;
	assert_memory_equal(page, "<!DOCTYPE html>", 15);
	assert_non_null(strstr(page, "</html>"));
	assert_null(strstr(page, "/*MAPSCOPE-DATA*/"));        /* the mark is replaced by the data */
	assert_non_null(strstr(page, "{\"input\": \"ops.data\", \"version\": \""));
	assert_non_null(strstr(page, ", \"samples\": 704, \"file_samples\": 820, \"lost\": 0"));
	assert_non_null(strstr(page, "\"uncertain\": false,\n\"regions\": [\n{\"id\": "));
	assert_int_equal(count(page, "\n{\"id\": "), 85);
	assert_int_equal(count(page, "\n{\"id\": 0, \"pid\": 15327, \"comm\": \"aspace-ops\""), 1);
	assert_non_null(strstr(page, "\n\"heat\": {\"cols\": 128, \"rows\": 32, "));
	assert_non_null(strstr(page, "\n\"changes\": ["));
	assert_non_null(strstr(page, "\n\"huge\": {\"tlb\": false, \"advice\": ["));
	assert_non_null(strstr(page, "\n\"unmapped_accesses\": []}\n"));
	free(page);
}

static void one_process(void **state)
{
	char *page = page_of(15330, "ops.data");

	(void)state;
	assert_int_equal(count(page, "\n{\"id\": "), 31);
	assert_int_equal(count(page, "\"pid\": 15327"), 0);
	free(page);
}

static void script_safe(void **state)
{
	char *page = page_of(-1, "a</script><b>&\xe9.data"), *plain = page_of(-1, "x");

	(void)state;
	assert_non_null(strstr(page, "{\"input\": \"a\\u003c/script\\u003e\\u003cb\\u003e\\u0026\\ufffd.data\""));
	/* The page's own </script> tags only: the data added none. */
	assert_int_equal(count(page, "</script>"), count(plain, "</script>"));
	free(page);
	free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(page_and_data),
		cmocka_unit_test(one_process),
		cmocka_unit_test(script_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
