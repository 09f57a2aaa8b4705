/* CSV fields as RFC 4180 quotes them, so that a path with a comma stays one field. */
#include <string.h>

#include "output/csv.h"

void ms_csv_str(FILE *f, const char *s)
{
	const char *c;

	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (c = s; *c; c++) {
		if (*c == '"')
			fputc('"', f);
		fputc(*c, f);
	}
	fputc('"', f);
}
