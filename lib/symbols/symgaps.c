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
 *
 * The points and symbols are gathered in symtab.c's pass over the
 * binary's symbols for its table (ms_symgaps_begin(), ms_symgaps_add()),
 * not read through libdwfl a second time, and sorted on the first
 * address that needs them.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "util/grow.h"
#include "util/hash.h"

/*
 * After ms_symgaps_fast_after gaps replayed one at a time (each a pass over every
 * symbol: 28,401 of cc1's, about 200 gaps in a report of a `make -j2`,
 * 19% of it), the replay's answer is made for every gap at once; where
 * the walk's sizeless symbols (those it can answer with) are at most
 * FAST_CANDS a pass. Building it costs about as much as 15 one-gap
 * replays: the sized symbols' bounds sorted, a pass over the symbols for
 * the candidates, a binary search for each candidate's bounds.
 */
#define FAST_CANDS 16

size_t ms_symgaps_fast_after = 16;

/*
 * A gap's answer, kept once asked, by the gap's index: most are never
 * asked (217 of 86,000 gaps in a report of a chromium recording, whose
 * array of every gap's answer was 1.4 MB of its peak).
 */
struct gap_answer {
	size_t gap;                   /* SIZE_MAX: an empty slot */
	const char *name;
	uint64_t value;
};

/* A symbol the walk considers, as it sees it. */
struct gsym {
	uint64_t value, size;
	const char *name;
	uint32_t shndx;
	uint32_t sec;                 /* sizeless: the section libdwfl finds value in (section_of()) */
};

/*
 * A sizeless symbol that the replay may answer with: its pass's candidate
 * in the gaps [from, to], and the answer there only up to gap `kill`
 * (fast_build()).
 */
struct cand {
	const struct gsym *y;
	size_t from, to, kill;
};

/* One pass of the replay, as it answers for every gap at once (fast_build()). */
struct fast_pass {
	uint32_t *cover;              /* by gap: the pass's sized symbols that hold its addresses */
	struct cand c[FAST_CANDS];    /* its sizeless symbols, in the pass's order */
	size_t nc;
};

struct ms_symgaps {
	uint64_t *pts;                /* sorted, unique */
	size_t n, cap;
	bool sorted;                  /* pts sorted, once (gaps_finish()) */
	struct gap_answer *ans;       /* the gaps asked about (of n + 1: below pts[0], between each two, above the last) */
	size_t ans_cap, ans_len;      /* ans_cap: a power of two, or 0 */
	struct gsym *syms;            /* the walk's symbols, in table order */
	size_t nr_syms, cap_syms;
	size_t split;                 /* syms[split..]: the first pass's (globals) */
	int first_global;
	bool no_replay;               /* the walk's own answers only */
	bool no_fast;                 /* the replay answers one gap at a time */
	size_t replays;               /* gaps replayed so far, one at a time */
	struct fast_pass fp[2];       /* the globals' pass, the locals' (after ms_symgaps_fast_after replays) */
	size_t nr_fast;               /* gaps answered from fp */
	Elf *seen[4];                 /* the files whose sections are points already (ms_symgaps_add()) */
};

/* Adds point v; not where it is the one added last (a symbol's end is often the next one's start). */
static void add_point(struct ms_symgaps *g, uint64_t v)
{
	if (g->n && g->pts[g->n - 1] == v)
		return;
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
			if (bias) {          /* at bias 0 they are the two above */
				add_point(g, sh->sh_addr + bias);
				add_point(g, sh->sh_addr + sh->sh_size + bias);
			}
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
	MS_SHRINK(g->pts, g->n, g->cap);
	MS_SHRINK(g->syms, g->nr_syms, g->cap_syms);
}

struct ms_symgaps *ms_symgaps_begin(Dwfl_Module *mod)
{
	struct ms_symgaps *g = calloc(1, sizeof(*g));
	GElf_Addr mbias = 0;

	if (!g)
		return NULL;
	g->first_global = dwfl_module_getsymtab_first_global(mod);
	g->no_replay = g->first_global < 0;
	add_sections(g, dwfl_module_getelf(mod, &mbias), mbias);
	return g;
}

void ms_symgaps_add(struct ms_symgaps *g, Dwfl_Module *mod, int i, const GElf_Sym *sym, const char *name,
		    uint64_t value, GElf_Word shndx, Elf *elf, uint64_t bias)
{
	int k;

	add_point(g, value);
	add_point(g, value + sym->st_size);
	if (sym->st_value + bias != value) {   /* mostly they are the same: half the points to sort */
		add_point(g, sym->st_value + bias);
		add_point(g, sym->st_value + bias + sym->st_size);
	}
	for (k = 0; k < 4 && g->seen[k] && g->seen[k] != elf; k++)
		;
	if (k < 4 && !g->seen[k]) {
		g->seen[k] = elf;
		add_sections(g, elf, bias);
	}
	keep_sym(g, mod, i, sym, name, value, shndx);
}

