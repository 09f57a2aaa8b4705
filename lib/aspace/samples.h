/*
 * Internal: the model's entry for the stream's runs of samples.
 */
#ifndef MS_ASPACE_SAMPLES_H
#define MS_ASPACE_SAMPLES_H

#include <stddef.h>

struct ms_aspace;
struct ms_event;

/*
 * ms_aspace_apply_run() for evs[0, n) that are all samples, each with a
 * stack pointer or each without, as evs[0] (one event's fixed layout, as
 * the stream gathers them): the quick path then tests only the address and
 * the process.
 */
int ms_aspace_apply_samples(struct ms_aspace *as, const struct ms_event *evs, size_t n);

#endif
