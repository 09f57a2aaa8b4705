/*
 * Internal to lib/symbols: a binary's inline-expanded frames by address,
 * so that each distinct code address is walked through DWARF once. Names
 * and files point into the binary's libdw data, which outlives the cache.
 */
#ifndef MS_SYMBOLS_FRAMECACHE_H
#define MS_SYMBOLS_FRAMECACHE_H

#include <stdint.h>

#include <mapscope/symbols.h>

struct ms_framecache;

/*
 * The frames of vaddr into out (at most max): their number, or -1 where
 * the cache does not hold them, or holds more than max.
 */
int ms_framecache_get(const struct ms_framecache *c, uint64_t vaddr, struct ms_frame *out, int max);

/* Remembers the n (>= 1) frames of vaddr, creating *c where NULL. 0, or -ENOMEM (nothing kept). */
int ms_framecache_put(struct ms_framecache **c, uint64_t vaddr, const struct ms_frame *f, int n);

void ms_framecache_free(struct ms_framecache *c);

#endif
