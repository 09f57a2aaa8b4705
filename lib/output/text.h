/*
 * Internal: the terminal-text writer's one rule. A recording names paths,
 * comms and symbols that anyone could have chosen; printed raw, a newline
 * forges a row and an escape sequence drives the reader's terminal. As ls
 * and git do, control bytes are written as escapes instead.
 */
#ifndef MS_OUTPUT_TEXT_H
#define MS_OUTPUT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Room for any name of up to 4095 bytes, each escaped as \xNN, and its NUL. */
#define MS_TEXT_QUOTED 16384

/* True where s holds a byte that ms_text_quote would escape. */
bool ms_text_needs_quote(const char *s);

/*
 * s as text safe for a terminal and a line-based format: C0 controls, DEL
 * and C1 controls (raw, or UTF-8 encoded) as \n, \t, \r, \\ or \xNN, a
 * backslash doubled, everything else (printable UTF-8 among it) as it is.
 * Returns s itself where nothing needs escaping, else buf (len bytes,
 * ending in "..." where the escaped name does not fit). s may be NULL: "".
 */
const char *ms_text_quote(const char *s, char *buf, size_t len);

static inline const char *ms_text_or_empty(const char *s)
{
	return s ? s : "";
}

/*
 * ms_text_quote into a buffer that lives until the end of the enclosing
 * block: for printf's arguments. The buffer (16 KiB, zeroed as it is made)
 * is made only where s needs quoting: a report prints a million names,
 * nearly all as they are. s is evaluated twice: no side effects.
 */
#define MS_TEXT(s) (ms_text_needs_quote(s) ? ms_text_quote((s), (char[MS_TEXT_QUOTED]){ 0 }, MS_TEXT_QUOTED) : \
		    ms_text_or_empty(s))

/* Writes s to f escaped as ms_text_quote escapes it, whatever its length. */
void ms_text_str(FILE *f, const char *s);

#endif
