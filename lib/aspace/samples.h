/*
 * Internal: the model's entry for the stream's runs of samples.
 */
#ifndef MS_ASPACE_SAMPLES_H
#define MS_ASPACE_SAMPLES_H

#include <stddef.h>

struct ms_aspace;
struct ms_samples;

/*
 * ms_aspace_apply_run() for a run of samples, all of one event's fixed
 * layout as the stream hands them: each with a stack pointer or each
 * without, as the first (a run over the recording's bytes has none). The
 * quick path then tests only the address and the process.
 */
int ms_aspace_apply_samples(struct ms_aspace *as, const struct ms_samples *run);

#endif
