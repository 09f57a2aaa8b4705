/*
 * Interned strings (strpool.h): an open-addressing set of pointers into
 * blocks of text. Blocks are never moved or grown, only added.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"
#include "util/strpool.h"

static size_t str_hash(const char *s, size_t cap)
{
	uint64_t h = ms_hash_str(s);

	return (size_t)(h ^ h >> 32) & (cap - 1);
}

static int set_grow(struct ms_strpool *p)
{
	size_t cap = p->cap ? 2 * p->cap : 64, i, j;
	const char **set = ms_calloc_written(cap, sizeof(*set));

	if (!set)
		return -ENOMEM;
	for (i = 0; i < p->cap; i++) {
		if (!p->set[i])
			continue;
		for (j = str_hash(p->set[i], cap); set[j]; j = (j + 1) & (cap - 1))
			;
		set[j] = p->set[i];
	}
	free(p->set);
	p->set = set;
	p->cap = cap;
	return 0;
}

/* Room for len bytes that will not move: in the last block, a new one, or (over a block) their own. */
static char *take(struct ms_strpool *p, size_t len)
{
	size_t size = len > MS_STRPOOL_BLOCK ? len : MS_STRPOOL_BLOCK;
	char *b;

	if (len <= MS_STRPOOL_BLOCK && p->nr_blocks && len <= MS_STRPOOL_BLOCK - p->used) {
		b = p->blocks[p->nr_blocks - 1] + p->used;
		p->used += len;
		return b;
	}
	if (MS_GROW(p->blocks, p->nr_blocks + 1, p->cap_blocks, 16, SIZE_MAX, false) || !(b = malloc(size)))
		return NULL;
	if (len > MS_STRPOOL_BLOCK && p->nr_blocks) {   /* its own block, before the one still filling */
		p->blocks[p->nr_blocks] = p->blocks[p->nr_blocks - 1];
		p->blocks[p->nr_blocks++ - 1] = b;
		return b;
	}
	p->blocks[p->nr_blocks++] = b;
	p->used = len < MS_STRPOOL_BLOCK ? len : MS_STRPOOL_BLOCK;    /* a long one fills its block */
	return b;
}

static const char *intern(struct ms_strpool *p, const char *s)
{
	size_t j, len = strlen(s) + 1;
	char *copy;

	if ((p->len + 1) * 2 > p->cap && set_grow(p))
		return NULL;
	for (j = str_hash(s, p->cap); p->set[j]; j = (j + 1) & (p->cap - 1))
		if (!strcmp(p->set[j], s))
			return p->set[j];
	if (!(copy = take(p, len)))
		return NULL;
	memcpy(copy, s, len);
	p->set[j] = copy;
	p->len++;
	return copy;
}

const char *ms_strpool_intern(struct ms_strpool *p, const char *s)
{
	uintptr_t h = (uintptr_t)s * 0x9e3779b97f4a7c15ULL;
	struct ms_strpool_memo *m;
	const char *copy;

	if (!p->memo && !(p->memo = calloc(MS_STRPOOL_MEMO, sizeof(*p->memo))))
		return intern(p, s);
	m = &p->memo[h >> 48 & (MS_STRPOOL_MEMO - 1)];
	if (m->from == s && !strcmp(m->copy, s))
		return m->copy;
	if ((copy = intern(p, s)))
		*m = (struct ms_strpool_memo){ s, copy };
	return copy;
}

void ms_strpool_release(struct ms_strpool *p)
{
	size_t i;

	for (i = 0; i < p->nr_blocks; i++)
		free(p->blocks[i]);
	free(p->blocks);
	free(p->set);
	free(p->memo);
	memset(p, 0, sizeof(*p));
}
