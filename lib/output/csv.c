/*
 * CSV fields as RFC 4180 quotes them, so that a path with a comma stays one
 * field; and one record a line, so that a name with a newline or an escape
 * sequence cannot forge a row or reach the terminal: its control bytes are
 * escaped as the terminal text escapes them, inside quotes.
 */
#include <stdbool.h>
#include <string.h>

#include "output/csv.h"
#include "output/text.h"

static void quoted(FILE *f, const char *s)
{
	const char *c;

	fputc('"', f);
	for (c = s; *c; c++) {
		if (*c == '"')
			fputc('"', f);
		fputc(*c, f);
	}
	fputc('"', f);
}

void ms_csv_str(FILE *f, const char *s)
{
	char buf[MS_TEXT_QUOTED];
	const char *t;

	if (ms_text_needs_quote(s)) {
		t = ms_text_quote(s, buf, sizeof(buf));
		quoted(f, t);
		return;
	}
	if (!strpbrk(s, ",\""))
		fputs(s, f);
	else
		quoted(f, s);
}
