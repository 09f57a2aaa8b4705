/*
 * A binary's symbols: libdwfl opens them, and a table sorted once per
 * binary answers what dwfl_module_addrinfo() would, without its walk over
 * every symbol on each call; a cache keeps the names found.
 */
#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"

#include "util/grow.h"
#include "util/hash.h"
#include "util/log.h"

/* Why a binary's symbols cannot be read. */
enum load_fail { LOAD_OK, LOAD_OPEN, LOAD_DWFL, LOAD_BUILD_ID };

/*
 * The module dwfl_report_elf() makes of an ET_DYN or ET_EXEC file at base
 * 0: [*start, *end), as its address range has it; false where elf is
 * neither, or that range would fail.
 */
static bool module_span(Elf *elf, uint64_t *start, uint64_t *end)
{
	uint64_t vaddr = 0, bias;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n, i;

	if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return false;
		if (ph.p_type == PT_LOAD) {
			vaddr = ph.p_vaddr & -ph.p_align;
			break;
		}
	}
	*start = eh.e_type == ET_EXEC ? vaddr : 0;
	bias = eh.e_type == ET_EXEC ? 0 : -vaddr;
	for (*end = 0, i = n; i-- > 0;) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return false;
		if (ph.p_type == PT_LOAD && ph.p_vaddr + ph.p_memsz > 0) {
			*end = bias + ph.p_vaddr + ph.p_memsz;
			break;
		}
	}
	return *end != 0;
}

/*
 * b's module in b->dwfl where it has the file open (ms_bin_elf()):
 * reported over the range dwfl_report_elf() would give it, libdwfl's
 * find_elf handed that file (symbols.c), so that the symbols and every
 * unwinder read one mapping of it. NULL where it is not, or libdwfl
 * fails: dwfl_report_elf() then says why.
 */
