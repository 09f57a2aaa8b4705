/*
 * Internal: a bounded copy of a string, what snprintf(dst, cap, "%.*s", n,
 * src) writes, without the format's cost: the model names every change and
 * maps this way, thousands of times a recording.
 */
#ifndef MS_UTIL_STR_H
#define MS_UTIL_STR_H

#include <stddef.h>
#include <string.h>

/* At most n bytes of src, and no more than cap - 1, then a NUL (nothing where cap is 0). */
static inline void ms_strn_copy(char *dst, size_t cap, const char *src, size_t n)
{
	size_t k;

	if (!cap)
		return;
	k = strnlen(src, n < cap - 1 ? n : cap - 1);
	memcpy(dst, src, k);
	dst[k] = '\0';
}

/* src whole, or its first cap - 1 bytes. */
static inline void ms_str_copy(char *dst, size_t cap, const char *src)
{
	ms_strn_copy(dst, cap, src, cap);
}

#endif
