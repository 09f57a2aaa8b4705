#include <errno.h>
#include <stdlib.h>

#include "util/u32map.h"

void ms_u32map_init(struct ms_u32map *m)
{
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->len = 0;
}

void ms_u32map_release(struct ms_u32map *m)
{
	free(m->keys);
	free(m->vals);
	ms_u32map_init(m);
}

static size_t slot(uint32_t key, size_t cap)
{
	return (size_t)(key * 2654435761u) & (cap - 1);
}

void *ms_u32map_get(const struct ms_u32map *m, uint32_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

static int grow(struct ms_u32map *m)
{
	struct ms_u32map n;
	size_t i;

	n.cap = m->cap ? m->cap * 2 : 64;
	n.len = 0;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->vals[i])
			ms_u32map_put(&n, m->keys[i], m->vals[i]);
	ms_u32map_release(m);
	*m = n;
	return 0;
}

int ms_u32map_put(struct ms_u32map *m, uint32_t key, void *val)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (i = slot(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
	return 0;
}

void *ms_u32map_del(struct ms_u32map *m, uint32_t key)
{
	size_t i, j;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = slot(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			break;
	if (!m->vals[i])
		return NULL;
	val = m->vals[i];
	m->vals[i] = NULL;
	m->len--;
	/* Re-place the rest of the cluster so lookups still find it. */
	for (j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		uint32_t k = m->keys[j];
		void *v = m->vals[j];

		m->vals[j] = NULL;
		m->len--;
		ms_u32map_put(m, k, v);
	}
	return val;
}

void *ms_u32map_next(const struct ms_u32map *m, size_t *pos, uint32_t *key)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;

		if (m->vals[i]) {
			if (key)
				*key = m->keys[i];
			return m->vals[i];
		}
	}
	return NULL;
}
