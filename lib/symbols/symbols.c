/*
 * Per binary: its PT_LOAD segments (file offset -> address), a Dwfl with
 * the binary reported at bias 0 (so module addresses are the file's own),
 * and a cache of resolved addresses. Per process: the binaries it has
 * loaded, each with its bias, found from the first map of each binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include <mapscope/symbols.h>

#include "util/hash.h"
#include "util/log.h"
#include "util/u32map.h"

struct seg {
	uint64_t offset, filesz, vaddr, memsz;
};

struct cached {
	uint64_t vaddr;               /* key; UINT64_MAX: empty */
	const char *name;
	uint64_t offset;
};

/* A symbol with a size that libdwfl's search may name, as it sees it. */
struct sized {                   /* 32 bytes: a table is written once, page by new page */
	uint64_t value;               /* adjusted, as addresses are */
	uint64_t maxend;              /* the largest end of this entry and all before it */
	const char *name;
	uint32_t size;                /* it holds [value, value + size) */
	uint32_t idx : 30;            /* its index: the search's order */
	uint32_t bind : 2;            /* binding_value() */
};

struct bin {
	char *path;
	int state;                    /* 0: not opened, 1: segments read, 2: symbols loaded,
					 -1: unusable, -2: could not be opened */
	int open_errno;
	bool warned;
	struct seg *segs;
	size_t nr_segs;
	uint64_t lo, hi;              /* vaddr span of the loaded image */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct cached *cache;
	size_t cache_cap, cache_len;
	/* The symbols with a size, by value; sizeless globals' values, sorted. */
	struct sized *sized;
	size_t nr_sized;
	uint64_t *sizeless;
	size_t nr_sizeless;
	int first_global;
	bool table;                   /* sized and sizeless are built */
	unsigned char want_id[64];    /* the build-id the recording saw */
	size_t want_id_len;
};

struct inst {
	size_t bin;
	uint64_t bias, lo, hi;        /* addresses [lo, hi) in the process */
};

struct unwind_arg {
	uint32_t tid;
	uint64_t regs[17];            /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	const unsigned char *stack;
	size_t stack_len;
	uint64_t *out;
	int n, max;
};

struct proc_bins {
	struct inst *v;
	size_t n, cap;
	size_t hint;
	Dwfl *dwfl;                   /* for unwinding: every binary at its bias */
	size_t dwfl_n;                /* instances when it was built */
	struct unwind_arg *uw;
};

struct ms_symbols {
	struct bin *bins;
	size_t nr_bins, cap_bins;
	struct ms_u32map procs;       /* pid -> struct proc_bins */
	uint64_t gen;                 /* moves with every change ms_symbols_track() makes */
	bool exact_only;              /* no sorted tables: every address through libdwfl's own search */
};

/*
 * Separate debug files: by build-id under /usr/lib/debug, and by
 * .gnu_debuglink, as dwfl_standard_find_debuginfo() finds them; but that
 * ends with a debuginfod query for a binary it finds none for, and loading
 * the debuginfod client (libcurl, a TLS stack: some 30 libraries) costs
 * ~12 ms here even with no server named. So only where DEBUGINFOD_URLS
 * names a server; otherwise by build-id alone, and the binary's own
 * symbols serve where there is none.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && *urls)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
						    debuglink_crc, debuginfo_file_name);
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
};

MS_EXPORT struct ms_symbols *ms_symbols_new(void)
{
	struct ms_symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	ms_u32map_init(&s->procs);
	return s;
}

/* The file behind a map's name: the kernel appends " (deleted)" to removed files. */
static void real_path(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	if (n > 10 && !strcmp(name + n - 10, " (deleted)"))
		n -= 10;
	snprintf(out, len, "%.*s", (int)n, name);
}

static ssize_t bin_index(struct ms_symbols *s, const char *path, bool create)
{
	void *grown;
	size_t i;

	for (i = 0; i < s->nr_bins; i++)
		if (!strcmp(s->bins[i].path, path))
			return (ssize_t)i;
	if (!create)
		return -1;
	if (s->nr_bins == s->cap_bins) {
		grown = realloc(s->bins, (s->cap_bins ? 2 * s->cap_bins : 32) * sizeof(*s->bins));
		if (!grown)
			return -1;
		s->bins = grown;
		s->cap_bins = s->cap_bins ? 2 * s->cap_bins : 32;
	}
	memset(&s->bins[s->nr_bins], 0, sizeof(s->bins[0]));
	s->bins[s->nr_bins].path = strdup(path);
	if (!s->bins[s->nr_bins].path)
		return -1;
	return (ssize_t)s->nr_bins++;
}

