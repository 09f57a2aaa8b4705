/*
 * Internal: a table of distinct strings, each with its index in the
 * order first added (a pprof profile's string table: its strings are
 * referred to by index, and the first is "").
 */
#ifndef MS_UTIL_STRTAB_H
#define MS_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed to start. s[0, n) are the strings, in the order added. */
struct ms_strtab {
	char **s;
	size_t n, cap;
	size_t *slot;                 /* open addressing: index + 1, 0 empty */
	size_t nslot;
};

/* s's index in t, added (copied) where new; -1 on no memory. */
int64_t ms_strtab_intern(struct ms_strtab *t, const char *s);

/* Frees t's strings and tables: t is empty again. */
void ms_strtab_release(struct ms_strtab *t);

#endif
