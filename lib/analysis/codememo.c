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
#include <stdlib.h>
#include <string.h>

#include "analysis/codememo.h"
#include "symbols/generation.h"
#include "util/grow.h"
#include "util/hash.h"

#define KERNEL_START 0xffff800000000000ULL

static const char unknown[] = "[unknown]", kernel[] = "[kernel]";
const char ms_code_later_tag[] = "[later]";

const char *ms_code_name(struct ms_symbols *syms, uint32_t pid, uint64_t addr, const char **dso)
{
	struct ms_sym sym;

	*dso = unknown;
	if (addr >= KERNEL_START) {
		*dso = kernel;
		return kernel;
	}
	if (ms_symbols_resolve(syms, pid, addr, false, &sym))
		return unknown;
	*dso = sym.dso;
	return sym.name ? sym.name : unknown;
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
	if (m->later && ip < KERNEL_START) {
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

/* The slot of (dso, raw) in t's table: the entry that has it + 1, or the empty one where it would go. */
static uint32_t *pair_slot(struct ms_code_names *t, const char *dso, const char *raw)
{
	uint64_t h = ms_hash_str(dso) * 0x9e3779b97f4a7c15ULL ^ (raw ? ms_hash_str(raw) : 0);
	size_t mask = t->nslot - 1, i, k;

	for (i = ms_hash64(h, t->nslot); t->slot[i]; i = (i + 1) & mask) {
		k = t->slot[i] - 1;
		if (!strcmp(t->dso[k], dso) && (raw ? t->raw[k] && !strcmp(t->raw[k], raw) : !t->raw[k]))
			break;
	}
	return &t->slot[i];
}

/* Room in t's table for one more pair. 0 or -ENOMEM. */
static int pair_room(struct ms_code_names *t)
{
	size_t n = t->nslot ? 2 * t->nslot : 1024, k;
	uint32_t *old = t->slot, *at;
	size_t old_n = t->nslot;

	if ((t->npairs + 1) * 2 <= t->nslot)
		return 0;
	if (!(t->slot = calloc(n, sizeof(*t->slot)))) {
		t->slot = old;
		return -ENOMEM;
	}
	t->nslot = n;
	for (k = 0; k < old_n; k++)
		if (old[k]) {
			at = pair_slot(t, t->dso[old[k] - 1], t->raw[old[k] - 1]);
			*at = old[k];
		}
	free(old);
	return 0;
}

/* Entry i named as sym (held: a binary holds it), or as the entry with the same pair before it. 0 or -ENOMEM. */
static int name_entry(struct ms_code_names *t, size_t i, int held, const struct ms_code_sym *sym)
{
	uint32_t *slot;

	t->raw[i] = NULL;
	if (held <= 0) {                 /* as ms_code_name(): no binary, and no JIT could name it (the pin said) */
		t->symbol[i] = t->dso[i] = unknown;
		return 0;
	}
	if (pair_room(t))
		return -ENOMEM;
	slot = pair_slot(t, sym->dso, sym->raw);
	if (*slot) {
		t->symbol[i] = t->symbol[*slot - 1];
		t->dso[i] = t->dso[*slot - 1];
		t->raw[i] = t->raw[*slot - 1];
		return 0;
	}
	t->symbol[i] = sym->name ? sym->name : unknown;
	t->dso[i] = sym->dso;
	t->raw[i] = sym->raw;
	*slot = (uint32_t)i + 1;
	t->npairs++;
	return 0;
}

int ms_code_names_take(struct ms_code_names *t, struct ms_code_later *later)
{
	struct ms_code_sym sym;
	size_t same;
	int held;

	if (MS_GROW(t->symbol, later->n, t->cap, 256, SIZE_MAX, false) ||
	    MS_GROW(t->dso, later->n, t->cap_dso, 256, SIZE_MAX, false) ||
	    MS_GROW(t->raw, later->n, t->cap_raw, 256, SIZE_MAX, false))
		return -ENOMEM;
	for (; t->n < later->n; t->n++) {
		if (ms_code_later_none(later, t->n)) {
			t->symbol[t->n] = t->dso[t->n] = unknown;   /* never asked: its slot has its own name */
			t->raw[t->n] = NULL;
			continue;
		}
		if ((held = ms_code_later_symbol(later, t->n, &sym, &same)) < 0) {
			t->symbol[t->n] = t->symbol[same];
			t->dso[t->n] = t->dso[same];
			t->raw[t->n] = t->raw[same];
		} else if (name_entry(t, t->n, held, &sym))
			return -ENOMEM;
	}
	return 0;
}

void ms_code_names_release(struct ms_code_names *t)
{
	free(t->symbol);
	free(t->dso);
	free(t->raw);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
