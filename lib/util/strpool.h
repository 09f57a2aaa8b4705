/*
 * Internal: a pool of interned strings. Each distinct text is kept once,
 * in blocks that never move, so the pointers handed out stay valid until
 * the pool is released: 500,000 regions too small for a hugepage share one
 * reason instead of holding 500,000 copies of it.
 */
#ifndef MS_UTIL_STRPOOL_H
#define MS_UTIL_STRPOOL_H

#include <stddef.h>

/* Zeroed to start. */
struct ms_strpool {
	char **blocks;            /* each MS_STRPOOL_BLOCK bytes, or one string's own where longer */
	size_t nr_blocks, cap_blocks, used;   /* used: bytes taken in the last block */
	const char **set;         /* hash: the strings, NULL where empty */
	size_t cap, len;
	struct ms_strpool_memo *memo;   /* by the caller's pointer: MS_STRPOOL_MEMO entries, made at first use */
};

/*
 * A caller that interns the same text from the same place again and again
 * (the indexer: every VMA of a process at each of its changes) finds it by
 * its pointer; the text is still compared, as a pointer's text can change.
 */
struct ms_strpool_memo {
	const char *from, *copy;
};

#define MS_STRPOOL_MEMO 65536

#define MS_STRPOOL_BLOCK 65536

/* The pool's copy of s (made where new), owned by the pool; NULL on ENOMEM. */
const char *ms_strpool_intern(struct ms_strpool *p, const char *s);

/* Frees every string of the pool; it is empty (zeroed) after. */
void ms_strpool_release(struct ms_strpool *p);

#endif
