/*
 * Internal to lib/symbols: texts kept by a key of 64-bit words, for the
 * call chains that many processes name alike (callsite.c). A report of
 * chromium names 2,500 allocation sites, 214 of them distinct: every
 * process's loader maps its libraries through the same code, at the same
 * addresses in the same binaries. The texts are the memo's own.
 */
#ifndef MS_SYMBOLS_CALLMEMO_H
#define MS_SYMBOLS_CALLMEMO_H

#include <stddef.h>
#include <stdint.h>

struct ms_callmemo;

/* An empty memo, or NULL (ENOMEM). */
struct ms_callmemo *ms_callmemo_new(void);

/* The text kept for key[0, n), borrowed from m; NULL where none is. Counted. */
const char *ms_callmemo_get(struct ms_callmemo *m, const uint64_t *key, size_t n);

/* Keeps a copy of text for key[0, n) (n >= 1): 0, or -ENOMEM (nothing kept). */
int ms_callmemo_put(struct ms_callmemo *m, const uint64_t *key, size_t n, const char *text);

/* Its hits and misses (gets that found nothing), for tests and measurements. */
void ms_callmemo_counts(const struct ms_callmemo *m, uint64_t *hits, uint64_t *misses);

/* Frees m and every text it kept; NULL is fine. */
void ms_callmemo_free(struct ms_callmemo *m);

#endif
