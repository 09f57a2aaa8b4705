/*
 * Internal: the names of sample code addresses, as the report gives them
 * (its children and its rows by symbol or binary), remembered by (pid,
 * ip) while the process's symbols' generation stays. A report of a
 * chromium recording asks 49,000 times for 14,600 distinct (pid, ip) of
 * 6,200 distinct addresses in binaries; what an answer costs the first
 * time is the symbols' (a binary's tables, read once; its cache by
 * address serves every process that maps the binary), so a hit must cost
 * next to nothing: one slot, and the generation looked up again only
 * where the symbols moved or another process asks.
 */
#ifndef MS_ANALYSIS_CODEMEMO_H
#define MS_ANALYSIS_CODEMEMO_H

#include <stdbool.h>
#include <stdint.h>

#include <mapscope/symbols.h>

#include "analysis/codelater.h"

struct ms_code_memo_slot {
	uint64_t ip, gen;
	uint32_t pid;
	bool used;
	const char *symbol, *dso;
};

/* Direct-mapped, a power of two: 10 KiB stay in cache (4,096 slots missed as often, and in cache more). */
#define MS_CODE_MEMO_SIZE 256

/*
 * Zeroed to start; nothing to release. With later set, the symbols of
 * code in binaries are named later (codenames.h): a slot's answer is then
 * later's entry + 1 as a pointer, with ms_code_later_tag for its binary.
 */
struct ms_code_memo {
	struct ms_code_later *later;   /* or NULL: every name now */
	int later_error;               /* -ENOMEM where an entry could not be added: none is added after */
	struct ms_code_memo_slot slot[MS_CODE_MEMO_SIZE];
	uint64_t seen_gen;             /* ms_symbols_generation() when gen was looked up */
	uint32_t gen_pid;              /* the process it was looked up for */
	bool gen_valid;
	uint64_t gen;                  /* gen_pid's generation then */
	uint64_t hits, misses;
};

/*
 * What the report names code address addr of process pid: its symbol
 * ("[unknown]" where none; "[kernel]" for a kernel address), and in *dso
 * its binary's path ("[unknown]" where none). Borrowed from syms.
 */
const char *ms_code_name(struct ms_symbols *syms, uint32_t pid, uint64_t addr, const char **dso);

/* pid's generation of names (symbols/generation.h), from m where the symbols have not moved since. */
uint64_t ms_code_memo_gen(struct ms_code_memo *m, struct ms_symbols *syms, uint32_t pid);

/* The binary of an answer that is an entry of the memo's later list (its symbol: the entry + 1). */
extern const char ms_code_later_tag[];

/* What ms_code_name() names code no binary or JIT names, and its binary: one string, whoever names it. */
extern const char ms_code_unknown[];

/*
 * ms_code_name() into slot e for the generation gen (a miss of
 * ms_code_memo_name()); with m->later, code in a binary (one a pin can
 * name later) is added to it instead, and its answer is the entry's tag.
 */
const char *ms_code_memo_fill(struct ms_code_memo *m, struct ms_code_memo_slot *e, struct ms_symbols *syms,
			      uint32_t pid, uint64_t ip, uint64_t gen, const char **dso);

/* ms_code_name(), or the tag of an entry for later (ms_code_memo_fill()), from m where asked before; counted. */
static inline const char *ms_code_memo_name(struct ms_code_memo *m, struct ms_symbols *syms, uint32_t pid,
					    uint64_t ip, const char **dso)
{
	/* Code addresses of one process are near each other: their low bits, and the next byte, pick the slot. */
	struct ms_code_memo_slot *e = &m->slot[(ip ^ ip >> 8 ^ pid) & (MS_CODE_MEMO_SIZE - 1)];
	uint64_t gen = m->gen_valid && m->gen_pid == pid && m->seen_gen == ms_symbols_generation(syms) ?
			       m->gen : ms_code_memo_gen(m, syms, pid);

	if (!e->used || e->ip != ip || e->pid != pid || e->gen != gen)
		return ms_code_memo_fill(m, e, syms, pid, ip, gen, dso);
	m->hits++;
	*dso = e->dso;
	return e->symbol;
}

#endif
