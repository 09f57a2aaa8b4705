/*
 * The checked-in recordings of tests/golden, found from the test's own
 * source path (CMake compiles each test by its full path), so that a unit
 * test can run an analysis or a writer on a real recording.
 */
#ifndef TESTS_UNIT_GOLDEN_H
#define TESTS_UNIT_GOLDEN_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>

/* tests/golden/NAME; the string is static, overwritten by the next call. */
static inline const char *golden_path(const char *name)
{
	static char path[PATH_MAX];
	char here[PATH_MAX];

	snprintf(here, sizeof(here), "%s", __FILE__);
	snprintf(path, sizeof(path), "%s/../golden/%s", dirname(here), name);
	return path;
}

#endif
