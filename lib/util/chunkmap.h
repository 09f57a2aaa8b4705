/*
 * Internal: distinct pages as bits in chunks of 512 pages (2 MiB of
 * memory, a 64-byte bitmap each), found by a 64-bit key in an
 * open-addressing table. Accesses cluster, so a set of pages costs a few
 * bits a page rather than a hashed entry (16 bytes and more) each; the
 * report's pages and the profile's count the same way. The map owns its
 * arrays; a key is the caller's (a slot and a chunk, say).
 */
#ifndef MS_UTIL_CHUNKMAP_H
#define MS_UTIL_CHUNKMAP_H

#include <stddef.h>
#include <stdint.h>

#define MS_CHUNK_PAGES 512
/* A chunk's key: slot << MS_CHUNK_KEY_SLOT ^ chunk. Pages: 2^52 at most (64-bit addresses), chunks 2^43. */
#define MS_CHUNK_KEY_SLOT 43

struct ms_chunkmap {
	uint64_t *keys;           /* UINT64_MAX: empty */
	uint32_t *idx;            /* the key's bitmap in bits */
	size_t cap, len;          /* cap: a power of two, or 0 */
	uint64_t (*bits)[MS_CHUNK_PAGES / 64];
	size_t nbits, capbits;
};

/* The key of page's chunk in slot (a region's, a row's). */
static inline uint64_t ms_chunk_key(uint64_t slot, uint64_t page)
{
	return slot << MS_CHUNK_KEY_SLOT ^ page / MS_CHUNK_PAGES;
}

/* The index in m->bits of key's bitmap, made empty where new; -ENOMEM. The bitmaps move as they grow. */
int64_t ms_chunkmap_bits(struct ms_chunkmap *m, uint64_t key);

/* Frees m's arrays; m reads as empty again. */
void ms_chunkmap_release(struct ms_chunkmap *m);

#endif