MS_EXPORT void ms_symbols_expect_build_id(struct ms_symbols *s, const char *path,
					  const unsigned char *id, size_t len)
{
	ssize_t i = bin_index(s, path, true);

	if (i < 0 || len > sizeof(s->bins[0].want_id))
		return;
	memcpy(s->bins[i].want_id, id, len);
	s->bins[i].want_id_len = len;
}

/* Reads the PT_LOAD segments; quietly unusable for files that are not ELF. */
static void read_segments(struct bin *b)
{
	size_t n, i;
	GElf_Phdr ph;
	Elf *elf;
	int fd;

	b->state = -1;
	fd = open(b->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		b->state = -2;
		b->open_errno = errno;
		return;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return;
	}
	b->segs = calloc(n ? n : 1, sizeof(*b->segs));
	b->lo = UINT64_MAX;
	for (i = 0; b->segs && i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b->segs[b->nr_segs++] = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz };
		if (ph.p_vaddr < b->lo)
			b->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > b->hi)
			b->hi = ph.p_vaddr + ph.p_memsz;
	}
	elf_end(elf);
	close(fd);
	if (b->nr_segs)
		b->state = 1;
}

static struct proc_bins *proc_of(struct ms_symbols *s, uint32_t pid, bool create)
{
	struct proc_bins *p = ms_u32map_get(&s->procs, pid);

	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (p && ms_u32map_put(&s->procs, pid, p)) {
		free(p);
		p = NULL;
	}
	return p;
}

static void add_inst(struct proc_bins *p, size_t bin, uint64_t bias, const struct bin *b)
{
	struct inst *grown;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].bin == bin && p->v[i].bias == bias)
			return;
	if (p->n == p->cap) {
		grown = realloc(p->v, (p->cap ? 2 * p->cap : 16) * sizeof(*grown));
		if (!grown)
			return;
		p->v = grown;
		p->cap = p->cap ? 2 * p->cap : 16;
	}
	p->v[p->n++] = (struct inst){ bin, bias, bias + b->lo, bias + b->hi };
}

static void track_map(struct ms_symbols *s, const struct ms_event *ev)
{
	const struct ms_event_map *m = &ev->map;
	char path[4096];
	struct proc_bins *p;
	struct bin *b;
	ssize_t i;
	size_t k;

	if (m->name[0] != '/' || !(m->maj || m->min || m->ino))
		return;
	real_path(m->name, path, sizeof(path));
	i = bin_index(s, path, true);
	if (i < 0)
		return;
	b = &s->bins[i];
	if (b->state == 0)
		read_segments(b);
	/* Data files come and go; a missing binary that held code deserves one warning. */
	if (b->state == -2 && (m->prot & PROT_EXEC) && !b->warned) {
		b->warned = true;
		ms_warn("cannot read '%s' (%s): its addresses are shown raw", b->path, strerror(b->open_errno));
	}
	if (b->state < 0)
		return;
	for (k = 0; k < b->nr_segs; k++) {
		const struct seg *g = &b->segs[k];

		if (m->pgoff >= g->offset && m->pgoff < g->offset + (g->filesz ? g->filesz : 1)) {
			p = proc_of(s, ev->pid, true);
			if (p)
				add_inst(p, (size_t)i, m->start - (m->pgoff - g->offset + g->vaddr), b);
			return;
		}
	}
}

