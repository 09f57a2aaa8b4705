/*
 * A bounded multi-producer, single-consumer ring. A producer reserves an
 * index by compare-and-swap only while the ring has room, so a reserved
 * slot is always published; it writes the slot, then its sequence number
 * (release), then moves the generation. The consumer takes a slot when its
 * sequence says it is published for this lap, and frees it by moving head.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "watch/evring.h"


int ms_evring_init(struct ms_evring *r, uint32_t nr)
{
	*r = (struct ms_evring){ .mask = nr - 1 };
	if (!nr || (nr & (nr - 1)))
		return -EINVAL;
	r->slots = calloc(nr, sizeof(*r->slots));
	return r->slots ? 0 : -ENOMEM;
}

void ms_evring_release(struct ms_evring *r)
{
	free(r->slots);
	r->slots = NULL;
}

int ms_evring_put(struct ms_evring *r, const struct ms_change *c)
{
	uint64_t idx = __atomic_load_n(&r->reserved, __ATOMIC_RELAXED);
	struct ms_evslot *s;

	do {
		if (idx - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) > r->mask) {
			__atomic_add_fetch(&r->lost, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&r->gen, 1, __ATOMIC_RELEASE);
			return -ENOSPC;
		}
	} while (!__atomic_compare_exchange_n(&r->reserved, &idx, idx + 1, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	s = &r->slots[idx & r->mask];
	s->c = *c;
	__atomic_store_n(&s->seq, idx + 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&r->gen, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Whether the slot at head is published, waiting (50 ms at most) while a
 * producer that reserved it writes it. A later slot may be out already and
 * its generation seen (the userfaultfd reader reserves, the unmapping
 * thread's interposed munmap publishes after it): stopping short would
 * leave the reader who saw that generation without the change it moved
 * for. The bound is for a producer that cannot go on while the consumer
 * waits (a signal handler that reads, in the thread it interrupted).
 */
static bool published(struct ms_evring *r, const struct ms_evslot *s, uint64_t head)
{
	uint64_t until = 0;
	unsigned spins;

	for (spins = 0;; spins++) {
		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == head + 1)
			return true;
		if (__atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE) <= head)
			return false;           /* nobody has taken it: the ring is empty */
		if (spins % 64 == 0) {
			if (!until)
				until = ms_evring_now() + 50000000;
			else if (ms_evring_now() > until)
				return false;
		}
		sched_yield();
	}
}

int ms_evring_get(struct ms_evring *r, struct ms_change *c, uint64_t *lost)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	struct ms_evslot *s = &r->slots[head & r->mask];

	*lost = __atomic_exchange_n(&r->lost, 0, __ATOMIC_ACQ_REL);
	if (!published(r, s, head))
		return 0;
	*c = s->c;
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
	return 1;
}

uint64_t ms_evring_gen(const struct ms_evring *r)
{
	return __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
}

uint64_t ms_evring_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
