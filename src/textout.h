/*
 * Text written by hand to stdout, with the unlocked stdio calls: a report
 * of 500,000 regions prints a million lines, and printf's parsing of its
 * format, its locking and its padding were a third of the command's time.
 * Each call writes exactly what the printf conversion named beside it does.
 */
#ifndef MS_TEXTOUT_H
#define MS_TEXTOUT_H

#include <stdint.h>

/* "%*s" (width > 0) or "%-*s" (width < 0); s may not be NULL. */
void text_s(const char *s, int width);

/* "%*" PRIu64 (width > 0) or "%-*" PRIu64. */
void text_u64(uint64_t v, int width);

/* ms_format_range()'s text, as "%-*s" (width < 0) or "%*s". */
void text_range(uint64_t a, uint64_t b, int width);

#endif
