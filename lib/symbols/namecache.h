/*
 * Internal to lib/symbols: the namer's answers kept on disk, so that a
 * report run again over the same binaries reads its names instead of
 * walking their symbol tables and DWARF again (namecache.c).
 *
 * An answer is kept under a key (namekey.h) of everything it depends on:
 * the code that names, how long an answer may be, and for each address
 * of the chain, the binary that holds it (by its file and every separate
 * debug file the search would read for it) and its place in that binary.
 * namer.c makes the keys; an answer is its output as bytes, which the
 * cache never reads.
 */
#ifndef MS_SYMBOLS_NAMECACHE_H
#define MS_SYMBOLS_NAMECACHE_H

#include <stddef.h>

#include "symbols/namekey.h"

struct ms_namecache;

/*
 * The answers kept under config (a key of what every answer depends on):
 * one file of the folder MAPSCOPE_NAME_CACHE (an absolute path, or
 * "off"), else $XDG_CACHE_HOME/mapscope/names, else
 * ~/.cache/mapscope/names. Empty where there is no file yet, or where it
 * is not whole, this user's own in a folder only the user writes, and at
 * most 16 MiB (ms_namecache_save() writes it again). NULL where there is
 * no folder to keep it in, it is off, or on no memory. Nothing is made on
 * disk until a save.
 */
struct ms_namecache *ms_namecache_open(const struct ms_namekey *config);

/* The answer kept for key: its bytes (until ms_namecache_free()) and length; NULL where none is. */
const void *ms_namecache_get(const struct ms_namecache *c, const struct ms_namekey *key, size_t *len);

/*
 * Keeps the answer for key, to be saved. 0, or -E2BIG (over 1 MiB),
 * -ENOSPC (the run's answers would pass a file's 16 MiB), -ENOMEM; the
 * answer is then not kept.
 */
int ms_namecache_put(struct ms_namecache *c, const struct ms_namekey *key, const void *answer, size_t len);

/*
 * Writes the file again where answers were put: the run's, then those
 * read (all of them where they fit the 16 MiB, else none), to a file of
 * its own renamed over the old, so that a reader sees one or the other
 * whole. Two runs that save at once each write a whole file; the last
 * renamed stays, with the other's new answers lost. 0, or a negative
 * errno (the file is left as it was).
 */
int ms_namecache_save(struct ms_namecache *c);

void ms_namecache_free(struct ms_namecache *c);

#endif