static void clear_proc(struct ms_symbols *s, uint32_t pid)
{
	struct proc_bins *p = proc_of(s, pid, false);

	if (p) {
		p->n = 0;
		if (p->dwfl)
			dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
}

MS_EXPORT void ms_symbols_track(struct ms_symbols *s, const struct ms_event *ev)
{
	struct proc_bins *parent, *child;
	size_t i;

	switch (ev->kind) {
	case MS_EV_MAP:
		s->gen++;
		track_map(s, ev);
		break;
	case MS_EV_EXEC:
		s->gen++;
		clear_proc(s, ev->pid);
		break;
	case MS_EV_FORK:
		if (ev->fork.child_pid == ev->pid)
			break;
		s->gen++;
		clear_proc(s, ev->fork.child_pid);
		parent = proc_of(s, ev->pid, false);
		child = parent ? proc_of(s, ev->fork.child_pid, true) : NULL;
		for (i = 0; child && i < parent->n; i++)
			add_inst(child, parent->v[i].bin, parent->v[i].bias, &s->bins[parent->v[i].bin]);
		break;
	default:
		break;
	}
}

MS_EXPORT uint64_t ms_symbols_generation(const struct ms_symbols *s)
{
	return s->gen;
}

/* Opens the binary's symbols; a different build-id than recorded makes it unusable. */
static void load_symbols(struct bin *b)
{
	const unsigned char *id;
	GElf_Addr at;
	int n;

	b->dwfl = dwfl_begin(&callbacks);
	if (b->dwfl) {
		dwfl_report_begin(b->dwfl);
		b->mod = dwfl_report_elf(b->dwfl, basename(b->path), b->path, -1, 0, false);
		dwfl_report_end(b->dwfl, NULL, NULL);
	}
	if (!b->mod) {
		ms_warn("cannot read symbols of '%s': %s: its addresses are shown raw", b->path,
			dwfl_errmsg(-1));
		b->state = -1;
		return;
	}
	if (b->want_id_len) {
		n = dwfl_module_build_id(b->mod, &id, &at);
		if (n != (int)b->want_id_len || memcmp(id, b->want_id, b->want_id_len)) {
			ms_warn("'%s' is not the binary that was recorded (its build-id differs): "
				"its addresses are shown raw", b->path);
			b->state = -1;
			return;
		}
	}
	b->state = 2;
}

static struct cached *cache_slot(struct bin *b, uint64_t vaddr)
{
	struct cached *old = b->cache;
	size_t i, j, cap = b->cache_cap;

	if ((b->cache_len + 1) * 2 > b->cache_cap) {
		b->cache_cap = cap ? 2 * cap : 1024;
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

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sorts v[0, n) by value, equal values in the order they came (by index):
 * a least-significant-digit radix sort, 11 bits a pass over only the bits
 * the values use, so libc's table takes two passes instead of a qsort's
 * million calls of a comparison callback. false on ENOMEM (v unsorted).
 */
static bool sort_sized(struct sized *v, size_t n)
{
	struct sized *tmp = malloc(n * sizeof(*tmp)), *src = v, *dst = tmp, *t;
	uint64_t top = 0;
	size_t count[2048], i, sum, c;
	unsigned int shift;

	if (!tmp)
		return false;
	for (i = 0; i < n; i++)
		top |= v[i].value;
	for (shift = 0; shift < 64 && (top >> shift); shift += 11) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i].value >> shift) & 2047]++;
		for (i = 0, sum = 0; i < 2048; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].value >> shift) & 2047]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
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

/* b->sized and b->sizeless from every symbol the search would consider. */
static void build_table(struct bin *b)
{
	int i, n = dwfl_module_getsymtab(b->mod);
	GElf_Addr value;
	GElf_Word shndx;
	const char *name;
	GElf_Sym sym;
	size_t k;

	b->table = true;
	b->first_global = dwfl_module_getsymtab_first_global(b->mod);
	if (n <= 1 || !(b->sized = malloc((size_t)n * sizeof(*b->sized))) ||
	    !(b->sizeless = malloc((size_t)n * sizeof(*b->sizeless))))
		return;
	for (i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(b->mod, i, &sym, &value, &shndx, NULL, NULL);
		if (!name || !name[0] || shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
		    GELF_ST_TYPE(sym.st_info) == STT_FILE || GELF_ST_TYPE(sym.st_info) == STT_TLS)
			continue;
		if (sym.st_size > UINT32_MAX || i >= 1 << 30) {
			b->nr_sized = b->nr_sizeless = 0;   /* beyond the table's fields: libdwfl answers */
			return;
		}
		if (sym.st_size)
			b->sized[b->nr_sized++] = (struct sized){ value, 0, name, (uint32_t)sym.st_size,
								  (uint32_t)i, (uint32_t)binding_value(&sym) };
		else if (i >= b->first_global)
			b->sizeless[b->nr_sizeless++] = value;
	}
	if (!sort_sized(b->sized, b->nr_sized))
		b->nr_sized = 0;                 /* no table: libdwfl answers */
	qsort(b->sizeless, b->nr_sizeless, sizeof(*b->sizeless), u64_cmp);
	for (k = 0; k < b->nr_sized; k++)
		b->sized[k].maxend = k && b->sized[k - 1].maxend > b->sized[k].value + b->sized[k].size ?
					     b->sized[k - 1].maxend : b->sized[k].value + b->sized[k].size;
}

