/*
 * A binary's frames by address (framecache.h): an open-addressing table of
 * addresses, each naming a run of frames in one growing pool. A report of
 * a recording with many processes asks for the same few thousand code
 * addresses again and again (every mmap of every process names its site),
 * and dwarf_getscopes walks a compile unit's DIEs each time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/framecache.h"
#include "util/grow.h"
#include "util/hash.h"

struct slot {
	uint64_t vaddr;
	uint32_t first;              /* in pool */
	uint32_t n;                  /* 0: empty */
};

struct ms_framecache {
	struct slot *slots;
	size_t cap, len;             /* cap: a power of two */
	struct ms_frame *pool;
	size_t pool_len, pool_cap;
};

static const struct slot *find(const struct ms_framecache *c, uint64_t vaddr)
{
	size_t i;

	for (i = ms_hash64(vaddr, c->cap); c->slots[i].n; i = (i + 1) & (c->cap - 1))
		if (c->slots[i].vaddr == vaddr)
			return &c->slots[i];
	return &c->slots[i];
}

int ms_framecache_get(const struct ms_framecache *c, uint64_t vaddr, struct ms_frame *out, int max)
{
	const struct slot *s;

	if (!c || !c->cap)
		return -1;
	s = find(c, vaddr);
	if (!s->n || (int)s->n > max)
		return -1;
	memcpy(out, c->pool + s->first, s->n * sizeof(*out));
	return (int)s->n;
}

/* Doubles the table; the pool stays. 0 or -ENOMEM. */
static int rehash(struct ms_framecache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 16, i;
	struct slot *old = c->slots, *s;
	size_t old_cap = c->cap;

	c->slots = ms_calloc_written(cap, sizeof(*c->slots));   /* looked up before written */
	if (!c->slots) {
		c->slots = old;
		return -ENOMEM;
	}
	c->cap = cap;
	for (i = 0; i < old_cap; i++)
		if (old[i].n) {
			s = (struct slot *)find(c, old[i].vaddr);
			*s = old[i];
		}
	free(old);
	return 0;
}

int ms_framecache_put(struct ms_framecache **cp, uint64_t vaddr, const struct ms_frame *f, int n)
{
	struct ms_framecache *c = *cp;
	struct slot *s;

	if (n < 1 || n > UINT16_MAX)
		return 0;
	if (!c && !(c = *cp = calloc(1, sizeof(*c))))
		return -ENOMEM;
	if ((c->len + 1) * 4 > c->cap * 3 && rehash(c))
		return -ENOMEM;
	s = (struct slot *)find(c, vaddr);
	if (s->n)
		return 0;                    /* known already */
	if (c->pool_len + (size_t)n > UINT32_MAX || MS_GROW(c->pool, c->pool_len + (size_t)n, c->pool_cap, 16,
							     UINT32_MAX, false))
		return -ENOMEM;
	memcpy(c->pool + c->pool_len, f, (size_t)n * sizeof(*f));
	*s = (struct slot){ vaddr, (uint32_t)c->pool_len, (uint32_t)n };
	c->pool_len += (size_t)n;
	c->len++;
	return 0;
}

void ms_framecache_free(struct ms_framecache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->pool);
	free(c);
}
