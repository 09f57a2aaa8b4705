/*
 * Internal to lib/symbols: binaries' files opened ahead. The first map of
 * each binary reads its segments, and so opens its file safely (an O_PATH
 * open, fstat, fstatfs, an open through /proc/self/fd, a read of its
 * first 4 KiB): about 17 us a file here, 3 ms of the caller's thread on a
 * chromium page load's 180 files. The thread that runs the stream ahead
 * (session/ahead.h) sees each map before the caller does and has time to
 * spare where the caller's thread names code; it opens each new path's
 * file, and the caller takes the descriptor at that path's first map,
 * with the file's ELF made there too (an fstat, an fcntl, an mmap, and
 * the page faults of reading its section headers).
 */
#ifndef MS_SYMBOLS_PREOPEN_H
#define MS_SYMBOLS_PREOPEN_H

#include <stdbool.h>
#include <stddef.h>

struct Elf;
struct ms_event;
struct ms_preopen;

/* A file opened ahead, as the taker gets it. */
struct ms_preopened {
	int fd;                      /* ms_elf_open_head()'s answer: a descriptor (the taker's), or its error */
	size_t len;                  /* the file's first bytes put in the taker's head */
	struct Elf *elf;             /* or NULL: ms_bin_elf_ahead()'s ELF of fd, the taker's */
	bool written;                /* and what it said */
};

/* A table of files opened ahead, for one thread to fill and another to take from; NULL on no memory. */
struct ms_preopen *ms_preopen_new(void);

/* Closes what was never taken. */
void ms_preopen_free(struct ms_preopen *po);

/*
 * On the thread ahead, for table po: the file of the binary a map
 * (MS_EV_MAP) names, opened as ms_elf_open_head() opens it, and its ELF
 * made as ms_bin_elf() makes it, where that path was not seen before.
 * Past a bound of paths, or of descriptors not taken yet, or where the
 * binaries hold all the descriptors they may (ms_bin_held_room()), or
 * where the open fails for want of descriptors or memory, the taker opens
 * the file itself.
 */
void ms_preopen_map(void *po, const struct ms_event *ev);

/* The table of symbols s's files opened ahead, made at the first call; NULL on no memory (symbols.c). */
struct ms_symbols;
struct ms_preopen *ms_symbols_preopen(struct ms_symbols *s);

/*
 * The file at path as it was opened ahead: true with *out filled and the
 * file's first out->len bytes in head (MS_ELF_HEAD of room); false where
 * it was not opened ahead, or was taken already.
 */
bool ms_preopen_take(struct ms_preopen *po, const char *path, unsigned char *head, struct ms_preopened *out);

/*
 * Once the thread ahead is gone: what no map took (a run stopped early
 * leaves the maps read ahead of its stop) closed now, not at the table's
 * end; the paths stay seen.
 */
void ms_preopen_drain(struct ms_preopen *po);

#endif
