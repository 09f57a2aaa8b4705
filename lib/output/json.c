#include <inttypes.h>
#include <string.h>

#include "output/json.h"

void ms_json_str(FILE *f, const char *s)
{
	const unsigned char *c;

	fputc('"', f);
	for (c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

void ms_json_addr(FILE *f, uint64_t a)
{
	fprintf(f, "\"0x%" PRIx64 "\"", a);
}

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
