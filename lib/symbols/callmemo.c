/*
 * Texts by key (callmemo.h): entries in the order put, found through an
 * open-addressing table of their indices; their keys lie end to end in
 * one growing array of words, and their texts are interned (two keys
 * often name alike: a chain's frames past the twelfth are in its key, not
 * in its text).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/callmemo.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/strpool.h"

struct entry {
	uint64_t hash;
	size_t at, n;                /* the key: words[at, at + n) */
	const char *text;
};

struct ms_callmemo {
	struct entry *v;             /* in the order put */
	size_t len, cap_v;
	uint32_t *slots;             /* index + 1 into v; 0: empty */
	size_t cap;                  /* a power of two */
	uint64_t *words;
	size_t nr_words, cap_words;
	struct ms_strpool texts;
	uint64_t hits, misses;
};

/* FNV-1a's walk over the words (ms_hash64() mixes it into a slot). */
static uint64_t key_hash(const uint64_t *key, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ key[i]) * 0x100000001b3ULL;
	return h;
}

/* key's slot in m: the one naming its entry, or the empty one where it would go. */
static uint32_t *slot_of(const struct ms_callmemo *m, const uint64_t *key, size_t n, uint64_t h)
{
	const struct entry *e;
	size_t i;

	for (i = ms_hash64(h, m->cap); m->slots[i]; i = (i + 1) & (m->cap - 1)) {
		e = &m->v[m->slots[i] - 1];
		if (e->hash == h && e->n == n && !memcmp(m->words + e->at, key, n * sizeof(*key)))
			break;
	}
	return &m->slots[i];
}

struct ms_callmemo *ms_callmemo_new(void)
{
	return calloc(1, sizeof(struct ms_callmemo));
}

const char *ms_callmemo_get(struct ms_callmemo *m, const uint64_t *key, size_t n)
{
	const uint32_t *at = m->cap ? slot_of(m, key, n, key_hash(key, n)) : NULL;

	if (!at || !*at) {
		m->misses++;
		return NULL;
	}
	m->hits++;
	return m->v[*at - 1].text;
}

/* A table twice as large, every entry placed again: 0 or -ENOMEM (m as it was). */
static int rehash(struct ms_callmemo *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i, j;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->len; i++) {
		for (j = ms_hash64(m->v[i].hash, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int ms_callmemo_put(struct ms_callmemo *m, const uint64_t *key, size_t n, const char *text)
{
	uint64_t h = key_hash(key, n);
	const char *kept;
	uint32_t *at;

	if (m->len >= UINT32_MAX - 1 || ((m->len + 1) * 4 > m->cap * 3 && rehash(m)))
		return -ENOMEM;
	at = slot_of(m, key, n, h);
	if (*at)
		return 0;                    /* kept already */
	if (MS_GROW(m->v, m->len + 1, m->cap_v, 64, SIZE_MAX, false) ||
	    MS_GROW(m->words, m->nr_words + n, m->cap_words, 1024, SIZE_MAX, false) ||
	    !(kept = ms_strpool_intern(&m->texts, text)))
		return -ENOMEM;
	memcpy(m->words + m->nr_words, key, n * sizeof(*key));
	m->v[m->len] = (struct entry){ h, m->nr_words, n, kept };
	*at = (uint32_t)++m->len;
	m->nr_words += n;
	return 0;
}

void ms_callmemo_counts(const struct ms_callmemo *m, uint64_t *hits, uint64_t *misses)
{
	*hits = m->hits;
	*misses = m->misses;
}

void ms_callmemo_free(struct ms_callmemo *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->slots);
	free(m->words);
	ms_strpool_release(&m->texts);
	free(m);
}
