/*
 * Internal: the queue of the watch modes that see changes in the process
 * itself (interposition, userfaultfd). Its producers run inside munmap,
 * free and signal handlers, in any thread: a put takes no lock, calls no
 * allocator and no system call. One consumer (the watch's ms_watch_next).
 */
#ifndef MS_WATCH_EVRING_H
#define MS_WATCH_EVRING_H

#include <stdint.h>

#include <mapscope/aspace.h>

struct ms_evslot {
	uint64_t seq;                 /* atomic: index + 1 once published */
	struct ms_change c;
};

struct ms_evring {
	uint64_t reserved;            /* atomic: the next index a producer takes */
	uint64_t head;                /* atomic: the next index the consumer reads */
	uint64_t lost;                /* atomic: puts refused since the consumer last looked */
	uint64_t gen;                 /* atomic: moves after every put, and every refusal */
	uint64_t mask;
	struct ms_evslot *slots;
};

/* A ring of nr (a power of two) slots. 0 or -ENOMEM; r is the caller's, to ms_evring_release(). */
int ms_evring_init(struct ms_evring *r, uint32_t nr);
void ms_evring_release(struct ms_evring *r);

/*
 * Queues a copy of c (its name and region pointers are copied as they
 * are: a static string and NULL). Then moves the generation, so that a
 * reader who sees the new generation finds the change. 0, or -ENOSPC when
 * the ring is full: the loss is counted and the generation moves.
 */
int ms_evring_put(struct ms_evring *r, const struct ms_change *c);

/*
 * The next change: 1 with *c filled, 0 when none is ready. A change whose
 * slot a producer has taken but not yet written is waited for (briefly),
 * so that every change before a generation seen comes out. *lost is set
 * to the number of puts refused since the last call (the consumer then
 * trusts nothing it holds).
 */
int ms_evring_get(struct ms_evring *r, struct ms_change *c, uint64_t *lost);

/* The clock changes are stamped with, as the kernel's records are: CLOCK_MONOTONIC ns. */
uint64_t ms_evring_now(void);

/* The generation: an acquire load. */
uint64_t ms_evring_gen(const struct ms_evring *r);

#endif
