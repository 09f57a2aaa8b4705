/* Internal: report --format html's writer: the page and the analyses it needs. */
#ifndef MS_OUTPUT_HTML_H
#define MS_OUTPUT_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include <mapscope/report.h>
#include <mapscope/session.h>

struct ms_html;

/*
 * Adds the heatmap, hugepage, unmapped-access and change analyses to s,
 * before it runs. pid (-1: any) and comm (NULL: any) narrow every part of
 * the page as they narrow the table. NULL when out of memory.
 */
struct ms_html *ms_html_new(struct ms_session *s, long pid, const char *comm);

/* What the table's pass produced, for the page. */
struct ms_html_report {
	struct ms_html *h;
	const char *input;
	const char *window;                  /* --time as given, or NULL */
	struct ms_report *rep;               /* sorted by region (ms_report_sort): its rows are made one by one */
	/*
	 * Where set, *release is the report's owner's pointer to rep: the
	 * writer frees the report and sets it NULL once the rows are written,
	 * as the page needs nothing more of it and what follows (the hugepage
	 * advice) needs the memory.
	 */
	struct ms_report **release;
	size_t n;
	const struct ms_report_row *un;
	uint64_t total;
	const struct ms_session_stats *st;
	const char *losses;                  /* what the recording lost (ms_format_losses()), or NULL */
	bool uncertain;
};

/* Writes the page to f. 0, or a negative errno. */
int ms_html_write(FILE *f, const struct ms_html_report *in);

/* Accepts NULL. */
void ms_html_free(struct ms_html *h);

#endif
