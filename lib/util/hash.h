/* Internal: the hashes the open-addressing tables use. */
#ifndef MS_UTIL_HASH_H
#define MS_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The bucket of a 64-bit key in an open-addressing table of cap (a power of two) slots. */
static inline size_t ms_hash64(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;       /* murmur3's finaliser step */
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* FNV-1a of a NUL-terminated string: each table of strings folds it to its slots its own way. */
static inline uint64_t ms_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

#endif
