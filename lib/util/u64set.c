#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64set.h"

#define EMPTY UINT64_MAX

void ms_u64set_init(struct ms_u64set *s)
{
	memset(s, 0, sizeof(*s));
}

void ms_u64set_release(struct ms_u64set *s)
{
	free(s->keys);
	ms_u64set_init(s);
}

static size_t slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static int grow(struct ms_u64set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024, i, j;
	uint64_t *keys = malloc(cap * sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	memset(keys, 0xff, cap * sizeof(*keys));
	for (i = 0; i < s->cap; i++) {
		if (s->keys[i] == EMPTY)
			continue;
		for (j = slot(s->keys[i], cap); keys[j] != EMPTY; j = (j + 1) & (cap - 1))
			;
		keys[j] = s->keys[i];
	}
	free(s->keys);
	s->keys = keys;
	s->cap = cap;
	return 0;
}

int ms_u64set_add(struct ms_u64set *s, uint64_t key)
{
	size_t i;

	if ((s->len + 1) * 4 > s->cap * 3 && grow(s))
		return -ENOMEM;
	for (i = slot(key, s->cap); s->keys[i] != EMPTY; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == key)
			return 0;
	s->keys[i] = key;
	s->len++;
	return 1;
}
