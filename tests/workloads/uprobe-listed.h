/* For the prefetch workloads: whether tracefs's uprobe_events lists a uprobe in a binary. */
#ifndef TESTS_WORKLOADS_UPROBE_LISTED_H
#define TESTS_WORKLOADS_UPROBE_LISTED_H

#include <stdio.h>
#include <string.h>

/* Whether events (uprobe_events' path) has a line with a probe in path ("PATH:0x"). */
static inline int uprobe_listed(const char *events, const char *path)
{
	char buf[8192], want[4200];
	FILE *f = fopen(events, "r");
	int yes = 0;

	snprintf(want, sizeof(want), "%s:0x", path);
	while (f && !yes && fgets(buf, sizeof(buf), f))
		yes = strstr(buf, want) != NULL;
	if (f)
		fclose(f);
	return yes;
}

#endif