static Dwfl_Module *report_shared(struct bin *b)
{
	Dwfl_Module *mod = NULL;
	uint64_t start, end;
	GElf_Addr bias;
	void **ud;
	Elf *elf;

	if (ms_bin_elf(b, &elf) || !module_span(elf, &start, &end))
		return NULL;
	dwfl_report_begin(b->dwfl);
	mod = dwfl_report_module(b->dwfl, basename(b->path), start, end);
	dwfl_report_end(b->dwfl, NULL, NULL);
	if (!mod || !dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		return NULL;
	*ud = b;                             /* for find_elf, now: the bins may move later */
	if (!dwfl_module_getelf(mod, &bias))
		mod = NULL;
	*ud = NULL;
	return mod;
}

/* b's module by dwfl_report_elf() on a descriptor of its own, where report_shared() gives none. */
static enum load_fail report_own(struct bin *b, int *err)
{
	int fd = ms_elf_open(b->path);   /* again: the file may have changed since its segments were read */

	if ((*err = fd) < 0)
		return LOAD_OPEN;
	b->dwfl = dwfl_begin(&ms_dwfl_callbacks);
	if (b->dwfl) {
		dwfl_report_begin(b->dwfl);
		b->mod = dwfl_report_elf(b->dwfl, basename(b->path), b->path, fd, 0, false);
		dwfl_report_end(b->dwfl, NULL, NULL);
	}
	if (!b->mod) {
		close(fd);                   /* libdwfl takes it only on success */
		return LOAD_DWFL;
	}
	return LOAD_OK;
}

/* Opens b's symbols into b->dwfl and b->mod, as far as it gets; *err: ms_elf_open()'s, for LOAD_OPEN. */
static enum load_fail open_symbols(struct bin *b, int *err)
{
	enum load_fail fail;
	const unsigned char *id;
	GElf_Addr at;
	int n;

	if ((b->dwfl = dwfl_begin(&ms_dwfl_callbacks)) && !(b->mod = report_shared(b))) {
		dwfl_end(b->dwfl);
		b->dwfl = NULL;
	}
	if (!b->mod && (fail = report_own(b, err)) != LOAD_OK)
		return fail;
	if (b->want_id_len) {
		n = dwfl_module_build_id(b->mod, &id, &at);
		if (n != (int)b->want_id_len || memcmp(id, b->want_id, b->want_id_len))
			return LOAD_BUILD_ID;
	}
	return LOAD_OK;
}

/* Opens the binary's symbols; a different build-id than recorded makes it unusable. */
void ms_bin_load_symbols(struct bin *b)
{
	int err;

	switch (open_symbols(b, &err)) {
	case LOAD_OK:
		b->state = 2;
		return;
	case LOAD_OPEN:
		ms_warn("cannot read symbols of '%s': %s: its addresses are shown raw", b->path, strerror(-err));
		break;
	case LOAD_DWFL:
		ms_warn("cannot read symbols of '%s': %s: its addresses are shown raw", b->path, dwfl_errmsg(-1));
		break;
	case LOAD_BUILD_ID:
		ms_warn("'%s' is not the binary that was recorded (its build-id differs): "
			"its addresses are shown raw", b->path);
		break;
	}
	b->state = -1;
}

/*
 * Where reading them says nothing, reading a binary's symbols sooner
 * than naming would changes no answer and no output. Where it would warn,
 * nothing is kept (and it is not tried again): the warning is naming's.
 * Not before its build-id is known: a pipe's come as records, one maybe
 * after the pin and before naming reads the binary, and a binary rebuilt
 * since is then named raw, with a warning (ms_bin_load_symbols()).
 */
bool ms_bin_open_symbols(struct bin *b)
{
	int err;

	if (open_symbols(b, &err) == LOAD_OK) {
		b->state = 2;
		return true;
	}
	if (b->dwfl)
		dwfl_end(b->dwfl);
	b->dwfl = NULL;
	b->mod = NULL;
	return false;
}

bool ms_bin_try_symbols(struct bin *b)
{
	if (b->state != 1 || b->tried || !b->want_id_len)
		return b->state != 1;
	if (ms_bin_open_symbols(b))
		return true;
	b->tried = true;
	return false;
}

static struct cached *cache_slot(struct bin *b, uint64_t vaddr)
{
	struct cached *old = b->cache;
	size_t i, j, cap = b->cache_cap;

	if ((b->cache_len + 1) * 2 > b->cache_cap) {
		b->cache_cap = cap ? 2 * cap : 16;
		b->cache = malloc(b->cache_cap * sizeof(*b->cache));
		if (!b->cache) {
			b->cache = old;
			b->cache_cap = cap;
			return NULL;
		}
		for (i = 0; i < b->cache_cap; i++)
			b->cache[i].vaddr = UINT64_MAX;
		for (i = 0; i < cap; i++) {
			if (old[i].vaddr == UINT64_MAX)
				continue;
			for (j = ms_hash64(old[i].vaddr, b->cache_cap); b->cache[j].vaddr != UINT64_MAX;
			     j = (j + 1) & (b->cache_cap - 1))
				;
			b->cache[j] = old[i];
		}
		free(old);
	}
	for (i = ms_hash64(vaddr, b->cache_cap); b->cache[i].vaddr != UINT64_MAX; i = (i + 1) & (b->cache_cap - 1))
		if (b->cache[i].vaddr == vaddr)
			return &b->cache[i];
	return &b->cache[i];
}

int ms_u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The uint64_t key at byte off of element i of v, whose elements are size bytes. */
static inline uint64_t key_at(const unsigned char *v, size_t i, size_t size, size_t off)
{
	uint64_t k;

	memcpy(&k, v + i * size + off, sizeof(k));
	return k;
}

/* Below this many elements an insertion sort beats the passes' counting. */
#define RADIX_SMALL 24

/* Stable insertion sort of the n elements of size bytes at v by their key at off (small n). */
static void insertion_sort(unsigned char *v, size_t n, size_t size, size_t off)
{
	unsigned char t[64];
	size_t i, j;
	uint64_t k;

	for (i = 1; i < n; i++) {
		k = key_at(v, i, size, off);
		for (j = i; j > 0 && key_at(v, j - 1, size, off) > k; j--)
			;
		if (j == i)
			continue;
		memcpy(t, v + i * size, size);
		memmove(v + (j + 1) * size, v + j * size, (i - j) * size);
		memcpy(v + j * size, t, size);
	}
}

/*
 * Sorts the n elements of size bytes (at most 64) at v by their uint64_t
 * key at byte off, equal keys in the order they came: a
 * least-significant-digit radix sort over the bits by which the keys
 * differ from the least (key - min: the same order), in digits as wide as
 * n is large (4 to 13 bits) and as few passes as those bits need, so
 * libc's table takes two passes instead of a qsort's million calls of a
 * comparison callback, and a binary's table of 200 symbols does not clear
 * and sum 2048 counts a pass for each. false on ENOMEM (v unsorted).
 */
static bool radix_sort(void *v, size_t n, size_t size, size_t off)
{
	unsigned char *tmp, *src = v, *dst, *t;
	uint64_t lo = UINT64_MAX, hi = 0, k;
	unsigned int bits = 0, width = 4, passes, shift, p;
	size_t *count, i, sum, c, mask;

	if (n < RADIX_SMALL) {
		insertion_sort(v, n, size, off);
		return true;
	}
	for (i = 0; i < n; i++) {
		k = key_at(src, i, size, off);
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	while (bits < 64 && ((hi - lo) >> bits))
		bits++;
	if (!bits)
		return true;                 /* all equal */
	while (width < 13 && ((size_t)1 << width) < n)
		width++;
	passes = (bits + width - 1) / width;
	width = (bits + passes - 1) / passes;
	mask = ((size_t)1 << width) - 1;
	if (!(tmp = malloc(n * size + (mask + 1) * sizeof(*count))))
		return false;
	count = (size_t *)(void *)(tmp + n * size);   /* n * size is a multiple of 8 here */
	dst = tmp;
	for (p = 0, shift = 0; p < passes; p++, shift += width) {
		memset(count, 0, (mask + 1) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((key_at(src, i, size, off) - lo) >> shift) & mask]++;
		for (i = 0, sum = 0; i <= mask; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			memcpy(dst + count[((key_at(src, i, size, off) - lo) >> shift) & mask]++ * size,
			       src + i * size, size);
		t = src;
		src = dst;
		dst = t;
	}
	if (src != (unsigned char *)v)
		memcpy(v, src, n * size);
	free(tmp);
	return true;
}

/* A qsort of a binary's symbol values made millions of calls of a comparison callback. */
void ms_u64_sort(uint64_t *v, size_t n)
{
	if (!radix_sort(v, n, sizeof(*v), 0))
		qsort(v, n, sizeof(*v), ms_u64_order);
}

bool ms_sized_sort(struct sized *v, size_t n)
{
	size_t j;

	if (!radix_sort(v, n, sizeof(*v), offsetof(struct sized, value)))
		return false;
	for (j = 0; j < n; j++)
		v[j].maxend = j && v[j - 1].maxend > v[j].value + v[j].size ? v[j - 1].maxend : v[j].value + v[j].size;
	return true;
}

/* libdwfl's ranking of bindings: global over weak over local. */
static int binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/*
 * b->sized and b->sizeless, made for every one of the n symbols, cut to
 * what they hold: a stripped library's .dynsym has few sizeless globals
 * (711 of chromium's ~50,000 symbols), and what is cut goes back to the
 * heap for the next binary's tables.
 */
static void cut_to_fit(struct bin *b, size_t n)
{
	size_t cap = n;

	MS_SHRINK(b->sized, b->nr_sized, cap);
	cap = n;
	MS_SHRINK(b->sizeless, b->nr_sizeless, cap);
	if (!b->nr_sized) {
		free(b->sized);
		b->sized = NULL;
	}
	if (!b->nr_sizeless) {
		free(b->sizeless);
		b->sizeless = NULL;
	}
}

/* A symbol as dwfl_module_getsym_info() gives it. */
struct got {
	const char *name;
	GElf_Sym sym;
	GElf_Addr value;
	GElf_Word shndx;
	Elf *elf;
	Dwarf_Addr bias;
};

/* Symbols read ahead of their use: their names' first bytes are fetched meanwhile (read_ahead()). */
#define AHEAD 32

/*
 * Symbols [i, i + n) of b into got, each name's first byte prefetched: a
 * large .dynsym's names lie scattered over its string table in no order
 * of the symbols' (cc1's 28,000 over 1.2 MB), and the first read of each
 * (is it empty?) right after libdwfl gave it was a cache miss a symbol:
 * 80% of the time of the pass, 4.6% of a hugepages run on a make
 * recording. Read AHEAD symbols later, the misses overlap.
 */
static void read_ahead(struct bin *b, int i, int n, struct got *got)
{
	int k;

	for (k = 0; k < n; k++) {
		got[k].name = dwfl_module_getsym_info(b->mod, i + k, &got[k].sym, &got[k].value, &got[k].shndx,
						      &got[k].elf, &got[k].bias);
		if (got[k].name)
			__builtin_prefetch(got[k].name);
	}
}

/* Adds symbol i (got) to b's table, or to b->sizeless; false where it is beyond the table's fields. */
static bool table_add(struct bin *b, int i, const struct got *got)
{
	const GElf_Sym *sym = &got->sym;

	if (!ms_sym_walked(got->name, sym, got->shndx))
		return true;
	if (sym->st_size > UINT32_MAX || i >= 1 << 30)
		return false;            /* beyond the table's fields: libdwfl answers */
	if (sym->st_size)
		b->sized[b->nr_sized++] = (struct sized){ got->value, 0, got->name, (uint32_t)sym->st_size,
							  (uint32_t)i, (uint32_t)binding_value(sym) };
	else if (i >= b->first_global)
		b->sizeless[b->nr_sizeless++] = got->value;
	return true;
}

/*
 * b->sized and b->sizeless from every symbol the search would consider,
 * and b->gaps' symbols from the same pass: each symbol is read through
 * libdwfl once for both. The sorted table is lent to b->gaps.
 */
/* The string table g's name lies in, noted (the first two: a module's symbols and its auxiliary ones). */
static void note_strtab(struct bin *b, const struct got *g)
{
	uintptr_t name = (uintptr_t)g->name, base = name - g->sym.st_name;
	struct bin_strtab *t;
	int i;

	for (i = 0; i < b->nr_strtabs && i < 2; i++) {
		t = &b->strtabs[i];
		if (t->elf == g->elf && t->base == base) {
			if (name > t->last)
				t->last = name;
			return;
		}
	}
	if (b->nr_strtabs < 2)
		b->strtabs[b->nr_strtabs] = (struct bin_strtab){ g->elf, base, name };
	if (b->nr_strtabs < 3)
		b->nr_strtabs++;
}

/* b's string tables, where build_table() did not note them (libdwfl's own search, or no table). */
static void read_strtabs(struct bin *b)
{
	int i, n = dwfl_module_getsymtab(b->mod);
	struct got g;

	b->strtabs_read = true;
	if (b->nr_strtabs)
		return;
	for (i = 1; i < n; i++) {
		g.name = dwfl_module_getsym_info(b->mod, i, &g.sym, &g.value, &g.shndx, &g.elf, &g.bias);
		if (g.name)
			note_strtab(b, &g);
	}
}

/* Where name (a symbol's, as libdwfl gave it) lies in b's string tables: ms_bin_name()'s id. */
static uint64_t string_id(struct bin *b, const char *name)
{
	uintptr_t a = (uintptr_t)name;
	int i;

	if (!name)
		return 0;
	if (!b->strtabs_read)
		read_strtabs(b);
	for (i = 0; i < b->nr_strtabs && b->nr_strtabs <= 2; i++)
		if (a >= b->strtabs[i].base && a <= b->strtabs[i].last && a - b->strtabs[i].base < (1ULL << 56))
			return (uint64_t)(i + 1) << 56 | (a - b->strtabs[i].base);
	return 0;
}

static void build_table(struct bin *b)
{
	int i, k, c, n = dwfl_module_getsymtab(b->mod);
	struct got got[AHEAD];
	bool fits = true;

	b->table = true;
	b->first_global = dwfl_module_getsymtab_first_global(b->mod);
	if (n <= 1 || !(b->sized = malloc((size_t)n * sizeof(*b->sized))) ||
	    !(b->sizeless = malloc((size_t)n * sizeof(*b->sizeless))))
		return;
	if (!b->gaps)
		b->gaps = ms_symgaps_begin(b->mod);   /* NULL: ms_symgaps_name() reads the symbols again */
	for (i = 1; i < n; i += c) {
		c = n - i < AHEAD ? n - i : AHEAD;
		read_ahead(b, i, c, got);
		for (k = 0; k < c; k++) {
			if (got[k].name)
				note_strtab(b, &got[k]);
			if (got[k].name && b->gaps)
				ms_symgaps_add(b->gaps, b->mod, i + k, &got[k].sym, got[k].name, got[k].value,
					       got[k].shndx, got[k].elf, got[k].bias);
			if (fits)
				fits = table_add(b, i + k, &got[k]);
		}
	}
	b->strtabs_read = true;
	cut_to_fit(b, (size_t)n);
	if (!fits || !ms_sized_sort(b->sized, b->nr_sized)) {
		b->nr_sized = b->nr_sizeless = 0;   /* no table: libdwfl answers */
		return;
	}
	ms_u64_sort(b->sizeless, b->nr_sizeless);
	ms_symgaps_table(b->gaps, b->sized, b->nr_sized);
}

/*
 * Whether libdwfl's search takes c over best, both holding the address
 * (its try_sym_value()): c starts later or binds more strongly, or it
 * starts where best does, binds alike and is smaller (libc's
 * _sys_siglist@GLIBC_2.2.5, 512 bytes, over the 520 of
 * _sys_siglist@GLIBC_2.3.3 listed before it at the same address).
 */
static bool replaces(const struct sized *best, const struct sized *c)
{
	return !best || best->value < c->value || best->bind < c->bind ||
	       (best->value == c->value && best->bind == c->bind && best->size > c->size);
}

/*
 * What dwfl_module_addrinfo() names addr when that is a symbol with a
 * size, from the sorted table instead of a walk over every symbol; NULL
 * where its answer would be a sizeless symbol or none (the caller asks it
 * then). Its search, done the same way: the global symbols first, the
 * local ones only where no global holds addr (and no sizeless global
 * starts exactly there); of the sized symbols holding addr, in table
 * order, one replaces the one before as replaces() says.
 */
static const struct sized *find_sized(const struct bin *b, uint64_t addr)
{
	const struct sized *cand[64], *best, *t;
	size_t nc = 0, j, a, c;
	int pass, from;

	for (j = ms_sized_upto(b->sized, b->nr_sized, addr); j-- > 0 && b->sized[j].maxend > addr;)
		if (b->sized[j].value + b->sized[j].size > addr) {
			if (nc == sizeof(cand) / sizeof(cand[0]))
				return NULL;     /* unusually many: the search answers */
			cand[nc++] = &b->sized[j];
		}
	for (a = 1; a < nc; a++)             /* into table order */
		for (c = a; c > 0 && cand[c - 1]->idx > cand[c]->idx; c--) {
			t = cand[c];
			cand[c] = cand[c - 1];
			cand[c - 1] = t;
		}
	from = b->first_global > 1 ? b->first_global : 1;
	for (pass = 0; pass < 2; pass++) {
		if (pass && (b->first_global <= 1 || ms_u64_has(b->sizeless, b->nr_sizeless, addr)))
			return NULL;
		best = NULL;
		for (a = 0; a < nc; a++) {
			if (pass ? (int)cand[a]->idx >= from : (int)cand[a]->idx < from)
				continue;
			if (replaces(best, cand[a]))
				best = cand[a];
		}
		if (best)
			return best;
	}
	return NULL;
}

/*
 * The name libdwfl gives vaddr, and the offset into it: from the sorted
 * table where the answer is a sized symbol, else as
 * dwfl_module_addrinfo() gives it, whose walk over the whole symbol table
 * (~830,000 instructions on libc) on each call symgaps.c replays.
 */
static const char *search_name(const struct ms_symbols *s, struct bin *b, uint64_t vaddr, uint64_t *offset)
{
	const struct sized *z;
	const char *name;
	GElf_Off off;
	GElf_Sym sym;

	if (!s->exact_only) {
		if (!b->table)
			build_table(b);
		if ((z = find_sized(b, vaddr))) {
			*offset = vaddr - z->value;
			return z->name;
		}
	}
	if (!s->exact_only)
		return ms_symgaps_name(&b->gaps, b->mod, vaddr, offset);
	name = dwfl_module_addrinfo(b->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	*offset = name ? off : 0;
	return name;
}

/* search_name() once per address, demangled: the names found are kept in b's cache. */
const char *ms_bin_name(struct ms_symbols *s, struct bin *b, uint64_t vaddr, uint64_t *offset, const char **raw,
			uint64_t *id)
{
	struct cached *c = cache_slot(b, vaddr);
	const char *name, *found;

	if (c && c->vaddr == vaddr) {
		*offset = c->offset;
		name = c->name;
		found = c->raw;
	} else {
		found = search_name(s, b, vaddr, offset);
		name = ms_symbols_demangled(s, found);
		if (c) {
			c->vaddr = vaddr;
			c->name = name;
			c->raw = found;
			c->offset = *offset;
			b->cache_len++;
		}
	}
	if (raw)
		*raw = found;
	if (raw && id)
		*id = string_id(b, found);
	return name;
}

void ms_symbols_exact_only(struct ms_symbols *s, bool on)
{
	s->exact_only = on;
}
