/* Internal: the CSV writer's one rule, quoting a field (RFC 4180). */
#ifndef MS_OUTPUT_CSV_H
#define MS_OUTPUT_CSV_H

#include <stdio.h>

/*
 * Writes s as a CSV field: as it is, or in quotes with quotes doubled where
 * it holds a comma or a quote; where it holds a control byte (or a
 * backslash), escaped as ms_text_quote escapes it, and in quotes.
 */
void ms_csv_str(FILE *f, const char *s);

#endif
