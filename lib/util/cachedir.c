/*
 * The user's cache folders (cachedir.h), as perf keeps ~/.debug: under
 * $XDG_CACHE_HOME or ~/.cache, made 0700, and used only where they are
 * the user's own and no one else writes them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cachedir.h"

bool ms_cachedir_path(const char *env_name, const char *leaf, char *buf, size_t len)
{
	const char *env = getenv(env_name), *base = getenv("XDG_CACHE_HOME");
	int n;

	if (env)
		n = env[0] == '/' ? snprintf(buf, len, "%s", env) : -1;
	else if (base && base[0] == '/')
		n = snprintf(buf, len, "%s/mapscope/%s", base, leaf);
	else if ((base = getenv("HOME")) && base[0] == '/')
		n = snprintf(buf, len, "%s/.cache/mapscope/%s", base, leaf);
	else
		n = -1;
	return n > 0 && (size_t)n < len;
}

bool ms_cachedir_own(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

bool ms_cachedir_make(char *path)
{
	char *slash;

	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*slash = '/';
			return false;
		}
		*slash = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return false;
	return ms_cachedir_own(path);
}
