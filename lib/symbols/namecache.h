/*
 * Internal to lib/symbols: the namer's answers kept on disk, so that a
 * report run again over the same binaries reads its names instead of
 * walking their symbol tables and DWARF again (namecache.c).
 *
 * A job's key is a 128-bit hash of everything its answer depends on
 * (namer.c makes it): the code that names (this program's build-id),
 * how long an answer may be, and for each address of the chain, the
 * binary that holds it (by content: its build-id, or its file's identity
 * where it has none, with the separate debug files that would be read
 * for it) and its place in that binary. An answer is the namer's output
 * as bytes; the cache never sees what it means.
 */
#ifndef MS_SYMBOLS_NAMECACHE_H
#define MS_SYMBOLS_NAMECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ms_namecache;

/* A key being made: feed it words and bytes, then take it with ms_namekey_done(). */
struct ms_namekey {
	uint64_t a, b;
};

void ms_namekey_init(struct ms_namekey *k, uint64_t seed);
void ms_namekey_word(struct ms_namekey *k, uint64_t w);
void ms_namekey_bytes(struct ms_namekey *k, const void *p, size_t len);
/* The string and its terminating NUL, so that "ab","c" and "a","bc" differ. */
void ms_namekey_str(struct ms_namekey *k, const char *s);
struct ms_namekey ms_namekey_done(const struct ms_namekey *k);

/*
 * The cache of answers made under config (a key of what every answer
 * depends on), from its folder: MAPSCOPE_NAME_CACHE (an absolute path,
 * or "off"), else $XDG_CACHE_HOME/mapscope/names, else
 * ~/.cache/mapscope/names. An empty cache where there is no file yet,
 * or where the file is not whole and this user's own (it is then made
 * again at ms_namecache_save()). NULL where there is no folder to keep
 * it in, it is off, or on no memory.
 */
struct ms_namecache *ms_namecache_open(const struct ms_namekey *config);

/* The answer kept for key: its bytes (until ms_namecache_free()) and length; NULL where none is. */
const void *ms_namecache_get(const struct ms_namecache *c, const struct ms_namekey *key, size_t *len);

/* Keeps the answer for key, to be saved (len at most 1 MiB). 0, or -ENOMEM (nothing kept), -E2BIG. */
int ms_namecache_put(struct ms_namecache *c, const struct ms_namekey *key, const void *answer, size_t len);

/*
 * Writes the file again where answers were put: those read, then the new
 * (the new alone where all would pass 16 MiB), to a file of its own
 * renamed over the old, so that a reader sees one or the other whole.
 * 0, or a negative errno (the file is left as it was).
 */
int ms_namecache_save(struct ms_namecache *c);

void ms_namecache_free(struct ms_namecache *c);

/*
 * The key of a binary at path as the namer reads it: state (the caller's:
 * 2 read, below 0 unusable), the build-id the recording gave (id_len 0:
 * none), the file's identity as stat has it, and every separate debug
 * file the search for its DWARF would look at (by build-id, its
 * decompressed copy, by .gnu_debuglink), there or not, and their
 * identities. image: the caller's mapping of the file, or NULL.
 */
bool ms_namecache_bin_key(struct ms_namekey *out, const char *path, int state, const unsigned char *id, size_t id_len,
			  const void *image, size_t image_size);

/* This program's build-id, of the object this code is in, as a key's words: false where it has none. */
bool ms_namecache_self_id(struct ms_namekey *k);

#endif
