/*
 * Pages' bitmaps by chunk key (util/chunkmap.h): the keys hashed, the
 * bitmaps in one array in the order they were made.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/chunkmap.h"
#include "util/grow.h"
#include "util/hash.h"

/* key's bucket in a table of cap. */
static size_t chunk_hash(struct ms_chunk_key key, size_t cap)
{
	return ms_hash64(key.slot * 0x9e3779b97f4a7c15ULL ^ key.chunk, cap);
}

static int chunk_grow(struct ms_chunkmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024, i, j;
	struct ms_chunk_key *keys = malloc(cap * sizeof(*keys));
	uint32_t *idx = malloc(cap * sizeof(*idx));

	if (!keys || !idx) {
		free(keys);
		free(idx);
		return -ENOMEM;
	}
	memset(keys, 0xff, cap * sizeof(*keys));
	for (i = 0; i < m->cap; i++) {
		if (m->keys[i].slot == UINT64_MAX)
			continue;
		for (j = chunk_hash(m->keys[i], cap); keys[j].slot != UINT64_MAX; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		idx[j] = m->idx[i];
	}
	free(m->keys);
	free(m->idx);
	m->keys = keys;
	m->idx = idx;
	m->cap = cap;
	return 0;
}

int64_t ms_chunkmap_bits(struct ms_chunkmap *m, struct ms_chunk_key key)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap && chunk_grow(m))
		return -ENOMEM;
	for (i = chunk_hash(key, m->cap); m->keys[i].slot != UINT64_MAX; i = (i + 1) & (m->cap - 1))
		if (m->keys[i].slot == key.slot && m->keys[i].chunk == key.chunk)
			return m->idx[i];
	/* 2048 to start (128 KiB): mapped on its own, so unused pages cost nothing and growth copies nothing. */
	if (m->nbits >= UINT32_MAX || MS_GROW(m->bits, m->nbits + 1, m->capbits, 2048, SIZE_MAX, false))
		return -ENOMEM;
	memset(m->bits[m->nbits], 0, sizeof(m->bits[0]));
	m->keys[i] = key;
	m->idx[i] = (uint32_t)m->nbits;
	m->len++;
	return (int64_t)m->nbits++;
}

void ms_chunkmap_release(struct ms_chunkmap *m)
{
	free(m->keys);
	free(m->idx);
	free(m->bits);
	memset(m, 0, sizeof(*m));
}
