/*
 * Names of addresses that no sized symbol holds, without a walk over the
 * whole symbol table for each.
 *
 * dwfl_module_addrinfo() walks every symbol on each call. symtab.c's
 * sorted table answers for addresses inside a sized symbol; the others
 * (all of a stripped binary's code, named from .dynsym alone, or nothing)
 * went to the walk every time: 60% of a report of a `make -j2` recording,
 * whose cc1 is stripped. The walk considers a symbol or not whatever the
 * address (its name, section index and type), so those it considers are
 * kept once, in symtab.c's pass over the binary's symbols
 * (ms_symgaps_begin(), ms_symgaps_add()), and its answer is replayed over
 * them (replay()). The walk's answer depends on the address only through
 * comparisons with their values, their ends (value + size) and section
 * bounds: between two neighbouring such bounds it names the same symbol,
 * so a replay's answer is kept for that gap (an address equal to a bound
 * may be answered otherwise: a sizeless global matches exactly).
 *
 * After a few replays (each a pass over every symbol: 28,401 of cc1's)
 * the replay is made for every address at once (fast_build()): a pass
 * over the symbols for what each sizeless one needs to be the answer, and
 * the sized ones by value, each with the largest end up to it (symtab.c's
 * table, borrowed: ms_symgaps_table()). It used to be made for every gap
 * between the bounds, which took three sorts of each symbol's bounds;
 * it now answers by address, and sorts nothing but the few sizeless
 * symbols' values (an address that is one of them is replayed: a global
 * sizeless symbol there ends the walk's search). Every answer is still
 * the walk's own.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "util/grow.h"

/*
 * At most this many sizeless symbols that the walk can answer with, in a
 * pass, for the replay made for every address at once: each address
 * tries each of them.
 */
#define FAST_CANDS 16

/*
 * Gaps replayed one at a time before the replay is made for every address
 * at once, which costs about as much as three replays (passes over the
 * symbols): most binaries are asked about a gap or two. 0, 2, 4, 8 and 16
 * measured on reports of a make -j2 and a chromium recording: 0 to 4
 * alike, 16 a millisecond more of hugepages on the make one.
 */
size_t ms_symgaps_fast_after = 2;

/* A replay's answer: the same for every address strictly between lo and hi. */
struct known {
	uint64_t lo, hi;
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

/* An allocated section of the module's main file, as the walk finds an address's (read_sections()). */
struct gsec {
	uint64_t start, end;          /* its end is in it, unless the next one starts there */
	uint32_t ndx;
};

/*
 * A sizeless symbol that the walk may answer with: a candidate for
 * addresses above it and below cut (below it, no symbol before it in the
 * walk's order that starts there ends past it), and the answer below kill
 * (the same of every symbol).
 */
struct cand {
	const struct gsym *y;
	uint64_t cut, kill;
};

struct ms_symgaps {
	struct gsym *syms;            /* the walk's symbols, in table order */
	size_t nr_syms, cap_syms;
	size_t split;                 /* syms[split..]: the first pass's (globals) */
	int first_global;
	bool no_replay;               /* the walk's own answers only */
	bool no_fast;                 /* the replay answers one address at a time */
	bool fast;                    /* made for every address at once (fast_build()) */
	bool trimmed;                 /* the arrays cut to what they hold */
	size_t replays;               /* replays made one at a time */
	uint64_t *bounds;             /* section bounds, and symbol bounds but values: where gaps end too */
	size_t nr_bounds, cap_bounds;
	struct known *known;          /* the gaps replayed, by lo; they do not overlap */
	size_t nr_known, cap_known;
	const struct sized *table;    /* the sized symbols by value, with maxend: borrowed, or own */
	size_t nr_table;
	struct sized *own;
	uint64_t *labels;             /* the sizeless symbols' values, sorted: replayed where asked */
	size_t nr_labels;
	struct cand c[2 * FAST_CANDS];/* in the walk's order: the globals', then the locals' */
	size_t nc;
	size_t nr_fast;               /* addresses answered at once */
	Elf *seen[4];                 /* the files whose sections are bounds already (ms_symgaps_add()) */
	struct gsec *secs;            /* the main file's allocated sections, by start, end, index */
	size_t nr_secs;
	bool secs_dwfl;               /* no list: dwfl_module_address_section() finds them */
};

static void add_bound(struct ms_symgaps *g, uint64_t v)
{
	if (!MS_GROW(g->bounds, g->nr_bounds + 1, g->cap_bounds, 64, SIZE_MAX, false))
		g->bounds[g->nr_bounds++] = v;
	else
		g->no_replay = true;         /* a gap could span a bound it does not know */
}

/* Both ends of each section of elf, as they are and moved by bias. */
static void add_sections(struct ms_symgaps *g, Elf *elf, uint64_t bias)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr mem, *sh;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if ((sh = gelf_getshdr(scn, &mem))) {
			add_bound(g, sh->sh_addr);
			add_bound(g, sh->sh_addr + sh->sh_size);
			if (bias) {          /* at bias 0 they are the two above */
				add_bound(g, sh->sh_addr + bias);
				add_bound(g, sh->sh_addr + sh->sh_size + bias);
			}
		}
}

