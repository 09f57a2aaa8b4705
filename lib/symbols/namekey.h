/*
 * Internal to lib/symbols: the keys the namer's answers are kept under
 * (namecache.h), 128-bit hashes of everything an answer depends on
 * (namekey.c): the code that names, and each binary an answer reads, by
 * its content and by every file the search for its DWARF would look at.
 */
#ifndef MS_SYMBOLS_NAMEKEY_H
#define MS_SYMBOLS_NAMEKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* A key being made: feed it words and bytes, then take it with ms_namekey_done(). */
struct ms_namekey {
	uint64_t a, b;
};

void ms_namekey_init(struct ms_namekey *k, uint64_t seed);
void ms_namekey_word(struct ms_namekey *k, uint64_t w);
/* The bytes and their length, so that "ab","c" and "a","bc" differ. */
void ms_namekey_bytes(struct ms_namekey *k, const void *p, size_t len);
/* A string (NULL is not ""). */
void ms_namekey_str(struct ms_namekey *k, const char *s);
struct ms_namekey ms_namekey_done(const struct ms_namekey *k);

/*
 * The code that names, as words of k: the build-ids of the objects that
 * hold this library and the elfutils it calls (libdw, libelf; one object
 * where they are linked in). False where one has no build-id.
 */
bool ms_namekey_code(struct ms_namekey *k);

/*
 * The key of a binary at path, as the namer reads it: state (the caller's:
 * 2 read, below 0 unusable), the build-id the recording gave (id_len 0:
 * none), the file's identity (file: as fstat had it when the caller read
 * it; NULL: as stat has it now), and every separate debug file the search
 * for its DWARF would look at, there or not: by build-id, the decompressed
 * copy (where the original is gone), by .gnu_debuglink, each one's dwz
 * file (.gnu_debugaltlink), and a .dwp package beside the binary. image:
 * the caller's mapping of the file, or NULL. False where path is too long
 * to name those places.
 */
bool ms_namekey_bin(struct ms_namekey *out, const char *path, int state, const unsigned char *id, size_t id_len,
		    const struct stat *file, const void *image, size_t image_size);

#endif
