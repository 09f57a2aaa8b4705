/* Internal: an open-addressing set of u64 keys (never UINT64_MAX). */
#ifndef MS_UTIL_U64SET_H
#define MS_UTIL_U64SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ms_u64set {
	uint64_t *keys;
	size_t cap, len;
};

void ms_u64set_init(struct ms_u64set *s);
void ms_u64set_release(struct ms_u64set *s);
/* Adds key: 1 if it was new, 0 if present, -ENOMEM. */
int ms_u64set_add(struct ms_u64set *s, uint64_t key);

#endif