/* Orders sections as libdwfl's find_section() has them: by start, end, then index. */
static int sec_order(const void *a, const void *b)
{
	const struct gsec *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/*
 * The allocated sections of mod's main file (elf, at bias) as the walk
 * finds an address's (libdwfl's cache_sections() and find_section()):
 * none where it cannot list them all (a section's header or name it
 * cannot read), so that no address has one, as there. Not
 * dwfl_module_address_section(), which first loads the module's DWARF
 * and finds no section for any address where that fails otherwise than
 * for want of DWARF (a section name past the string table): a stripped
 * cc1 so made named every address past .bss _end+offset, where the walk
 * names none. Where the list cannot be made here (ENOMEM, a relocatable
 * file), that function answers.
 */
static void read_sections(struct ms_symgaps *g, Elf *elf, uint64_t bias)
{
	size_t shstrndx, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr mem, *sh;
	GElf_Ehdr eh;

	g->secs_dwfl = !elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL;
	if (g->secs_dwfl || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!(sh = gelf_getshdr(scn, &mem)) ||
		    ((sh->sh_flags & SHF_ALLOC) && !elf_strptr(elf, shstrndx, sh->sh_name))) {
			g->nr_secs = 0;
			return;
		}
		if (!(sh->sh_flags & SHF_ALLOC))
			continue;
		if (MS_GROW(g->secs, g->nr_secs + 1, cap, 32, SIZE_MAX, false)) {
			g->secs_dwfl = true;
			return;
		}
		g->secs[g->nr_secs++] = (struct gsec){ sh->sh_addr + bias, sh->sh_addr + bias + sh->sh_size,
						       (uint32_t)elf_ndxscn(scn) };
	}
	qsort(g->secs, g->nr_secs, sizeof(*g->secs), sec_order);
}

/*
 * The index of the allocated section of the module that the walk finds
 * addr in (it compares these for a sizeless symbol and the address), or
 * SHN_UNDEF: libdwfl's binary search over read_sections()'s list, a
 * section's end in it unless the next one starts there.
 */
static uint32_t section_of(const struct ms_symgaps *g, Dwfl_Module *mod, uint64_t addr)
{
	size_t l = 0, u = g->nr_secs, i;
	Dwarf_Addr a = addr, bias;
	Elf_Scn *scn;

	if (g->secs_dwfl) {
		scn = dwfl_module_address_section(mod, &a, &bias);
		return scn ? (uint32_t)elf_ndxscn(scn) : SHN_UNDEF;
	}
	while (l < u) {
		i = (l + u) / 2;
		if (addr < g->secs[i].start) {
			u = i;
		} else if (addr > g->secs[i].end) {
			l = i + 1;
		} else {
			if (addr == g->secs[i].end && i + 1 < g->nr_secs && addr == g->secs[i + 1].start)
				i++;
			return g->secs[i].ndx;
		}
	}
	return SHN_UNDEF;
}

/* Keeps symbol i for the replay where the walk would consider it (its filter but for the address). */
static void keep_sym(struct ms_symgaps *g, Dwfl_Module *mod, int i, const GElf_Sym *sym, const char *name,
		     uint64_t value, GElf_Word shndx)
{
	if (!ms_sym_walked(name, sym, sym->st_shndx))
		return;
	if (MS_GROW(g->syms, g->nr_syms + 1, g->cap_syms, 1024, SIZE_MAX, false)) {
		g->no_replay = true;
		return;
	}
	if (i < (g->first_global < 0 ? 1 : g->first_global))
		g->split = g->nr_syms + 1;
	g->syms[g->nr_syms++] = (struct gsym){ value, sym->st_size, name, shndx,
					       sym->st_size || shndx >= SHN_LORESERVE ? 0 : section_of(g, mod, value) };
}

