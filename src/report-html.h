/* mapscope report --format html: the page and the analyses it needs. */
#ifndef MS_REPORT_HTML_H
#define MS_REPORT_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include <mapscope/report.h>
#include <mapscope/session.h>

struct html_run;

/*
 * Adds the heatmap, hugepage, unmapped-access and change analyses to s,
 * before it runs. pid (-1: any) and comm (NULL: any) narrow every part of
 * the page as they narrow the table. NULL when out of memory.
 */
struct html_run *html_new(struct ms_session *s, long pid, const char *comm);

/* What the table's pass produced, for the page. */
struct html_report {
	struct html_run *h;
	const char *input;
	const char *window;                  /* --time as given, or NULL */
	const struct ms_report *rep;
	const struct ms_report_row *rows;    /* by region, sorted */
	size_t n;
	const struct ms_report_row *un;
	uint64_t total;
	const struct ms_session_stats *st;
	bool uncertain;
};

/* Writes the page to f. 0, or a negative errno. */
int html_write(FILE *f, const struct html_report *in);

/* Accepts NULL. */
void html_free(struct html_run *h);

#endif