/* The points of mod's symbols and sections, unsorted, read through libdwfl; NULL where memory ran out. */
static struct ms_symgaps *gaps_read(Dwfl_Module *mod)
{
	struct ms_symgaps *g = ms_symgaps_begin(mod);
	int nsyms = dwfl_module_getsymtab(mod), i;
	const char *name;
	GElf_Addr value;
	Dwarf_Addr bias;
	GElf_Word shndx;
	GElf_Sym sym;
	Elf *elf;

	for (i = 1; g && i < nsyms; i++)
		if ((name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias)))
			ms_symgaps_add(g, mod, i, &sym, name, value, shndx, elf, bias);
	return g;
}

/*
 * The points sorted, once, where the first address outside every sized
 * symbol is asked about: a binary whose addresses all fall inside one
 * never sorts them.
 */
static void gaps_finish(struct ms_symgaps *g)
{
	size_t j, u;

	ms_u64_sort(g->pts, g->n);
	for (j = u = 0; j < g->n; j++)
		if (!u || g->pts[u - 1] != g->pts[j])
			g->pts[u++] = g->pts[j];
	g->n = u;
	shrink(g);
	g->sorted = true;
}

/* Gap j's slot among the answers (ans_cap is not 0): its own, or the empty one it would take. */
static struct gap_answer *ans_slot(const struct ms_symgaps *g, size_t j)
{
	size_t i = ms_hash64(j, g->ans_cap);

	while (g->ans[i].gap != SIZE_MAX && g->ans[i].gap != j)
		i = (i + 1) & (g->ans_cap - 1);
	return &g->ans[i];
}