struct ms_symgaps *ms_symgaps_begin(Dwfl_Module *mod)
{
	struct ms_symgaps *g = calloc(1, sizeof(*g));
	GElf_Addr mbias = 0;
	Elf *elf;

	if (!g)
		return NULL;
	g->first_global = dwfl_module_getsymtab_first_global(mod);
	g->no_replay = g->first_global < 0;
	elf = dwfl_module_getelf(mod, &mbias);
	add_sections(g, elf, mbias);
	read_sections(g, elf, mbias);
	return g;
}

void ms_symgaps_add(struct ms_symgaps *g, Dwfl_Module *mod, int i, const GElf_Sym *sym, const char *name,
		    uint64_t value, GElf_Word shndx, Elf *elf, uint64_t bias)
{
	int k;

	if (sym->st_value + bias != value) {   /* the walk reads the value; bound the gaps by both anyway */
		add_bound(g, sym->st_value + bias);
		add_bound(g, sym->st_value + bias + sym->st_size);
	}
	for (k = 0; k < 4 && g->seen[k] && g->seen[k] != elf; k++)
		;
	if (k < 4 && !g->seen[k]) {
		g->seen[k] = elf;
		add_sections(g, elf, bias);
	}
	keep_sym(g, mod, i, sym, name, value, shndx);
}

void ms_symgaps_table(struct ms_symgaps *g, const struct sized *v, size_t n)
{
	if (g) {
		g->table = v;
		g->nr_table = n;
	}
}

/* mod's symbols read through libdwfl, for the replay; NULL where memory ran out. */
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
 * The arrays cut to what they hold, once asked: they grew by doubling.
 * What is cut goes back to the heap for the next binary's tables.
 */
static void trim(struct ms_symgaps *g)
{
	MS_SHRINK(g->syms, g->nr_syms, g->cap_syms);
	MS_SHRINK(g->bounds, g->nr_bounds, g->cap_bounds);
	g->trimmed = true;
}

