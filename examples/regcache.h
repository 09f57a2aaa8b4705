/*
 * A tiny registration cache, the way an RDMA library keeps memory
 * registrations: address range -> handle. It must never hand out a handle
 * for memory that has been unmapped. It asks libmapscope, whose kernel
 * mode also sees direct syscalls and works in static binaries; where the
 * kernel's events are refused, the watch falls back to userfaultfd and
 * interposition (mapscope/watch.h lists what each mode misses), and each
 * registered range is tracked so that the userfaultfd covers it.
 */
#ifndef REGCACHE_H
#define REGCACHE_H

#include <stdint.h>

#include <mapscope/watch.h>

#define REGCACHE_SIZE 64

struct regcache {
	struct ms_watch *watch;
	uint64_t generation;
	struct {
		uint64_t start, end;
		int handle;               /* -1: free slot */
	} e[REGCACHE_SIZE];
	int next_handle;
	unsigned long hits, misses, invalidated;
};

/* 0, or a negative errno from ms_watch_open(). */
int regcache_init(struct regcache *rc);

/*
 * The handle registered for [addr, addr + len): a cached one if still valid,
 * else a new registration. Never a handle for memory unmapped since.
 */
int regcache_lookup(struct regcache *rc, const void *addr, uint64_t len);

/* Whether [addr, addr + len) has a cached handle now (after syncing); does not register. */
int regcache_cached(struct regcache *rc, const void *addr, uint64_t len);

void regcache_release(struct regcache *rc);

#endif
