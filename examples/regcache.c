/*
 * The pattern: before each lookup, compare ms_watch_generation() with the
 * value seen last; it costs a few loads, no syscall. Only when it moved,
 * drain ms_watch_next() and drop every entry overlapping a released range.
 * The generation is read before draining, so a change that lands while we
 * drain moves it again and is caught at the next lookup. Each registered
 * range is given to ms_watch_track(), which matters in the userfaultfd
 * mode only (it then sees even raw syscalls on that range).
 */
#include <string.h>

#include "regcache.h"

int regcache_init(struct regcache *rc)
{
	int i, err;

	memset(rc, 0, sizeof(*rc));
	for (i = 0; i < REGCACHE_SIZE; i++)
		rc->e[i].handle = -1;
	rc->next_handle = 1;
	err = ms_watch_open(0, 0, &rc->watch);
	if (!err)
		rc->generation = ms_watch_generation(rc->watch);
	return err;
}

static void invalidate(struct regcache *rc, uint64_t start, uint64_t end, int all)
{
	int i;

	for (i = 0; i < REGCACHE_SIZE; i++)
		if (rc->e[i].handle >= 0 && (all || (rc->e[i].start < end && start < rc->e[i].end))) {
			rc->e[i].handle = -1;    /* a real cache would deregister here */
			rc->invalidated++;
		}
}

static void sync_cache(struct regcache *rc)
{
	uint64_t g = ms_watch_generation(rc->watch);
	struct ms_watch_event ev;
	int ret;

	if (g == rc->generation)
		return;
	rc->generation = g;
	while ((ret = ms_watch_next(rc->watch, &ev)) > 0) {
		const struct ms_change *c = &ev.change;

		if (c->release_all || ev.lost)
			invalidate(rc, 0, 0, 1);
		else if (c->release_end > c->release_start)
			invalidate(rc, c->release_start, c->release_end, 0);
	}
	if (ret < 0)
		invalidate(rc, 0, 0, 1);        /* cannot tell what changed: trust nothing */
}

static int find(struct regcache *rc, uint64_t start, uint64_t end)
{
	int i;

	for (i = 0; i < REGCACHE_SIZE; i++)
		if (rc->e[i].handle >= 0 && rc->e[i].start <= start && end <= rc->e[i].end)
			return i;
	return -1;
}

int regcache_cached(struct regcache *rc, const void *addr, uint64_t len)
{
	sync_cache(rc);
	return find(rc, (uint64_t)addr, (uint64_t)addr + len) >= 0;
}

int regcache_lookup(struct regcache *rc, const void *addr, uint64_t len)
{
	uint64_t start = (uint64_t)addr, end = start + len;
	int i;

	sync_cache(rc);
	i = find(rc, start, end);
	if (i >= 0) {
		rc->hits++;
		return rc->e[i].handle;
	}
	rc->misses++;
	for (i = 0; i < REGCACHE_SIZE && rc->e[i].handle >= 0; i++)
		;
	if (i == REGCACHE_SIZE)
		i = rc->next_handle % REGCACHE_SIZE;  /* evict */
	rc->e[i].start = start;
	rc->e[i].end = end;
	rc->e[i].handle = rc->next_handle++;
	ms_watch_track(rc->watch, addr, len);   /* a failure leaves the range to the mode's other means */
	return rc->e[i].handle;
}

void regcache_release(struct regcache *rc)
{
	ms_watch_close(rc->watch);
	rc->watch = NULL;
}