/* The number of known gaps whose lo is below addr. */
static size_t known_below(const struct ms_symgaps *g, uint64_t addr)
{
	size_t lo = 0, hi = g->nr_known, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (g->known[mid].lo < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The gap kept that holds addr, or NULL. */
static const struct known *known_at(const struct ms_symgaps *g, uint64_t addr)
{
	size_t k = known_below(g, addr);

	return k && addr < g->known[k - 1].hi ? &g->known[k - 1] : NULL;
}

/* Keeps an answer for the gap (lo, hi); where memory runs out it is not kept, and is found again when next asked. */
static void known_put(struct ms_symgaps *g, uint64_t lo, uint64_t hi, const char *name, uint64_t value)
{
	size_t k = known_below(g, hi);

	if (MS_GROW(g->known, g->nr_known + 1, g->cap_known, 16, SIZE_MAX, false))
		return;
	memmove(&g->known[k + 1], &g->known[k], (g->nr_known - k) * sizeof(*g->known));
	g->known[k] = (struct known){ lo, hi, name, value };
	g->nr_known++;
}

/* Narrows the gap (*lo, *hi) around addr to leave bound v out. */
static inline void narrow(uint64_t v, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	if (v <= addr) {
		if (v > *lo)
			*lo = v;
	} else if (v < *hi) {
		*hi = v;
	}
}

/*
 * One pass of the walk over syms [from, to) for addr; *held where a sized
 * symbol holds addr (the walk answers then). A sizeless symbol is a
 * candidate where it starts at or past every symbol before it (in the
 * walk's order) that starts at or below addr, and lies in addr's section
 * (an absolute one: at addr exactly); the last such wins. The gap around
 * addr is narrowed by each symbol's bounds.
 */
static void replay_pass(const struct ms_symgaps *g, size_t from, size_t to, uint64_t addr, uint32_t sec,
			uint64_t *min_label, const struct gsym **cand, bool *held, uint64_t gap[2])
{
	const struct gsym *y;
	uint64_t end;
	size_t i;

	for (i = from; i < to; i++) {
		y = &g->syms[i];
		if (y->value > addr) {
			if (y->value < gap[1])
				gap[1] = y->value;
			continue;
		}
		end = y->value + y->size;
		if (y->value > gap[0])
			gap[0] = y->value;
		narrow(end, addr, &gap[0], &gap[1]);
		if (end > *min_label)
			*min_label = end;
		if (y->size && addr - y->value < y->size)
			*held = true;
		if (y->size || y->value < *min_label)
			continue;
		if (y->shndx >= SHN_LORESERVE ? y->value == addr : y->sec == sec)
			*cand = y;
	}
}

/*
 * dwfl_module_addrinfo()'s answer for an address no sized symbol holds,
 * replayed over the symbols kept once instead of read again one by one
 * (a stripped cc1's 29,000 .dynsym entries: ~1 ms a walk, 30% of a report
 * of a make recording): the globals first, then the locals unless a
 * global sizeless symbol starts at addr; the candidate stands if no
 * symbol seen ends past its start. false where the walk must answer.
 * gap: (lo, hi), the bounds nearest addr, where it is no bound itself.
 */
static bool replay(const struct ms_symgaps *g, Dwfl_Module *mod, uint64_t addr, const char **name,
		   uint64_t *offset, uint64_t gap[2])
{
	uint32_t sec = section_of(g, mod, addr);
	const struct gsym *cand = NULL;
	uint64_t min_label = 0;
	bool held = false;
	size_t i;

	replay_pass(g, g->split, g->nr_syms, addr, sec, &min_label, &cand, &held, gap);
	if (g->first_global > 1 && (held || !cand || cand->value != addr))
		replay_pass(g, 0, g->split, addr, sec, &min_label, &cand, &held, gap);
	for (i = 0; i < g->nr_bounds; i++)
		narrow(g->bounds[i], addr, &gap[0], &gap[1]);
	if (held)
		return false;
	*name = cand && cand->value >= min_label ? cand->name : NULL;
	*offset = *name ? addr - cand->value : 0;
	return true;
}

/* The index of syms[i] in the walk's order: the globals' pass, then the locals'. */
static size_t walk_order(const struct ms_symgaps *g, size_t i)
{
	return i >= g->split ? i - g->split : g->nr_syms - g->split + i;
}

/*
 * The sized symbols by value, each with the largest end up to it: the
 * table symtab.c made where it holds the same symbols (all those kept
 * that have a size: it leaves out no more than the walk does), else made
 * here. false where it cannot be (a size beyond the table's, ENOMEM).
 */
static bool sized_index(struct ms_symgaps *g, size_t nsized)
{
	size_t i, n = 0;

	if (g->table && g->nr_table == nsized)
		return true;
	if (nsized && !(g->own = malloc(nsized * sizeof(*g->own))))
		return false;
	for (i = 0; i < g->nr_syms; i++)
		if (g->syms[i].size > UINT32_MAX)
			return false;
		else if (g->syms[i].size)
			g->own[n++] = (struct sized){ .value = g->syms[i].value, .size = (uint32_t)g->syms[i].size };
	g->table = g->own;
	g->nr_table = n;
	return ms_sized_sort(g->own, n);
}

/*
 * The sizeless symbols: their values, sorted, and those the walk can
 * answer with as candidates, in its order. false where a pass has more
 * than FAST_CANDS of them, or memory ran out.
 */
static bool fast_labels(struct ms_symgaps *g, size_t *yord)
{
	const size_t n = g->nr_syms;
	size_t k, i, per[2] = { 0, 0 };
	const struct gsym *y;

	for (i = 0; i < n; i++)
		g->nr_labels += !g->syms[i].size;
	if (g->nr_labels && !(g->labels = malloc(g->nr_labels * sizeof(*g->labels))))
		return false;
	for (k = 0, g->nr_labels = 0; k < n; k++) {
		i = k < n - g->split ? g->split + k : k - (n - g->split);   /* syms[i] is k-th in the walk */
		y = &g->syms[i];
		if (y->size)
			continue;
		g->labels[g->nr_labels++] = y->value;
		if (y->shndx >= SHN_LORESERVE)
			continue;            /* it answers at its value alone: replayed there */
		if (++per[i < g->split] > FAST_CANDS)
			return false;
		yord[g->nc] = k;
		g->c[g->nc++] = (struct cand){ y, UINT64_MAX, UINT64_MAX };
	}
	ms_u64_sort(g->labels, g->nr_labels);
	return true;
}

/*
 * The replay for every address at once; false (and no_fast) where it
 * cannot be made. A candidate y fails at addr where the walk has seen,
 * before it, a symbol that starts at or below addr and ends above y:
 * so y stands below the lowest such start (cut). Its answer stands where
 * no symbol the walk saw at all ends above it (kill).
 */
static bool fast_build(struct ms_symgaps *g)
{
	size_t i, k, order, yord[2 * FAST_CANDS];
	const struct gsym *z;

	if (!fast_labels(g, yord) || !sized_index(g, g->nr_syms - g->nr_labels))
		return !(g->no_fast = true);
	for (i = 0; g->nc && i < g->nr_syms; i++) {
		z = &g->syms[i];
		order = walk_order(g, i);
		for (k = 0; k < g->nc; k++)
			if (z->value + z->size > g->c[k].y->value) {
				if (z->value < g->c[k].kill)
					g->c[k].kill = z->value;
				if (order < yord[k] && z->value < g->c[k].cut)
					g->c[k].cut = z->value;
			}
	}
	return (g->fast = true);
}

/*
 * replay() for addr from what fast_build() made; false where a sized
 * symbol holds addr, or addr is a sizeless symbol's value (the walk or a
 * replay answers there).
 */
static bool fast_answer(struct ms_symgaps *g, Dwfl_Module *mod, uint64_t addr, const char **name,
			uint64_t *offset)
{
	size_t lo = ms_sized_upto(g->table, g->nr_table, addr), k;
	const struct cand *cand = NULL;
	uint32_t sec;

	if ((lo && g->table[lo - 1].maxend > addr) || ms_u64_has(g->labels, g->nr_labels, addr))
		return false;
	sec = g->nc ? section_of(g, mod, addr) : SHN_UNDEF;
	for (k = 0; k < g->nc; k++)
		if (g->c[k].y->value < addr && addr < g->c[k].cut && g->c[k].y->sec == sec)
			cand = &g->c[k];
	*name = cand && addr < cand->kill ? cand->y->name : NULL;
	*offset = *name ? addr - cand->y->value : 0;
	g->nr_fast++;
	return true;
}

const char *ms_symgaps_name(struct ms_symgaps **gp, Dwfl_Module *mod, uint64_t vaddr, uint64_t *offset)
{
	struct ms_symgaps *g = *gp ? *gp : (*gp = gaps_read(mod));
	uint64_t gap[2] = { 0, UINT64_MAX };
	const struct known *k;
	const char *name;
	GElf_Off off;
	GElf_Sym sym;
	bool replayed = false;

	if (g && !g->trimmed)
		trim(g);
	if (g && (k = known_at(g, vaddr))) {
		*offset = k->name ? vaddr - k->value : 0;
		return k->name;
	}
	if (g && !g->no_replay && !g->fast && !g->no_fast && g->replays >= ms_symgaps_fast_after)
		fast_build(g);
	if (g && g->fast && fast_answer(g, mod, vaddr, &name, offset))
		return name;
	if (g && !g->no_replay) {
		replayed = replay(g, mod, vaddr, &name, offset, gap);
		g->replays++;
	}
	if (!replayed) {
		name = dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL);
		*offset = name ? off : 0;
	}
	if (g && !g->no_replay && gap[0] < vaddr)
		known_put(g, gap[0], gap[1], name, name ? vaddr - *offset : 0);
	return name;
}

void ms_symgaps_free(struct ms_symgaps *g)
{
	if (!g)
		return;
	free(g->syms);
	free(g->bounds);
	free(g->known);
	free(g->own);
	free(g->labels);
	free(g->secs);
	free(g);
}

size_t ms_symgaps_nr_fast(const struct ms_symgaps *g)
{
	return g ? g->nr_fast : 0;
}

size_t ms_symgaps_answer_bytes(const struct ms_symgaps *g)
{
	return g ? g->cap_known * sizeof(*g->known) : 0;
}
