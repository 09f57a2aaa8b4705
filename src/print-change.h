/* Prints a change as timeline and watch show it: a text line or a JSON object. */
#ifndef MS_PRINT_CHANGE_H
#define MS_PRINT_CHANGE_H

#include <stdbool.h>
#include <stdio.h>

#include <mapscope/aspace.h>

void print_change_header(FILE *f);
void print_change(FILE *f, const struct ms_change *c, bool json);

#endif
