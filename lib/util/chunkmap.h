/*
 * Internal: distinct pages as bits in chunks of 512 pages (2 MiB of
 * memory, a 64-byte bitmap each), found by a key of two words, the
 * caller's slot (a region's, a row's) and the chunk, in an
 * open-addressing table. Accesses cluster, so a set of pages costs a few
 * bits a page rather than a hashed entry (16 bytes and more) each; the
 * report's pages and the profile's count the same way. The map owns its
 * arrays. Any slot and any page go: the two are kept whole, not shifted
 * into one word that a report of millions of rows outgrows.
 */
#ifndef MS_UTIL_CHUNKMAP_H
#define MS_UTIL_CHUNKMAP_H

#include <stddef.h>
#include <stdint.h>

#define MS_CHUNK_PAGES 512

/* A chunk's key: whose pages (the caller's slot) and which chunk of them (page / MS_CHUNK_PAGES). */
struct ms_chunk_key {
	uint64_t slot, chunk;
};

struct ms_chunkmap {
	struct ms_chunk_key *keys; /* slot UINT64_MAX: empty */
	uint32_t *idx;            /* the key's bitmap in bits */
	size_t cap, len;          /* cap: a power of two, or 0 */
	uint64_t (*bits)[MS_CHUNK_PAGES / 64];
	size_t nbits, capbits;
};

/* The key of page's chunk in slot (a region's, a row's; below UINT64_MAX). */
static inline struct ms_chunk_key ms_chunk_key(uint64_t slot, uint64_t page)
{
	return (struct ms_chunk_key){ slot, page / MS_CHUNK_PAGES };
}

/* The index in m->bits of key's bitmap, made empty where new; -ENOMEM. The bitmaps move as they grow. */
int64_t ms_chunkmap_bits(struct ms_chunkmap *m, struct ms_chunk_key key);

/* Frees m's arrays; m reads as empty again. */
void ms_chunkmap_release(struct ms_chunkmap *m);

#endif