static bool has_sizeless_at(const struct bin *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nr_sizeless, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->sizeless[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nr_sizeless && b->sizeless[lo] == addr;
}

/*
 * What dwfl_module_addrinfo() names addr when that is a symbol with a
 * size, from the sorted table instead of a walk over every symbol; NULL
 * where its answer would be a sizeless symbol or none (the caller asks it
 * then). Its search, done the same way: the global symbols first, the
 * local ones only where no global holds addr (and no sizeless global
 * starts exactly there); of the sized symbols holding addr, in table
 * order, one replaces the one before when it starts later or binds more
 * strongly.
 */
static const struct sized *find_sized(const struct bin *b, uint64_t addr)
{
	const struct sized *cand[64], *best, *t;
	size_t lo = 0, hi = b->nr_sized, mid, nc = 0, j, a, c;
	int pass, from;

	while (lo < hi) {                    /* lo: entries with value <= addr */
		mid = lo + (hi - lo) / 2;
		if (b->sized[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j-- > 0 && b->sized[j].maxend > addr;)
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
		if (pass && (b->first_global <= 1 || has_sizeless_at(b, addr)))
			return NULL;
		best = NULL;
		for (a = 0; a < nc; a++) {
			if (pass ? (int)cand[a]->idx >= from : (int)cand[a]->idx < from)
				continue;
			if (!best || best->value < cand[a]->value || best->bind < cand[a]->bind)
				best = cand[a];
		}
		if (best)
			return best;
	}
	return NULL;
}

/*
 * The name libdwfl gives vaddr, and the offset into it: from the sorted
 * table where the answer is a sized symbol, else by
 * dwfl_module_addrinfo(), which walks the whole symbol table (~830,000
 * instructions on libc) on each call.
 */
static const char *resolve_name(const struct ms_symbols *s, struct bin *b, uint64_t vaddr, uint64_t *offset)
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
	name = dwfl_module_addrinfo(b->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	*offset = name ? off : 0;
	return name;
}

MS_EXPORT void ms_symbols_exact_only(struct ms_symbols *s, bool on)
{
	s->exact_only = on;
}

/* The binary mapped at addr in process pid now, or NULL. */
static const struct inst *inst_at(struct ms_symbols *s, uint32_t pid, uint64_t addr)
{
	struct proc_bins *p = proc_of(s, pid, false);
	size_t i;

	if (!p)
		return NULL;
	if (p->hint < p->n && addr >= p->v[p->hint].lo && addr < p->v[p->hint].hi)
		return &p->v[p->hint];
	for (i = 0; i < p->n; i++)
		if (addr >= p->v[i].lo && addr < p->v[i].hi) {
			p->hint = i;
			return &p->v[i];
		}
	return NULL;
}

MS_EXPORT int ms_symbols_resolve(struct ms_symbols *s, uint32_t pid, uint64_t addr, bool want_line,
				 struct ms_sym *out)
{
	const struct inst *in = inst_at(s, pid, addr);
	struct cached *c;
	struct bin *b;
	Dwfl_Line *line;

	memset(out, 0, sizeof(*out));
	if (!in)
		return -ENOENT;
	b = &s->bins[in->bin];
	out->dso = b->path;
	out->vaddr = addr - in->bias;
	if (b->state == 1)
		load_symbols(b);
	if (b->state != 2)
		return 0;
	c = cache_slot(b, out->vaddr);
	if (c && c->vaddr == out->vaddr) {
		out->name = c->name;
		out->offset = c->offset;
	} else {
		out->name = resolve_name(s, b, out->vaddr, &out->offset);
		if (c) {
			c->vaddr = out->vaddr;
			c->name = out->name;
			c->offset = out->offset;
			b->cache_len++;
		}
	}
	if (want_line && (line = dwfl_module_getsrc(b->mod, out->vaddr)))
		out->file = dwfl_lineinfo(line, NULL, &out->line, NULL, NULL, NULL);
	return 0;
}

/* An inlined subroutine's name: its abstract origin's. */
static const char *inlined_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &at));
}

