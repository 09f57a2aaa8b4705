/*
 * Internal: an open-addressing hash map from u32 keys (pids, tids) to
 * pointers. The map owns nothing it points to.
 */
#ifndef MS_UTIL_U32MAP_H
#define MS_UTIL_U32MAP_H

#include <stddef.h>
#include <stdint.h>

struct ms_u32map {
	uint32_t *keys;
	void **vals;
	size_t cap, len;       /* cap: a power of two, or 0 */
};

void ms_u32map_init(struct ms_u32map *m);
void ms_u32map_release(struct ms_u32map *m);
void *ms_u32map_get(const struct ms_u32map *m, uint32_t key);
/* Sets key to val (val must not be NULL). 0 or -ENOMEM. */
int ms_u32map_put(struct ms_u32map *m, uint32_t key, void *val);
/* Removes key and returns what it held, or NULL. */
void *ms_u32map_del(struct ms_u32map *m, uint32_t key);
/* Iteration: *pos starts at 0; returns the next value or NULL at the end. */
void *ms_u32map_next(const struct ms_u32map *m, size_t *pos, uint32_t *key);

#endif
