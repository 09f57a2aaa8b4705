/* For unit tests: a fake tracefs tree under a temporary root, file by file. */
#ifndef TESTS_UNIT_FAKE_TRACEFS_H
#define TESTS_UNIT_FAKE_TRACEFS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Writes text to root/rel, making the folders on the way. */
static void fake_put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Makes root (a mkdtemp template) a tracefs tree with its headers and no events yet: 0, or -1. */
static inline int fake_tracefs_new(char *root)
{
	if (!mkdtemp(root))
		return -1;
	fake_put(root, "events/header_page", "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n");
	fake_put(root, "events/header_event", "# compressed entry header\n");
	fake_put(root, "printk_formats", "");
	return 0;
}

/* Removes the tree under root, as a teardown does: 0, or -1 where it could not. */
static inline int fake_remove(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

#endif
