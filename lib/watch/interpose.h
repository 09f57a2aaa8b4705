/*
 * Internal: the watch's interposition mode. Every loaded object's
 * relocations (PLT and GOT) of munmap, mremap, madvise, shmdt, brk, sbrk,
 * mmap and dlopen are pointed at hooks that call the function they replace
 * and, when it succeeded and released memory, put the change in a ring.
 * Objects loaded later by dlopen are patched when it returns.
 */
#ifndef MS_WATCH_INTERPOSE_H
#define MS_WATCH_INTERPOSE_H

#include "watch/evring.h"

/*
 * Starts interposing for r, which stays the caller's and must outlive
 * ms_interpose_stop(). 0; -EBUSY when another watch interposes already;
 * -ENOTSUP when no loaded object calls munmap through a relocation (a
 * static binary) or this architecture's relocations are not known.
 */
int ms_interpose_start(struct ms_evring *r);

/* Puts the relocations back and waits for hooks still putting into the ring. */
void ms_interpose_stop(void);

/* The page-aligned extent of the mapping that starts at addr (a shm segment's, over its VMAs); 0 or -ENOENT. */
int ms_interpose_extent(uint64_t addr, uint64_t *start, uint64_t *end);

#endif
