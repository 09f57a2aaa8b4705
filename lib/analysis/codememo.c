/*
 * The report's names of code addresses, remembered (codememo.h). A slot
 * holds the answer for (pid, ip) at the generation of pid's symbols it
 * was found at: the generation moves with whatever may change that
 * answer (the process's maps, exec, the fork that made it, its JIT's
 * tables), never with other processes' maps. Looking it up hashes the
 * pid, so it is looked up again only where the symbols' own generation
 * moved (any change moves it) or another process asks: samples come in
 * runs of one process between changes.
 */
#include "analysis/codememo.h"
#include "symbols/generation.h"

const char *ms_code_name(struct ms_symbols *syms, uint32_t pid, uint64_t addr, const char **dso)
{
	struct ms_sym sym;

	*dso = "[unknown]";
	if (addr >= 0xffff800000000000ULL) {
		*dso = "[kernel]";
		return "[kernel]";
	}
	if (ms_symbols_resolve(syms, pid, addr, false, &sym))
		return "[unknown]";
	*dso = sym.dso;
	return sym.name ? sym.name : "[unknown]";
}

uint64_t ms_code_memo_gen(struct ms_code_memo *m, struct ms_symbols *syms, uint32_t pid)
{
	m->seen_gen = ms_symbols_generation(syms);
	m->gen = ms_symbols_proc_generation(syms, pid);
	m->gen_pid = pid;
	m->gen_valid = true;
	return m->gen;
}

const char *ms_code_memo_fill(struct ms_code_memo *m, struct ms_code_memo_slot *e, struct ms_symbols *syms,
			      uint32_t pid, uint64_t ip, uint64_t gen, const char **dso)
{
	m->misses++;
	e->symbol = ms_code_name(syms, pid, ip, &e->dso);
	e->gen = gen;         /* as before naming: where naming moved it (a JIT's tables read), asked again */
	e->ip = ip;
	e->pid = pid;
	e->used = true;
	*dso = e->dso;
	return e->symbol;
}
