/*
 * Per binary: its PT_LOAD segments (file offset -> address), a Dwfl with
 * the binary reported at bias 0 (so module addresses are the file's own),
 * and a cache of resolved addresses. Per process: the binaries it has
 * loaded, each with its bias, found from the first map of each binary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <dwarf.h>

#include "symbols/callmemo.h"
#include "symbols/framecache.h"
#include "symbols/generation.h"
#include "symbols/internal.h"
#include "symbols/pin.h"
#include "symbols/preopen.h"
#include "symbols/scopes.h"
#include "util/grow.h"
#include "util/hash.h"

#include "util/log.h"
#include "util/str.h"

/*
 * Separate debug files: by build-id under /usr/lib/debug, and by
 * .gnu_debuglink, as dwfl_standard_find_debuginfo() finds them; but that
 * ends with a debuginfod query for a binary it finds none for, and loading
 * the debuginfod client (libcurl, a TLS stack: some 30 libraries) costs
 * ~12 ms here even with no server named. So only where DEBUGINFOD_URLS
 * names a server; otherwise by build-id, then by the debuglink
 * (debuginfo.c), and the binary's own symbols serve where there is none.
 * A debug file whose DWARF is compressed is read from its decompressed
 * copy in the user's cache (debugcache.c).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const unsigned char *id = NULL;
	Dwarf_Addr dwbias;
	GElf_Addr at;
	int fd, n;

	n = dwfl_module_build_id(mod, &id, &at);
	/*
	 * The cache's copy before libdwfl's search, which keeps the file it
	 * finds open for the module whatever fd is returned; not for a dwz
	 * file (asked for once the module's debug file is open: dwbias set).
	 */
	if (n > 0 && !(urls && *urls) && dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL) &&
	    dwbias == (Dwarf_Addr)-1 && (fd = ms_debugcache_find(id, (size_t)n, debuginfo_file_name)) >= 0)
		return fd;
	if (urls && *urls)
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
						  debuglink_crc, debuginfo_file_name);
	else if ((fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
						    debuglink_crc, debuginfo_file_name)) < 0 &&
		 file_name && debuglink_file)
		fd = ms_debuglink_find(file_name, debuglink_file, debuglink_crc, id, n > 0 ? (size_t)n : 0,
				       debuginfo_file_name);
	/* The name stays the debug file's: libdwfl finds its .gnu_debugaltlink beside it. */
	return fd >= 0 ? ms_debugcache_swap(fd, id, n > 0 ? (size_t)n : 0) : -1;
}

/*
 * A binary's module reported over the file its bin has open has that bin
 * as its userdata while libdwfl opens it (symtab.c): the file, shared,
 * named by its path as dwfl_report_elf() names it. Any other by build-id.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
		    Elf **elfp)
{
	const struct bin *b = *userdata;

	if (!b)
		return dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);
	if ((*file_name = strdup(b->path)))
		*elfp = ms_bin_elf_ref(b->elf);
	return -1;
}

const Dwfl_Callbacks ms_dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

MS_EXPORT struct ms_symbols *ms_symbols_new(void)
{
	struct ms_symbols *s = calloc(1, sizeof(*s));
	const char *env;

	if (!s || !(s->memo = ms_callmemo_new())) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT);
	ms_u32map_init(&s->procs);
	s->next_change = UINT64_MAX;
	s->unwind_dwfl = (env = getenv("MAPSCOPE_UNWIND")) && !strcmp(env, "dwfl");
	return s;
}

/* The file behind a map's name: the kernel appends " (deleted)" to removed files. */
static void real_path(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	if (n > 10 && !strcmp(name + n - 10, " (deleted)"))
		n -= 10;
	ms_strn_copy(out, len, name, n);
}

bool ms_bin_map_path(const struct ms_event_map *m, char *out, size_t len)
{
	if (m->name[0] != '/' || !(m->maj || m->min || m->ino))
		return false;
	real_path(m->name, out, len);
	return true;
}

struct ms_preopen *ms_symbols_preopen(struct ms_symbols *s)
{
	if (!s->preopen)
		s->preopen = ms_preopen_new();
	return s->preopen;
}

/* b's segments, read from its file as the thread ahead opened it, where it did (preopen.h). */
static void read_segments(struct ms_symbols *s, struct bin *b)
{
	unsigned char head[MS_ELF_HEAD];
	struct ms_preopened f;

	if (s->preopen && !b->image && ms_preopen_take(s->preopen, b->path, head, &f))
		ms_bin_segments_from(b, f.fd, head, f.len, f.elf, f.written);
	else
		ms_bin_read_segments(b);
}

/* Puts bin i in the slots by its path (room is there). */
static void slot_put(struct ms_symbols *s, size_t i)
{
	size_t k = ms_hash64(ms_hash_str(s->bins[i].path), s->bin_slots_cap);

	while (s->bin_slots[k])
		k = (k + 1) & (s->bin_slots_cap - 1);
	s->bin_slots[k] = (uint32_t)i + 1;
}

