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

/* ms_hash_str() of no bytes, and of one byte more than h is of: a hash of every prefix, made as it goes. */
#define MS_HASH_STR_EMPTY 0xcbf29ce484222325ULL

static inline uint64_t ms_hash_str_more(uint64_t h, unsigned char c)
{
	return (h ^ c) * 0x100000001b3ULL;
}

/* FNV-1a of a NUL-terminated string: each table of strings folds it to its slots its own way. */
static inline uint64_t ms_hash_str(const char *s)
{
	uint64_t h = MS_HASH_STR_EMPTY;

	for (; *s; s++)
		h = ms_hash_str_more(h, (unsigned char)*s);
	return h;
}

#endif
