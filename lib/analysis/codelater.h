/*
 * Internal: code addresses named later, each as it would have been named
 * when met (codelater.c). A profile names the code of each (process,
 * address) it meets while the process's binaries are known; most of its
 * time was that naming (line tables, inlined scopes, symbol tables), on
 * the thread that replays the recording. Here each address is pinned as
 * it is met and handed to the thread that names the sites (symbols/namer.h),
 * or named at once where it cannot be pinned (a JIT's code), and its
 * frames are asked for at the end, entry by entry in the order they came.
 */
#ifndef MS_ANALYSIS_CODELATER_H
#define MS_ANALYSIS_CODELATER_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/symbols.h>

#include "symbols/namer.h"
#include "symbols/pin.h"

struct code_first;
struct code_key;
struct code_where;

struct ms_code_later {
	struct ms_symbols *syms;
	struct ms_namer *namer;       /* or NULL: pinned addresses are named through their pins at the end */
	uint32_t *at;                 /* entry i (codelater.c) */
	size_t n, cap;
	struct code_first *firsts;    /* the first entry of each key's code */
	size_t nfirst, cap_firsts;
	struct code_where *where;     /* a list of symbols: each first's process and address */
	size_t cap_where;
	struct code_key *keys;        /* each key's first entry, and the keys by hash (index + 1) */
	size_t nkeys, cap_keys;
	uint32_t *slot;
	size_t nslot;
	bool symbols;                 /* each entry's symbol is named (ms_code_later_symbol()), not its frames */
};

/* An empty list naming through syms, and where namer is not NULL on its thread. */
void ms_code_later_init(struct ms_code_later *c, struct ms_symbols *syms, struct ms_namer *namer);

/* The same, for the symbol of each entry's code (ms_symbols_code_symbol()), not its frames. */
void ms_code_later_init_symbols(struct ms_code_later *c, struct ms_symbols *syms, struct ms_namer *namer);

/*
 * The next entry (c->n before the call): code address ip of process pid,
 * as it is now. An address of the same binary at the same place as an
 * earlier entry's (ms_pin_key()) is named as that one. 0 or -ENOMEM.
 */
int ms_code_later_add(struct ms_code_later *c, uint32_t pid, uint64_t ip);

/* The next entry, with nothing to name: the caller names it itself and never asks. 0 or -ENOMEM. */
int ms_code_later_skip(struct ms_code_later *c);

/*
 * Whether entry i has nothing to name: skipped, or named as it was added
 * and no binary held it (a JIT's code, or nothing's), whose name the
 * caller gives it then.
 */
bool ms_code_later_none(const struct ms_code_later *c, size_t i);

/* The entry entry i is named as: an earlier one, or itself. */
size_t ms_code_later_first(const struct ms_code_later *c, size_t i);

/*
 * Entry i's frames (pid and ip: what it was added with) as
 * ms_symbols_code_frames() named them when it was added: at most max into
 * f, their count (0: no binary held the address), or -1 with *same the
 * earlier entry it is named as. The strings live as long as the symbols,
 * or the namer. Each entry is asked once.
 */
int ms_code_later_frames(struct ms_code_later *c, size_t i, uint32_t pid, uint64_t ip, struct ms_frame *f, int max,
			 size_t *same);

/*
 * Entry i's symbol (a list made by ms_code_later_init_symbols()) as
 * ms_symbols_code_symbol() named it when it was added: 1 with *out set
 * (its strings live as long as the symbols, or the namer), 0 where no
 * binary held it, or -1 with *same the earlier entry it is named as. Each
 * entry is asked once.
 */
int ms_code_later_symbol(struct ms_code_later *c, size_t i, struct ms_code_sym *out, size_t *same);

void ms_code_later_release(struct ms_code_later *c);

#endif