/* The slots made anew at twice the room, past half full. false where memory ran out (they stay). */
static bool slots_grow(struct ms_symbols *s)
{
	size_t cap = s->bin_slots_cap ? s->bin_slots_cap * 2 : 64, i;
	uint32_t *v;

	if (s->nr_bins + 1 <= s->bin_slots_cap / 2)
		return true;
	if (!(v = calloc(cap, sizeof(*v))))
		return false;
	free(s->bin_slots);
	s->bin_slots = v;
	s->bin_slots_cap = cap;
	for (i = 0; i < s->nr_bins; i++)
		slot_put(s, i);
	return true;
}

/*
 * The bin of path, made where create and missing: found by a hash of its
 * path, not by comparing it with every bin's (each map of each process
 * asks: 1.3M comparisons for a chromium recording's 180 files).
 */
ssize_t ms_bin_index(struct ms_symbols *s, const char *path, bool create)
{
	size_t k;

	for (k = s->bin_slots_cap ? ms_hash64(ms_hash_str(path), s->bin_slots_cap) : 0;
	     s->bin_slots_cap && s->bin_slots[k]; k = (k + 1) & (s->bin_slots_cap - 1))
		if (!strcmp(s->bins[s->bin_slots[k] - 1].path, path))
			return (ssize_t)s->bin_slots[k] - 1;
	if (!create || s->nr_bins >= UINT32_MAX - 1 || !slots_grow(s))
		return -1;
	if (MS_GROW(s->bins, s->nr_bins + 1, s->cap_bins, 32, SIZE_MAX, false))
		return -1;
	memset(&s->bins[s->nr_bins], 0, sizeof(s->bins[0]));
	s->bins[s->nr_bins].path = strdup(path);
	if (!s->bins[s->nr_bins].path)
		return -1;
	slot_put(s, s->nr_bins);
	return (ssize_t)s->nr_bins++;
}

MS_EXPORT void ms_symbols_expect_build_id(struct ms_symbols *s, const char *path,
					  const unsigned char *id, size_t len)
{
	ssize_t i = ms_bin_index(s, path, true);

	if (i < 0 || len > sizeof(s->bins[0].want_id))
		return;
	memcpy(s->bins[i].want_id, id, len);
	s->bins[i].want_id_len = len;
}

struct proc_bins *ms_symbols_proc(struct ms_symbols *s, uint32_t pid, bool create)
{
	struct proc_bins *p;

	if (s->view && pid == s->view_pid)
		return s->view;               /* a pinned chain is named as things were (pin.c) */
	p = ms_u32map_get(&s->procs, pid);
	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (p && ms_u32map_put(&s->procs, pid, p)) {
		free(p);
		p = NULL;
	}
	if (p)
		p->gen = ++s->gen;
	return p;
}

static bool has_inst(const struct proc_bins *p, size_t bin, uint64_t bias)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].bin == bin && p->v[i].bias == bias)
			return true;
	return false;
}

static void add_inst(struct proc_bins *p, size_t bin, uint64_t bias, const struct bin *b)
{
	size_t i;

	if (has_inst(p, bin, bias))
		return;
	if (MS_GROW(p->v, p->n + 1, p->cap, 16, SIZE_MAX, false))
		return;
	for (i = 0; i < p->n && !p->overlap; i++)
		p->overlap = bias + b->lo < p->v[i].hi && p->v[i].lo < bias + b->hi;
	p->v[p->n++] = (struct inst){ bin, bias, bias + b->lo, bias + b->hi };
}

static void track_map(struct ms_symbols *s, const struct ms_event *ev)
{
	const struct ms_event_map *m = &ev->map;
	char path[4096];
	struct proc_bins *p;
	uint64_t bias, first = 0;
	bool found = false;
	struct bin *b;
	ssize_t i;
	size_t k;

	if (!ms_bin_map_path(m, path, sizeof(path)) || (i = ms_bin_index(s, path, true)) < 0)
		return;
	b = &s->bins[i];
	if (b->state == 0)
		read_segments(s, b);
	/* Data files come and go; a missing binary that held code deserves one warning. */
	if (b->state == -2 && (m->prot & PROT_EXEC) && !b->warned) {
		b->warned = true;
		ms_warn("cannot read '%s' (%s): its addresses are shown raw", b->path, strerror(b->open_errno));
	}
	if (b->state < 0)
		return;
	/*
	 * A segment that starts inside a page shares that page with the end of
	 * the one before (libpython's RW segment at 0x414ed0, after an R one
	 * ending at 0x414078), so a map at that page's offset may be of either.
	 * The one that puts the binary where its other maps put it is right (the
	 * loader maps the first segment, at offset 0, first); taking the wrong
	 * one puts the binary a page off, and unwinding through it reads
	 * another function's CFI. With no other map to agree with, the first.
	 */
	p = ms_symbols_proc(s, ev->pid, false);
	for (k = 0; k < b->nr_segs; k++) {
		const struct seg *g = &b->segs[k];

		if (!(m->pgoff >= (g->offset & ~(uint64_t)4095) && m->pgoff < g->offset + (g->filesz ? g->filesz : 1)))
			continue;
		bias = m->start - (m->pgoff - g->offset + g->vaddr);
		if (!found)
			first = bias;
		found = true;
		if (p && has_inst(p, (size_t)i, bias))
			return;
	}
	if (found && (p = ms_symbols_proc(s, ev->pid, true)))
		add_inst(p, (size_t)i, first, b);
}