/* Keeps gap j's answer; where memory runs out it is not kept, and is found again when next asked. */
static void ans_put(struct ms_symgaps *g, size_t j, const char *name, uint64_t value)
{
	struct gap_answer *old = g->ans, *a;
	size_t cap = g->ans_cap, i;

	if ((g->ans_len + 1) * 2 > cap) {
		g->ans_cap = cap ? 2 * cap : 8;
		if (!(g->ans = malloc(g->ans_cap * sizeof(*g->ans)))) {
			g->ans = old;
			g->ans_cap = cap;
			return;
		}
		for (i = 0; i < g->ans_cap; i++)
			g->ans[i].gap = SIZE_MAX;
		for (i = 0; i < cap; i++)
			if (old[i].gap != SIZE_MAX)
				*ans_slot(g, old[i].gap) = old[i];
		free(old);
	}
	a = ans_slot(g, j);
	g->ans_len += a->gap == SIZE_MAX;
	*a = (struct gap_answer){ j, name, value };
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

/* The index of point v (a symbol's start or end, which are all points). */
static size_t pos_of(const struct ms_symgaps *g, uint64_t v)
{
	return ms_u64_lower(g->pts, g->n, v);
}

/*
 * Pass syms [from, to) for every gap j, (pts[j - 1], pts[j]): the sized
 * symbols that hold it (those starting at or below pts[j - 1] less those
 * ending there: all bounds are points), and its sizeless symbols, each a
 * candidate from the gap above its start. False where memory ran out, a
 * start is not a point, or there are more than FAST_CANDS sizeless ones.
 */
static bool fast_pass_build(struct ms_symgaps *g, struct fast_pass *fp, size_t from, size_t to)
{
	const size_t gaps = g->n + 1;
	uint64_t *starts = NULL, *ends = NULL;
	size_t i, j, k, a = 0, b = 0, nsized = 0;
	const struct gsym *y;
	bool ok = false;

	for (i = from, k = 0; i < to; i++) {
		k += !g->syms[i].size && g->syms[i].shndx < SHN_LORESERVE;
		nsized += g->syms[i].size != 0;
	}
	if (k > FAST_CANDS || !(fp->cover = calloc(gaps, sizeof(*fp->cover))) ||
	    (nsized && (!(starts = malloc(nsized * sizeof(*starts))) || !(ends = malloc(nsized * sizeof(*ends))))))
		goto out;
	for (i = from, nsized = 0; i < to; i++) {
		y = &g->syms[i];
		if (y->size) {
			starts[nsized] = y->value;
			ends[nsized++] = y->value + y->size;
		} else if (y->shndx < SHN_LORESERVE) {   /* an absolute one answers at its address alone */
			k = pos_of(g, y->value);
			if (k == g->n || g->pts[k] != y->value)
				goto out;
			fp->c[fp->nc++] = (struct cand){ y, k + 1, gaps, gaps };
		}
	}
	ms_u64_sort(starts, nsized);
	ms_u64_sort(ends, nsized);
	for (j = 1; j < gaps; j++) {
		while (a < nsized && starts[a] <= g->pts[j - 1])
			a++;
		while (b < nsized && ends[b] <= g->pts[j - 1])
			b++;
		fp->cover[j] = (uint32_t)(a - b);
	}
	ok = true;
out:
	free(starts);
	free(ends);
	return ok;
}

/* The index of syms[i] in the walk's order: the globals' pass, then the locals'. */
static size_t walk_order(const struct ms_symgaps *g, size_t i)
{
	return i >= g->split ? i - g->split : g->nr_syms - g->split + i;
}

/*
 * Both passes for every gap; false (and no_fast) where they cannot be
 * made. A candidate y fails in gap j where the walk has seen, before it,
 * a symbol that ends above it: seen from the gap above that symbol's
 * start, so y stands up to the lowest such start's gap (to). Its answer
 * stands where no symbol the walk saw at all ends above it (kill).
 */
static bool fast_build(struct ms_symgaps *g)
{
	const size_t passes = g->first_global > 1 ? 2 : 1;
	size_t i, k, n = 0, order, yord[2 * FAST_CANDS];
	uint64_t cut[2 * FAST_CANDS], kill[2 * FAST_CANDS];
	struct cand *c[2 * FAST_CANDS];
	const struct gsym *z;

	if (!fast_pass_build(g, &g->fp[0], g->split, g->nr_syms) || !fast_pass_build(g, &g->fp[1], 0, g->split))
		return !(g->no_fast = true);
	for (i = 0; i < passes; i++)
		for (k = 0; k < g->fp[i].nc; k++, n++) {
			c[n] = &g->fp[i].c[k];
			yord[n] = walk_order(g, (size_t)(c[n]->y - g->syms));
			cut[n] = kill[n] = UINT64_MAX;
		}
	for (i = 0; n && i < g->nr_syms; i++) {
		z = &g->syms[i];                   /* (one pass: split is 0, no locals were kept) */
		order = walk_order(g, i);
		for (k = 0; k < n; k++)
			if (z->value + z->size > c[k]->y->value) {
				if (z->value < kill[k])
					kill[k] = z->value;
				if (order < yord[k] && z->value < cut[k])
					cut[k] = z->value;
			}
	}
	for (k = 0; k < n; k++) {                      /* those starts are points: the gaps below them */
		if (cut[k] != UINT64_MAX)
			c[k]->to = pos_of(g, cut[k]);
		if (kill[k] != UINT64_MAX)
			c[k]->kill = pos_of(g, kill[k]);
	}
	return true;
}

/* replay() for vaddr inside gap j, from the passes made for every gap. */
static bool fast_answer(struct ms_symgaps *g, Dwfl_Module *mod, size_t j, uint64_t addr, const char **name,
			uint64_t *offset)
{
	const uint32_t sec = section_of(mod, addr);
	const size_t passes = g->first_global > 1 ? 2 : 1;
	const struct cand *cand = NULL;
	size_t p, k;

	for (p = 0; p < passes; p++) {
		if (g->fp[p].cover[j])
			return false;                 /* a sized symbol holds it: the walk answers */
		for (k = 0; k < g->fp[p].nc; k++)
			if (g->fp[p].c[k].from <= j && j <= g->fp[p].c[k].to && g->fp[p].c[k].y->sec == sec)
				cand = &g->fp[p].c[k];
	}
	*name = cand && j <= cand->kill ? cand->y->name : NULL;
	*offset = *name ? addr - cand->y->value : 0;
	g->nr_fast++;
	return true;
}

const char *ms_symgaps_name(struct ms_symgaps **gp, Dwfl_Module *mod, uint64_t vaddr, uint64_t *offset)
{
	struct ms_symgaps *g = *gp ? *gp : (*gp = gaps_read(mod));
	size_t lo = 0, hi, mid;
	const char *name;
	GElf_Off off;
	const struct gap_answer *a;
	GElf_Sym sym;
	bool inside, replayed;

	if (g && !g->sorted)
		gaps_finish(g);
	hi = g ? g->n : 0;
	while (lo < hi) {                    /* lo: the points <= vaddr */
		mid = lo + (hi - lo) / 2;
		if (g->pts[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	inside = g && (lo == 0 || vaddr > g->pts[lo - 1]);
	if (inside && g->ans_cap && (a = ans_slot(g, lo))->gap == lo) {
		*offset = a->name ? vaddr - a->value : 0;
		return a->name;
	}
	if (inside && !g->no_replay && !g->no_fast && !g->fp[0].cover && ++g->replays > ms_symgaps_fast_after)
		fast_build(g);
	if (inside && g->fp[0].cover && !g->no_fast)
		replayed = fast_answer(g, mod, lo, vaddr, &name, offset);
	else
		replayed = g && replay(g, mod, vaddr, &name, offset);
	if (!replayed) {
		name = dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL);
		*offset = name ? off : 0;
	}
	if (inside)
		ans_put(g, lo, name, name ? vaddr - *offset : 0);
	return name;
}

void ms_symgaps_free(struct ms_symgaps *g)
{
	if (!g)
		return;
	free(g->pts);
	free(g->ans);
	free(g->syms);
	free(g->fp[0].cover);
	free(g->fp[1].cover);
	free(g);
}

size_t ms_symgaps_nr_fast(const struct ms_symgaps *g)
{
	return g ? g->nr_fast : 0;
}

size_t ms_symgaps_answer_bytes(const struct ms_symgaps *g, size_t *gaps)
{
	*gaps = g ? g->n + 1 : 0;
	return g ? g->ans_cap * sizeof(*g->ans) : 0;
}
