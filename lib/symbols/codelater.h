/*
 * Internal: code addresses seen now and named later, each as it would
 * have been named when seen (codelater.c): on the namer's thread where
 * there is one and the address can be pinned, else here and now.
 */
#ifndef MS_SYMBOLS_CODELATER_H
#define MS_SYMBOLS_CODELATER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/symbols.h>

#include "symbols/namer.h"
#include "symbols/pin.h"

struct ms_code_later {
	struct ms_symbols *syms;
	struct ms_namer *namer;      /* NULL: every address named when seen */
	struct later *v;             /* in the order added */
	size_t n, cap;
	uint32_t *slot;              /* the pinned entries by pin and address: open addressing, index + 1 */
	size_t nslot, nr_pinned;
};

/* Addresses of syms's processes, named on namer's thread where it is not NULL. */
void ms_code_later_init(struct ms_code_later *c, struct ms_symbols *syms, struct ms_namer *namer);

/*
 * The code at ip of process pid, as seen now, to be named later as up to
 * max frames (NAMER_MAX_FRAMES at most, the same at every call): its
 * entry, the next one or, where its answer cannot differ from one added
 * before, that one. -ENOMEM, or -EINVAL for max.
 */
int64_t ms_code_later_add(struct ms_code_later *c, uint32_t pid, uint64_t ip, int max);

/*
 * Entry i's frames, as ms_symbols_frames_dso() named them when it was
 * added: their number (0 or less where none), in out (max, as many as it
 * was added with or more), with the binary's path in *dso (or NULL). The
 * strings are held by the namer, the symbols or c, until the namer's end
 * and ms_code_later_release(). Waits for the namer's thread where it
 * names it.
 */
int ms_code_later_frames(struct ms_code_later *c, size_t i, struct ms_frame *out, int max, const char **dso);

/* Frees what c holds (the namer's jobs are the namer's). */
void ms_code_later_release(struct ms_code_later *c);

#endif