static void clear_proc(struct ms_symbols *s, uint32_t pid)
{
	struct proc_bins *p = ms_symbols_proc(s, pid, false);

	if (p) {
		ms_pin_retire(s, p);
		ms_unwind_proc_reset(p);
		ms_jit_proc_clear(p);
	}
}

/* A change to what pid's addresses resolve to: its generation moves, and so the symbols'. */
static void moved(struct ms_symbols *s, uint32_t pid)
{
	struct proc_bins *p = ms_symbols_proc(s, pid, false);

	s->gen++;
	if (p)
		p->gen = s->gen;
}

MS_EXPORT void ms_symbols_track(struct ms_symbols *s, const struct ms_event *ev)
{
	struct proc_bins *parent, *child;
	size_t i;

	ms_symbols_set_time(s, ev->time);
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
		parent = ms_symbols_proc(s, ev->pid, false);
		child = parent ? ms_symbols_proc(s, ev->fork.child_pid, true) : NULL;
		for (i = 0; child && i < parent->n; i++)
			add_inst(child, parent->v[i].bin, parent->v[i].bias, &s->bins[parent->v[i].bin]);
		break;
	case MS_EV_EXIT:
		/*
		 * Its binaries stay, to name its samples; its unwinder goes (rebuilt
		 * should its other threads map more): a recording of many processes
		 * otherwise holds every one's libdwfl state to the end.
		 */
		if (ev->tid == ev->pid && (parent = ms_symbols_proc(s, ev->pid, false)))
			ms_unwind_proc_reset(parent);
		break;
	case MS_EV_PROTECT:
		if (ev->protect.prot & PROT_EXEC)
			s->gen++;             /* memory a JIT's code may now be named in */
		break;
	default:
		break;
	}
	ms_jit_track(s, ev);
	if (ev->kind == MS_EV_MAP || ev->kind == MS_EV_EXEC || (ev->kind == MS_EV_PROTECT && (ev->protect.prot & PROT_EXEC)))
		moved(s, ev->pid);
	else if (ev->kind == MS_EV_FORK && ev->fork.child_pid != ev->pid)
		moved(s, ev->fork.child_pid);
}

MS_EXPORT uint64_t ms_symbols_generation(const struct ms_symbols *s)
{
	return s->gen;
}

uint64_t ms_symbols_proc_generation(struct ms_symbols *s, uint32_t pid)
{
	const struct proc_bins *p = ms_symbols_proc(s, pid, false);
	uint64_t g = p ? p->gen : 0;

	return g > s->time_gen ? g : s->time_gen;
}

/* The binary mapped at addr in process pid now, or NULL. */
static const struct inst *inst_at(struct ms_symbols *s, uint32_t pid, uint64_t addr)
{
	struct proc_bins *p = ms_symbols_proc(s, pid, false);
	size_t i;

	if (!p)
		return NULL;
	/* Where instances overlap, the hint would make the answer depend on the lookups before. */
	if (!p->overlap && p->hint < p->n && addr >= p->v[p->hint].lo && addr < p->v[p->hint].hi)
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
	struct bin *b;
	Dwfl_Line *line;

	memset(out, 0, sizeof(*out));
	if (!in)
		return ms_jit_resolve(s, pid, addr, out);
	b = &s->bins[in->bin];
	out->dso = b->path;
	out->vaddr = addr - in->bias;
	if (b->state == 1)
		ms_bin_load_symbols(b);
	if (b->state != 2)
		return 0;
	out->name = ms_bin_name(s, b, out->vaddr, &out->offset, NULL, NULL);
	if (want_line && (line = dwfl_module_getsrc(b->mod, out->vaddr)))
		out->file = dwfl_lineinfo(line, NULL, &out->line, NULL, NULL, NULL);
	return 0;
}

/*
 * An inlined subroutine's name: its abstract origin's, qualified where the
 * DWARF has a linkage name (C++: DW_AT_name is "Scavenge", the linkage
 * name says whose).
 */
