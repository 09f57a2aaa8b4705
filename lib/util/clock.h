/* Internal: the monotonic clock, in the nanoseconds every timestamp here is in. */
#ifndef MS_UTIL_CLOCK_H
#define MS_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in ns: mapscope record's clock for its records. */
static inline uint64_t ms_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
