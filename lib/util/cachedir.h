/*
 * Internal: the folders of the user's cache (the decompressed debug files,
 * the namer's answers): where one is, made only by its user and written by
 * no other.
 */
#ifndef MS_UTIL_CACHEDIR_H
#define MS_UTIL_CACHEDIR_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A folder of the user's cache into buf: the environment's env_name (an
 * absolute path; anything else, such as "off", is none), else
 * $XDG_CACHE_HOME/mapscope/LEAF, else ~/.cache/mapscope/LEAF. False where
 * there is none or it is longer than len.
 */
bool ms_cachedir_path(const char *env_name, const char *leaf, char *buf, size_t len);

/* Makes path and the folders above it (0700): true where path is then a folder of this user's that only it writes. */
bool ms_cachedir_make(char *path);

/* Whether path is a folder of this user's that only it writes, made or not here. */
bool ms_cachedir_own(const char *path);

#endif
