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
#include <errno.h>

#include "analysis/codememo.h"
#include "symbols/generation.h"

#define KERNEL_START 0xffff800000000000ULL

static const char kernel[] = "[kernel]";
const char ms_code_unknown[] = "[unknown]";
const char ms_code_later_tag[] = "[later]";

const char *ms_code_name(struct ms_symbols *syms, uint32_t pid, uint64_t addr, const char **dso)
{
	struct ms_sym sym;

	*dso = ms_code_unknown;
	if (addr >= KERNEL_START) {
		*dso = kernel;
		return kernel;
	}
	if (ms_symbols_resolve(syms, pid, addr, false, &sym))
		return ms_code_unknown;
	*dso = sym.dso;
	return sym.name ? sym.name : ms_code_unknown;
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
	size_t i;

	m->misses++;
	if (m->later && !m->later_error && ip < KERNEL_START) {
		i = m->later->n;
		if (ms_code_later_add(m->later, pid, ip))
			m->later_error = -ENOMEM;
		else if (!ms_code_later_none(m->later, i)) {
			e->symbol = (const char *)(uintptr_t)(ms_code_later_first(m->later, i) + 1);
			e->dso = ms_code_later_tag;
		} else
			i = SIZE_MAX;            /* no binary holds it: named now (a JIT's name is of now) */
		if (!m->later_error && i != SIZE_MAX)
			goto named;
	}
	e->symbol = ms_code_name(syms, pid, ip, &e->dso);
named:
	e->gen = gen;         /* as before naming: where naming moved it (a JIT's tables read), asked again */
	e->ip = ip;
	e->pid = pid;
	e->used = true;
	*dso = e->dso;
	return e->symbol;
}

