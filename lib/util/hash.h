/* Internal: the bucket of a 64-bit key in an open-addressing table of cap (a power of two) slots. */
#ifndef MS_UTIL_HASH_H
#define MS_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline size_t ms_hash64(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;       /* murmur3's finaliser step */
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

#endif
