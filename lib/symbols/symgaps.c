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

/* A symbol the walk considers, as it sees it. */
struct gsym {
	uint64_t value, size;
	const char *name;
	uint32_t shndx;
	uint32_t sec;                 /* sizeless: the section libdwfl finds value in (section_of()) */
};

struct ms_symgaps {
	uint64_t *pts;                /* sorted, unique */
	size_t n, cap;
	struct gap_answer *ans;       /* n + 1: the gap below pts[0], between each two, above the last */
	struct gsym *syms;            /* the walk's symbols, in table order */
	size_t nr_syms, cap_syms;
	size_t split;                 /* syms[split..]: the first pass's (globals) */
	int first_global;
	bool no_replay;               /* the walk's own answers only */
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

/*
 * The index of the allocated section of the module that libdwfl finds
 * addr in (dwfl_module_addrinfo() compares these for a sizeless symbol
 * and the address), or SHN_UNDEF.
 */
static uint32_t section_of(Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Addr a = addr, bias;
	Elf_Scn *scn = dwfl_module_address_section(mod, &a, &bias);

	return scn ? (uint32_t)elf_ndxscn(scn) : SHN_UNDEF;
}

/* Keeps symbol i for the replay where the walk would consider it (its filter but for the address). */
static void keep_sym(struct ms_symgaps *g, Dwfl_Module *mod, int i, const GElf_Sym *sym, const char *name,
		     uint64_t value, GElf_Word shndx)
{
	if (!name || !name[0] || sym->st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym->st_info) == STT_SECTION ||
	    GELF_ST_TYPE(sym->st_info) == STT_FILE || GELF_ST_TYPE(sym->st_info) == STT_TLS)
		return;
	if (MS_GROW(g->syms, g->nr_syms + 1, g->cap_syms, 1024, SIZE_MAX, false)) {
		g->no_replay = true;
		return;
	}
	if (i < (g->first_global < 0 ? 1 : g->first_global))
		g->split = g->nr_syms + 1;
	g->syms[g->nr_syms++] = (struct gsym){ value, sym->st_size, name, shndx,
					       sym->st_size || shndx >= SHN_LORESERVE ? 0 : section_of(mod, value) };
}

/*
 * The arrays cut to what they hold once built: they grew by doubling, and
 * the points lose most of their four a symbol to duplicates (a binary
 * reported at bias 0 gives each symbol's bounds twice). What is cut goes
 * back to the heap for the next binary's tables.
 */
static void shrink(struct ms_symgaps *g)
{
	uint64_t *pts = g->n ? realloc(g->pts, g->n * sizeof(*g->pts)) : NULL;
	struct gsym *syms = g->nr_syms ? realloc(g->syms, g->nr_syms * sizeof(*g->syms)) : NULL;

	if (pts) {
		g->pts = pts;
		g->cap = g->n;
	}
	if (syms) {
		g->syms = syms;
		g->cap_syms = g->nr_syms;
	}
}

/* The points of b's symbols and sections, sorted; NULL where memory ran out. */
static struct ms_symgaps *gaps_build(Dwfl_Module *mod)
{
	struct ms_symgaps *g = calloc(1, sizeof(*g));
	Elf *elf, *seen[4] = { NULL };
	int nsyms = dwfl_module_getsymtab(mod), i, k;
	GElf_Addr value, mbias = 0;
	const char *name;
	Dwarf_Addr bias;
	GElf_Word shndx;
	GElf_Sym sym;
	size_t j, u;

	if (!g)
		return NULL;
	g->first_global = dwfl_module_getsymtab_first_global(mod);
	g->no_replay = g->first_global < 0;
	add_sections(g, dwfl_module_getelf(mod, &mbias), mbias);
	for (i = 1; i < nsyms; i++) {
		if (!(name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias)))
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
		keep_sym(g, mod, i, &sym, name, value, shndx);
	}
	ms_u64_sort(g->pts, g->n);
	for (j = u = 0; j < g->n; j++)
		if (!u || g->pts[u - 1] != g->pts[j])
			g->pts[u++] = g->pts[j];
	g->n = u;
	shrink(g);
	g->ans = malloc((g->n + 1) * sizeof(*g->ans));
	if (!g->ans) {
		ms_symgaps_free(g);
		return NULL;
	}
	for (j = 0; j <= g->n; j++)
		g->ans[j] = (struct gap_answer){ NULL, UINT64_MAX };
	return g;
}

/*
 * One pass of the walk over syms [from, to) for addr, where no sized
 * symbol holds addr (false where one does: the walk answers then). A
 * sizeless symbol is a candidate where it starts at or past every symbol
 * before it (in the walk's order) that starts at or below addr, and lies
 * in addr's section (an absolute one: at addr exactly); the last such wins.
 */
static bool replay_pass(const struct ms_symgaps *g, size_t from, size_t to, uint64_t addr, uint32_t sec,
			uint64_t *min_label, const struct gsym **cand)
{
	const struct gsym *y;
	size_t i;

	for (i = from; i < to; i++) {
		y = &g->syms[i];
		if (y->value > addr)
			continue;
		if (y->value + y->size > *min_label)
			*min_label = y->value + y->size;
		if (y->size && addr - y->value < y->size)
			return false;
		if (y->size || y->value < *min_label)
			continue;
		if (y->shndx >= SHN_LORESERVE ? y->value == addr : y->sec == sec)
			*cand = y;
	}
	return true;
}

/*
 * dwfl_module_addrinfo()'s answer for an address no sized symbol holds,
 * replayed over the symbols kept once instead of read again one by one
 * (a stripped cc1's 29,000 .dynsym entries: ~1 ms a walk, 30% of a report
 * of a make recording): the globals first, then the locals unless a
 * global sizeless symbol starts at addr; the candidate stands if no
 * symbol seen ends past its start. false where the walk must answer.
 */
static bool replay(const struct ms_symgaps *g, Dwfl_Module *mod, uint64_t addr, const char **name,
		   uint64_t *offset)
{
	uint32_t sec = section_of(mod, addr);
	const struct gsym *cand = NULL;
	uint64_t min_label = 0;

	if (g->no_replay || !replay_pass(g, g->split, g->nr_syms, addr, sec, &min_label, &cand))
		return false;
	if (g->first_global > 1 && (!cand || cand->value != addr) &&
	    !replay_pass(g, 0, g->split, addr, sec, &min_label, &cand))
		return false;
	*name = cand && cand->value >= min_label ? cand->name : NULL;
	*offset = *name ? addr - cand->value : 0;
	return true;
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
	if (!g || !replay(g, mod, vaddr, &name, offset)) {
		name = dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL);
		*offset = name ? off : 0;
	}
	if (inside)
		g->ans[lo] = (struct gap_answer){ name, name ? vaddr - *offset : 0 };
	return name;
}

void ms_symgaps_free(struct ms_symgaps *g)
{
	if (!g)
		return;
	free(g->pts);
	free(g->ans);
	free(g->syms);
	free(g);
}