static const char *inlined_name(struct ms_symbols *s, Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &at));

	if (linkage)
		return ms_symbols_demangled(s, linkage);
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

/* The frames at addr of instance in, inlined calls expanded, the innermost first. */
static int frames_of(struct ms_symbols *s, uint32_t pid, uint64_t addr, const struct inst *in, struct ms_frame *out,
		     int max)
{
	Dwarf_Die *cu, *scopes = NULL;
	struct ms_sym sym;
	Dwarf_Addr bias;
	const char *file;
	struct bin *b;
	int n = 0, nscopes, i, line;

	if (ms_symbols_resolve(s, pid, addr, true, &sym))
		return 0;
	b = &s->bins[in->bin];
	file = sym.file;
	line = sym.line;
	/* dwarf_getscopes' answer (scopes.c): the innermost scope first, out to the compile unit. */
	if (b->state == 2 && b->mod && (cu = dwfl_module_addrdie(b->mod, sym.vaddr, &bias)) &&
	    (nscopes = ms_scopes_get(&b->scopes, cu, sym.vaddr - bias, &scopes)) > 0) {
		for (i = 0; i < nscopes && n < max - 1; i++) {
			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
				continue;
			out[n].name = inlined_name(s, &scopes[i]);
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

/*
 * Each binary's answers are kept by address: a report asks for the same
 * code addresses many times, and each answer walks DWARF. An answer cut
 * short by max is not kept.
 */
MS_EXPORT int ms_symbols_frames(struct ms_symbols *s, uint32_t pid, uint64_t addr, struct ms_frame *out, int max)
{
	const struct inst *in = inst_at(s, pid, addr);
	struct ms_sym sym;
	struct bin *b;
	int n;

	if (max < 1)
		return 0;
	if (!in) {                            /* a JIT's code: its name alone */
		if (ms_symbols_resolve(s, pid, addr, false, &sym) || !sym.name)
			return 0;
		out[0] = (struct ms_frame){ sym.name, NULL, 0 };
		return 1;
	}
	b = &s->bins[in->bin];
	if ((n = ms_framecache_get(b->frames, addr - in->bias, out, max)) > 0)
		return n;
	n = frames_of(s, pid, addr, in, out, max);
	if (n > 0 && n < max)
		ms_framecache_put(&b->frames, addr - in->bias, out, n);
	return n;
}

int ms_symbols_code_frames(struct ms_symbols *s, uint32_t pid, uint64_t ip, struct ms_frame *out, int max)
{
	struct ms_sym sym;
	int n = ms_symbols_frames(s, pid, ip, out, max);

	/* No source file: the binary (a lookup that changes nothing the frames did not). */
	if (n > 0 && !out[n - 1].file && !ms_symbols_resolve(s, pid, ip, false, &sym) && sym.dso)
		out[n - 1].file = sym.dso;
	return n;
}

int ms_symbols_code_symbol(struct ms_symbols *s, uint32_t pid, uint64_t ip, struct ms_code_sym *out)
{
	const struct inst *in = inst_at(s, pid, ip);
	uint64_t offset;
	struct bin *b;

	*out = (struct ms_code_sym){ 0 };
	if (!in)
		return 0;
	b = &s->bins[in->bin];
	out->dso = b->path;
	if (b->state == 1)               /* as ms_symbols_resolve() reads it */
		ms_bin_load_symbols(b);
	if (b->state == 2)
		out->name = ms_bin_name(s, b, ip - in->bias, &offset, &out->raw, &out->id);
	return 1;
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

MS_EXPORT void ms_symbols_free(struct ms_symbols *s)
{
	struct proc_bins *p;
	size_t i, pos = 0;

	if (!s)
		return;
	ms_symbols_unwind_log(s);
	while ((p = ms_u32map_next(&s->procs, &pos, NULL))) {
		ms_jit_proc_release(p);
		ms_unwind_proc_release(p);
		free(p->v);
		free(p);
	}
	ms_u32map_release(&s->procs);
	ms_pin_release(s);
	ms_callmemo_free(s->memo);
	ms_preopen_free(s->preopen);
	ms_symbols_demangled_release(s);
	for (i = 0; i < s->nr_bins; i++) {
		if (s->bins[i].dwfl)
			dwfl_end(s->bins[i].dwfl);
		free(s->bins[i].path);
		free(s->bins[i].segs);
		free(s->bins[i].cache);
		free(s->bins[i].sized);
		free(s->bins[i].sizeless);
		ms_framecache_free(s->bins[i].frames);
		ms_scopes_free(s->bins[i].scopes);
		ms_symgaps_free(s->bins[i].gaps);
		ms_bin_unwind_release(&s->bins[i]);
		ms_bin_elf_release(&s->bins[i]);
	}
	free(s->bins);
	free(s->bin_slots);
	free(s->times);
	free(s);
}