/* Where an inlined subroutine was called from: its DW_AT_call_file and DW_AT_call_line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, int *line)
{
	Dwarf_Attribute at;
	Dwarf_Files *files;
	Dwarf_Word v;
	size_t nfiles;

	*line = dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &at), &v) ? 0 : (int)v;
	*file = NULL;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &at), &v) && !dwarf_getsrcfiles(cu, &files, &nfiles) &&
	    v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
}

MS_EXPORT int ms_symbols_frames(struct ms_symbols *s, uint32_t pid, uint64_t addr, struct ms_frame *out, int max)
{
	const struct inst *in = inst_at(s, pid, addr);
	Dwarf_Die *cu, *scopes = NULL;
	struct ms_sym sym;
	Dwarf_Addr bias;
	const char *file;
	struct bin *b;
	int n = 0, nscopes, i, line;

	if (max < 1 || !in || ms_symbols_resolve(s, pid, addr, true, &sym))
		return 0;
	b = &s->bins[in->bin];
	file = sym.file;
	line = sym.line;
	/* dwarf_getscopes: the innermost scope first, out to the compile unit. */
	if (b->state == 2 && b->mod && (cu = dwfl_module_addrdie(b->mod, sym.vaddr, &bias)) &&
	    (nscopes = dwarf_getscopes(cu, sym.vaddr - bias, &scopes)) > 0) {
		for (i = 0; i < nscopes && n < max - 1; i++) {
			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
				continue;
			out[n].name = inlined_name(&scopes[i]);
			out[n].file = file;
			out[n].line = line;
			n++;
			call_site(cu, &scopes[i], &file, &line);   /* the caller's place in the next frame */
		}
		free(scopes);
	}
	out[n].name = sym.name;
	out[n].file = file;
	out[n].line = line;
	return n + 1;
}

/* Frames of the C library and the loader are the mechanism, not the site. */
static bool runtime_dso(const char *dso)
{
	const char *base = dso ? strrchr(dso, '/') : NULL;

	base = base ? base + 1 : dso;
	return base && (!strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8) ||
			!strncmp(base, "libpthread", 10));
}

MS_EXPORT void ms_symbols_call_site(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
				    char *site, size_t site_len, char *text, size_t text_len)
{
	char frame[256];
	struct ms_sym sym;
	size_t at = 0;
	uint32_t i, shown = 0;
	int err;

	site[0] = text[0] = '\0';
	for (i = 0; i < len && shown < 12; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		err = ms_symbols_resolve(s, pid, chain[i], false, &sym);
		ms_sym_format(&sym, err, chain[i], frame, sizeof(frame));
		if (at < text_len)
			at += (size_t)snprintf(text + at, text_len - at, "%s%s", shown++ ? " <- " : "", frame);
		if (!site[0] && !err && sym.name && !runtime_dso(sym.dso))
			snprintf(site, site_len, "%s", sym.name);
	}
}

/* --- unwinding ---------------------------------------------------------------- */

static pid_t uw_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct unwind_arg *u = dwfl_arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwind_arg *u = dwfl_arg;
	uint64_t sp = u->regs[7];

	(void)dwfl;
	if (addr < sp || addr - sp + 8 > u->stack_len)
		return false;
	memcpy(result, u->stack + (addr - sp), 8);
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind_arg *u = thread_arg;

	return dwfl_thread_state_registers(thread, 0, 17, (const Dwarf_Word *)u->regs);
}

static const Dwfl_Thread_Callbacks uw_callbacks = {
	.next_thread = uw_next_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int uw_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind_arg *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || u->n >= u->max)
		return DWARF_CB_ABORT;
	u->out[u->n++] = pc;
	return DWARF_CB_OK;
}

