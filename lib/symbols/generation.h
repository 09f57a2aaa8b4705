/*
 * Internal: a generation per process, for callers that remember what a
 * process's code addresses resolve to (report.c's memo). The symbols'
 * own generation moves with any process's map; a recording of many
 * processes maps something every few samples, and each such move would
 * forget every process's names.
 */
#ifndef MS_SYMBOLS_GENERATION_H
#define MS_SYMBOLS_GENERATION_H

#include <stdint.h>

#include <mapscope/symbols.h>

/*
 * A count that moves whenever ms_symbols_track() may have changed what an
 * address of process pid resolves to (its maps, exec, the fork that made
 * it, its JIT's tables, the instant jitdumps are read at); never the same
 * for two states of pid. Unique across processes too: the symbols' own
 * generation at that change.
 */
uint64_t ms_symbols_proc_generation(struct ms_symbols *s, uint32_t pid);

#endif
