/* Internal: JSON text helpers for the output writers. */
#ifndef MS_OUTPUT_JSON_H
#define MS_OUTPUT_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Writes s as a JSON string, quotes included. */
void ms_json_str(FILE *f, const char *s);
/* Writes an address as the schema wants it: "0x7f...". */
void ms_json_addr(FILE *f, uint64_t a);
/* Writes s as a CSV field, quoted when it must be. */
void ms_csv_str(FILE *f, const char *s);

#endif