/* The process's binaries reported at their bias, rebuilt when it maps more. */
static Dwfl *proc_dwfl(struct ms_symbols *s, struct proc_bins *p, uint32_t pid)
{
	struct bin *b;
	size_t i;

	if (p->dwfl && p->dwfl_n == p->n)
		return p->dwfl;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = dwfl_begin(&callbacks);
	if (!p->dwfl)
		return NULL;
	if (!p->uw && !(p->uw = calloc(1, sizeof(*p->uw))))
		return NULL;
	dwfl_report_begin(p->dwfl);
	for (i = 0; i < p->n; i++) {
		b = &s->bins[p->v[i].bin];
		if (b->state > 0)
			dwfl_report_elf(p->dwfl, basename(b->path), b->path, -1, p->v[i].bias, false);
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->uw->tid = pid;
	if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &uw_callbacks, p->uw)) {
		ms_debug("cannot prepare unwinding for process %u: %s", pid, dwfl_errmsg(-1));
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return NULL;
	}
	p->dwfl_n = p->n;
	return p->dwfl;
}

/* perf's register order for x86_64: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15. */
static bool perf_reg(const uint64_t *regs, uint64_t mask, int bit, uint64_t *v)
{
	if (!(mask >> bit & 1))
		return false;
	*v = regs[__builtin_popcountll(mask & ((1ULL << bit) - 1))];
	return true;
}

MS_EXPORT int ms_symbols_unwind(struct ms_symbols *s, uint32_t pid, const uint64_t *regs, uint64_t mask,
				const unsigned char *stack, size_t stack_len, uint64_t *out, int max)
{
#if defined(__x86_64__)
	static const int to_perf[17] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 };
	struct proc_bins *p = proc_of(s, pid, false);
	Dwfl *dwfl;
	int i;

	if (!p || !regs)
		return -ENOENT;
	dwfl = proc_dwfl(s, p, pid);
	if (!dwfl)
		return -ENOENT;
	for (i = 0; i < 17; i++)
		if (!perf_reg(regs, mask, to_perf[i], &p->uw->regs[i]))
			return -EINVAL;
	p->uw->stack = stack;
	p->uw->stack_len = stack_len;
	p->uw->out = out;
	p->uw->n = 0;
	p->uw->max = max;
	dwfl_getthread_frames(dwfl, (pid_t)pid, uw_frame, p->uw);
	return p->uw->n;
#else
	(void)s; (void)pid; (void)regs; (void)mask; (void)stack; (void)stack_len; (void)out; (void)max;
	return -ENOTSUP;
#endif
}

MS_EXPORT void ms_sym_format(const struct ms_sym *sym, int found, uint64_t addr, char *buf, size_t len)
{
	const char *slash;

	if (found == 0 && sym->name)
		snprintf(buf, len, "%s+0x%llx", sym->name, (unsigned long long)sym->offset);
	else if (found == 0 && sym->dso) {
		slash = strrchr(sym->dso, '/');
		snprintf(buf, len, "%s+0x%llx", slash ? slash + 1 : sym->dso, (unsigned long long)sym->vaddr);
	} else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

MS_EXPORT int ms_elf_build_id(const char *path, unsigned char *id, size_t cap)
{
	const void *bits;
	ssize_t n = -ENOENT;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		n = dwelf_elf_gnu_build_id(elf, &bits);
		if (n > 0 && (size_t)n <= cap)
			memcpy(id, bits, (size_t)n);
		else
			n = -ENOENT;
		elf_end(elf);
	}
	close(fd);
	return (int)n;
}

MS_EXPORT int ms_elf_first_load(const char *path, uint64_t ino, uint64_t *size)
{
	struct stat st;
	GElf_Phdr ph;
	size_t n, i;
	Elf *elf;
	int fd, err = -ENOENT;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n))
		for (i = 0; i < n; i++) {
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			*size = (ph.p_filesz + (ph.p_vaddr & 4095) + 4095) & ~4095ULL;
			err = *size ? 0 : -ENOENT;
			break;
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

MS_EXPORT void ms_symbols_free(struct ms_symbols *s)
{
	struct proc_bins *p;
	size_t i, pos = 0;

	if (!s)
		return;
	while ((p = ms_u32map_next(&s->procs, &pos, NULL))) {
		if (p->dwfl)
			dwfl_end(p->dwfl);
		free(p->uw);
		free(p->v);
		free(p);
	}
	ms_u32map_release(&s->procs);
	for (i = 0; i < s->nr_bins; i++) {
		if (s->bins[i].dwfl)
			dwfl_end(s->bins[i].dwfl);
		free(s->bins[i].path);
		free(s->bins[i].segs);
		free(s->bins[i].cache);
		free(s->bins[i].sized);
		free(s->bins[i].sizeless);
	}
	free(s->bins);
	free(s);
}
