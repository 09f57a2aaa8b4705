/*
 * Names of addresses that no sized symbol holds, without a walk over the
 * whole symbol table for each.
 *
 * dwfl_module_addrinfo() walks every symbol on each call. symtab.c's
 * sorted table answers for addresses inside a sized symbol; the others
 * (all of a stripped binary's code, named from .dynsym alone, or nothing)
 * went to the walk every time: 60% of a report of a `make -j2` recording,
 * whose cc1 is stripped. The walk's answer depends on the address only
 * through comparisons with symbol values, their ends (value + size) and
 * section bounds; between two neighbouring such points it names the same
 * symbol. So the points are sorted once per binary, and each gap between
 * them keeps the symbol the walk chose for an address strictly inside it
 * (an address equal to a point may be answered otherwise: a sizeless
 * global matches exactly). Every answer is still the walk's own.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "util/grow.h"

struct gap_answer {
	const char *name;
	uint64_t value;               /* UINT64_MAX: not yet asked */
};

struct ms_symgaps {
	uint64_t *pts;                /* sorted, unique */
	size_t n, cap;
	struct gap_answer *ans;       /* n + 1: the gap below pts[0], between each two, above the last */
};

static void add_point(struct ms_symgaps *g, uint64_t v)
{
	if (!MS_GROW(g->pts, g->n + 1, g->cap, 1024, SIZE_MAX, false))
		g->pts[g->n++] = v;
}

/* Both ends of each section of elf, as they are and moved by bias. */
static void add_sections(struct ms_symgaps *g, Elf *elf, uint64_t bias)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr mem, *sh;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if ((sh = gelf_getshdr(scn, &mem))) {
			add_point(g, sh->sh_addr);
			add_point(g, sh->sh_addr + sh->sh_size);
			add_point(g, sh->sh_addr + bias);
			add_point(g, sh->sh_addr + sh->sh_size + bias);
		}
}

/* The points of b's symbols and sections, sorted; NULL where memory ran out. */
static struct ms_symgaps *gaps_build(Dwfl_Module *mod)
{
	struct ms_symgaps *g = calloc(1, sizeof(*g));
	Elf *elf, *seen[4] = { NULL };
	int nsyms = dwfl_module_getsymtab(mod), i, k;
	GElf_Addr value, mbias = 0;
	Dwarf_Addr bias;
	GElf_Word shndx;
	GElf_Sym sym;
	size_t j, u;

	if (!g)
		return NULL;
	add_sections(g, dwfl_module_getelf(mod, &mbias), mbias);
	for (i = 1; i < nsyms; i++) {
		if (!dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias))
			continue;
		add_point(g, value);
		add_point(g, value + sym.st_size);
		add_point(g, sym.st_value + bias);
		add_point(g, sym.st_value + bias + sym.st_size);
		for (k = 0; k < 4 && seen[k] && seen[k] != elf; k++)
			;
		if (k < 4 && !seen[k]) {
			seen[k] = elf;
			add_sections(g, elf, bias);
		}
	}
	qsort(g->pts, g->n, sizeof(*g->pts), ms_u64_order);
	for (j = u = 0; j < g->n; j++)
		if (!u || g->pts[u - 1] != g->pts[j])
			g->pts[u++] = g->pts[j];
	g->n = u;
	g->ans = malloc((g->n + 1) * sizeof(*g->ans));
	if (!g->ans) {
		ms_symgaps_free(g);
		return NULL;
	}
	for (j = 0; j <= g->n; j++)
		g->ans[j] = (struct gap_answer){ NULL, UINT64_MAX };
	return g;
}

const char *ms_symgaps_name(struct ms_symgaps **gp, Dwfl_Module *mod, uint64_t vaddr, uint64_t *offset)
{
	struct ms_symgaps *g = *gp ? *gp : (*gp = gaps_build(mod));
	size_t lo = 0, hi = g ? g->n : 0, mid;
	const char *name;
	GElf_Off off;
	GElf_Sym sym;
	bool inside;

	while (lo < hi) {                    /* lo: the points <= vaddr */
		mid = lo + (hi - lo) / 2;
		if (g->pts[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	inside = g && (lo == 0 || vaddr > g->pts[lo - 1]);
	if (inside && g->ans[lo].value != UINT64_MAX) {
		*offset = g->ans[lo].name ? vaddr - g->ans[lo].value : 0;
		return g->ans[lo].name;
	}
	name = dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL);
	*offset = name ? off : 0;
	if (inside)
		g->ans[lo] = (struct gap_answer){ name, name ? vaddr - off : 0 };
	return name;
}

void ms_symgaps_free(struct ms_symgaps *g)
{
	if (!g)
		return;
	free(g->pts);
	free(g->ans);
	free(g);
}
