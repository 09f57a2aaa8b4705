/* Prints a change as timeline and watch show it: a text line or a JSON object. */
#ifndef MS_PRINT_CHANGE_H
#define MS_PRINT_CHANGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mapscope/aspace.h>

/*
 * The text's times are seconds from t0 (the recording's start, or when
 * watch began), or with abs the nanoseconds on the recording's clock
 * (CLOCK_MONOTONIC); JSON always gives time_ns.
 */
void print_change_header(FILE *f, bool abs);
void print_change(FILE *f, const struct ms_change *c, bool json, uint64_t t0, bool abs);

#endif
