/*
 * Allocation sites: the code that made a region, named from the call chain
 * of the syscall that made it. The innermost frames are the mechanism (the
 * mmap or brk wrapper, glibc malloc's internals, python's obmalloc, the
 * loader): the site is the first frame past them, printed as
 * "function (file:line) ← caller ← caller", inlined calls expanded.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <mapscope/symbols.h>

#include "symbols/callmemo.h"
#include "symbols/internal.h"
#include "symbols/pin.h"
#include "util/log.h"

#define SITE_FRAMES 3            /* the site and two callers */
#define MAX_FRAMES 128           /* inlined ones included */

/* Binaries whose every frame is the mechanism: the C library, the loader, allocators. */
static bool runtime_dso(const char *dso)
{
	static const char *const libs[] = {
		"libc.so", "ld-linux", "libpthread", "libjemalloc", "libtcmalloc", "libmimalloc",
	};
	const char *base = dso ? strrchr(dso, '/') : NULL;
	size_t i;

	base = base ? base + 1 : dso;
	for (i = 0; base && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return true;
	return false;
}

/*
 * Allocator functions wherever they are linked: glibc's malloc and
 * syscall wrappers (a static binary), python's obmalloc, PyMem and the
 * object allocators over them, C++ operator new, jemalloc and tcmalloc.
 * Exact names, and prefixes distinctive enough not to catch a user's; C++
 * names as demangled ("operator new", "tcmalloc::...").
 */
static bool allocator_fn(const char *name)
{
	static const char *const exact[] = {
		"malloc", "calloc", "realloc", "memalign", "aligned_alloc", "posix_memalign", "valloc",
		"pvalloc", "sysmalloc", "sysmalloc_mmap", "new_heap", "alloc_new_heap", "arena_get2",
		"tcache_init", "ptmalloc_init", "mmap", "mmap64", "__mmap", "__mmap64", "mremap", "__mremap",
		"brk", "__brk", "sbrk", "__sbrk", "shmat", "__glibc_morecore", "__default_morecore", "__minimal_malloc",
		"__minimal_calloc", "__rtld_malloc", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
		"_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc", "new_arena",
		"allocate_from_new_pool", "gc_alloc", "_PyObject_GC_New", "_PyObject_GC_NewVar",
		"_PyObject_GC_Link", "_PyObject_GC_Resize", "_PyObject_New", "_PyObject_NewVar",
		"PyType_GenericAlloc", "_PyType_AllocNoTrack", "operator new", "operator new[]",
	};
	static const char *const prefix[] = {
		"__libc_", "_int_", "sysmalloc", "_mid_memalign", "PyMem_", "_PyMem_", "pymalloc_",
		"_PyObject_Arena", "je_", "tc_", "tcmalloc::", "mi_malloc", "mi_heap_",
	};
	/* A clone's or a versioned symbol's suffix is no part of the name: tcache_init.part.0, x@GLIBC_2.2.5. */
	size_t len = strcspn(name, ".@"), i;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == len && !strncmp(name, exact[i], len))
			return true;
	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

struct cs_frame {
	struct ms_frame f;
	const char *dso;
	uint64_t addr, vaddr;
	bool found;                  /* a binary holds addr */
};

/*
 * The chain's frames, inlined calls expanded, innermost first. The
 * innermost address is where the syscall was made; every other one is a
 * return address, looked up one byte back so that a call at a function's
 * end is not put in the next function (all of them where returns: a
 * chain's tail).
 */
static int expand(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
		  struct cs_frame *out, int max, int returns)
{
	struct ms_frame fr[16];
	struct ms_sym sym;
	uint64_t addr;
	uint32_t i;
	int n = 0, k, m, first = !returns;

	for (i = 0; i < len && n < max; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		addr = first ? chain[i] : chain[i] - 1;
		first = 0;
		m = ms_symbols_frames(s, pid, addr, fr, 16);
		if (ms_symbols_resolve(s, pid, addr, false, &sym))
			memset(&sym, 0, sizeof(sym));
		for (k = 0; k < (m ? m : 1) && n < max; k++, n++) {
			out[n].f = m ? fr[k] : (struct ms_frame){ 0 };
			out[n].dso = sym.dso;
			out[n].addr = chain[i];
			out[n].vaddr = sym.vaddr;
			out[n].found = sym.dso != NULL;
		}
	}
	return n;
}

/* The first frame past the mechanism: a binary's not the runtime's, in no allocator function; or -1. */
static int past_mechanism(const struct cs_frame *f, int n)
{
	int i;

	/* A binary without symbols (a stripped libstdc++) still says where: binary+offset. */
	for (i = 0; i < n; i++)
		if (f[i].found && !runtime_dso(f[i].dso) && !(f[i].f.name && allocator_fn(f[i].f.name)))
			return i;
	return -1;
}

/* The site's first frame: past the mechanism; where every frame is mechanism, past the allocator's functions. */
static int site_frame(const struct cs_frame *f, int n)
{
	int i = past_mechanism(f, n);

	if (i >= 0)
		return i;
	/* The loader's own maps, libc's own mallocs: name the code there that asked. */
	for (i = 0; i < n; i++)
		if (f[i].f.name && !allocator_fn(f[i].f.name))
			return i;
	return -1;
}

/* "name (file:line)", "name", "binary+0x1f" or "0x7f..": at most len bytes. */
static size_t frame_text(const struct cs_frame *f, char *buf, size_t len)
{
	const char *file = f->f.file ? strrchr(f->f.file, '/') : NULL, *bin, *name = f->f.name;

	file = file ? file + 1 : f->f.file;
	if (name)
		return file && f->f.line > 0 ? (size_t)snprintf(buf, len, "%s (%s:%d)", name, file, f->f.line)
					     : (size_t)snprintf(buf, len, "%s", name);
	if (f->found) {
		bin = strrchr(f->dso, '/');
		return (size_t)snprintf(buf, len, "%s+0x%llx", bin ? bin + 1 : f->dso, (unsigned long long)f->vaddr);
	}
	return (size_t)snprintf(buf, len, "0x%llx", (unsigned long long)f->addr);
}

/*
 * The site's frames without the DWARF of the binaries site_frame() passes
 * over whatever they hold: a runtime binary's entry stands as one frame
 * (libc's debug file is inflated whole for its first file:line: 20% of a
 * report of chromium's processes, for frames that are never printed). Its
 * count of frames, with *first the site's; -1 where site_frame() would
 * look at their names (no other frame is the site), or where the frames
 * in full could reach max before the site's three: expand() in full then.
 */
static int expand_lazy(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
		       struct cs_frame *out, int max, int *first)
{
	struct ms_sym sym;
	uint32_t i;
	int n = 0, m, passed = 0, at = 0;

	*first = -1;
	for (i = 0; i < len && n < max && (*first < 0 || n < *first + SITE_FRAMES); i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		if (*first < 0 && !ms_symbols_resolve(s, pid, at ? chain[i] - 1 : chain[i], false, &sym) &&
		    sym.dso && runtime_dso(sym.dso)) {
			out[n++] = (struct cs_frame){ .dso = sym.dso, .found = true };
			passed++;
			at = 1;
			continue;
		}
		m = expand(s, pid, chain + i, 1, out + n, max - n, at);
		at = 1;
		if (*first < 0 && (*first = past_mechanism(out + n, m)) >= 0)
			*first += n;
		n += m;
	}
	/* A runtime entry expands to at most 16 frames (expand()'s fr): the site is as far as that puts it. */
	if (*first < 0 || *first + 15 * passed + SITE_FRAMES > max)
		return -1;
	return n;
}

/*
 * The site where no frame is past the mechanism (expand_lazy() found
 * none: the loader's own maps): the first named frame not an allocator's
 * and its callers, as site_frame() finds them in expand()'s frames, with
 * the chain expanded only as far as they are (ld.so's deeper frames,
 * dl_main and _dl_start, each walked through DWARF, are never printed).
 */
static int expand_fallback(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
			   struct cs_frame *out, int max, int *first)
{
	uint32_t i;
	int n = 0, m, k, at = 0;

	*first = -1;
	for (i = 0; i < len && n < max && (*first < 0 || n < *first + SITE_FRAMES); i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		m = expand(s, pid, chain + i, 1, out + n, max - n, at);
		at = 1;
		for (k = n; *first < 0 && k < n + m; k++)
			if (out[k].f.name && !allocator_fn(out[k].f.name))
				*first = k;
		n += m;
	}
	return n;
}

static void site_text(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
		      char *site, size_t site_len)
{
	struct cs_frame f[MAX_FRAMES];
	size_t at = 0;
	int first, n = expand_lazy(s, pid, chain, len, f, MAX_FRAMES, &first), i;

	if (n < 0 && first < 0)
		n = expand_fallback(s, pid, chain, len, f, MAX_FRAMES, &first);
	else if (n < 0) {
		n = expand(s, pid, chain, len, f, MAX_FRAMES, 0);
		first = site_frame(f, n);
	}
	site[0] = '\0';
	for (i = first; first >= 0 && i < n && i < first + SITE_FRAMES && at < site_len; i++) {
		if (i > first)
			at += (size_t)snprintf(site + at, site_len - at, " \u2190 ");
		if (at < site_len)
			at += frame_text(&f[i], site + at, site_len - at);
	}
}

/* "f+0x1 <- g+0x2 <- ..." of the chain's first twelve code addresses. */
static void chain_text(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, char *text,
		       size_t text_len)
{
	char frame[256];
	struct ms_sym sym;
	size_t at = 0;
	uint32_t i, shown = 0;
	int err;

	text[0] = '\0';
	for (i = 0; i < len && shown < 12; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		err = ms_symbols_resolve(s, pid, chain[i], false, &sym);
		ms_sym_format(&sym, err, chain[i], frame, sizeof(frame));
		if (at < text_len)
			at += (size_t)snprintf(text + at, text_len - at, "%s%s", shown++ ? " <- " : "", frame);
	}
}

/*
 * A memo's key: the part (site or text) and its buffer's length, then
 * what naming the chain depends on (ms_pin_key(): its binaries and the
 * addresses in them). Chains too long for it are named each time.
 */
#define KEY_WORDS (2 + 3 * MAX_FRAMES)

enum part { PART_SITE, PART_TEXT };

/* part's text into buf from the memo; false where it holds none (or there is no key). */
static bool remembered(struct ms_symbols *s, uint64_t *key, int n, enum part part, char *buf, size_t len)
{
	const char *kept;

	if (n < 0)
		return false;
	key[0] = (uint64_t)part << 62 | len;
	if (!(kept = ms_callmemo_get(s->memo, key, (size_t)n + 1)))
		return false;
	memcpy(buf, kept, strlen(kept) + 1);   /* named alike into a buffer as long: it fits */
	return true;
}

void ms_call_site_parts(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, char *site,
			size_t site_len, char *text, size_t text_len)
{
	uint64_t key[KEY_WORDS];
	int n = ms_pin_key(s, pid, chain, len, key + 1, KEY_WORDS - 1);
	bool known_text = text && remembered(s, key, n, PART_TEXT, text, text_len);
	bool known_site = site && remembered(s, key, n, PART_SITE, site, site_len);

	/* The text first, as before: naming reads binaries' symbols (and warns) in this order. */
	if (text && !known_text)
		chain_text(s, pid, chain, len, text, text_len);
	if (site && !known_site)
		site_text(s, pid, chain, len, site, site_len);
	/* A chain named at once may have read the symbols its key waited for. */
	if (n < 0 && (n = ms_pin_key(s, pid, chain, len, key + 1, KEY_WORDS - 1)) < 0)
		return;
	if (text && !known_text) {
		key[0] = (uint64_t)PART_TEXT << 62 | text_len;
		ms_callmemo_put(s->memo, key, (size_t)n + 1, text);
	}
	if (site && !known_site) {
		key[0] = (uint64_t)PART_SITE << 62 | site_len;
		ms_callmemo_put(s->memo, key, (size_t)n + 1, site);
	}
}

MS_EXPORT void ms_symbols_call_site(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
				    char *site, size_t site_len, char *text, size_t text_len)
{
	ms_call_site_parts(s, pid, chain, len, site, site_len, text, text_len);
}
