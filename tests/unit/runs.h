/*
 * Feeding the model by hand in the unit tests: events in runs of random
 * length through ms_aspace_apply_run(), or one call each, so that a test
 * can check that runs count what single events do.
 */
#ifndef TESTS_UNIT_RUNS_H
#define TESTS_UNIT_RUNS_H

#include <stdlib.h>

#include <mapscope/aspace.h>

/* evs[0, n) to as in runs of 1 to longest events, their lengths from rand(); one call each where longest is 0. */
static void apply_in_runs(struct ms_aspace *as, const struct ms_event *evs, size_t n, size_t longest)
{
	size_t i, len;

	for (i = 0; i < n; i += len) {
		len = longest ? 1 + (size_t)rand() % longest : 1;
		if (len > n - i)
			len = n - i;
		if (longest)
			assert_int_equal(ms_aspace_apply_run(as, evs + i, len), 0);
		else
			assert_int_equal(ms_aspace_apply(as, &evs[i], NULL), 0);
	}
}

#endif
