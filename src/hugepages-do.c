/*
 * What to do about an advised region, said so that it can be done: the
 * lasting fix for the next start (the glibc tunable for malloc's memory, a
 * JVM's option, or madvise at the allocation site), then what can be done
 * to the running process now (--apply), or without changing the program
 * (mapscope run with the saved advice).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugepages-do.h"
#include "symbols/libcver.h"

/* glibc's allocator functions: a region made under one of them is malloc's. */
static const char *const malloc_fns[] = {
	"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign", "aligned_alloc", "valloc",
	"pvalloc", "sysmalloc", "_int_malloc", "_int_realloc", "_int_memalign", "_mid_memalign", "new_heap",
	"alloc_new_heap", "_int_new_arena", "arena_get2", "tcache_init", "__libc_malloc", "__libc_calloc",
	"__libc_realloc", "__libc_memalign", "mremap_chunk", "sysmalloc_mmap", "sysmalloc_mmap_fallback",
	"grow_heap",
};

/* Whether the call chain ("f+0x1 <- g.constprop.0+0x2 <- ...") passes through glibc's malloc. */
static bool malloc_made(const char *chain)
{
	const char *p = chain;
	size_t i, n;

	while (p && *p) {
		n = strcspn(p, "+ (<.");
		for (i = 0; i < sizeof(malloc_fns) / sizeof(malloc_fns[0]); i++)
			if (strlen(malloc_fns[i]) == n && !strncmp(p, malloc_fns[i], n))
				return true;
		p = strstr(p, " <- ");
		p = p ? p + 4 : NULL;
	}
	return false;
}

/* A binary process pid maps whose path ends in one of suffixes[], or NULL. */
static const char *mapped(const struct ms_aspace *as, uint32_t pid, const char *const *suffixes)
{
	size_t i, n = ms_aspace_nr_regions(as), l, k;
	const struct ms_region *r;

	for (i = 0; i < n; i++) {
		r = ms_aspace_region(as, i);
		if (!r || r->pid != pid || r->kind != MS_KIND_FILE)
			continue;
		l = strlen(r->name);
		for (k = 0; suffixes[k]; k++)
			if (l >= strlen(suffixes[k]) && !strcmp(r->name + l - strlen(suffixes[k]), suffixes[k]))
				return r->name;
	}
	return NULL;
}

/* glibc's minor version (2.NN) of the library at path, read once for a run of the same path: -1 if unknown. */
static int glibc_minor(const char *path)
{
	static char last[4096];
	static int last_minor = -1;

	if (strcmp(path, last)) {
		snprintf(last, sizeof(last), "%s", path);
		last_minor = ms_elf_glibc_minor(path);
	}
	return last_minor;
}

/* The glibc tunable, with what is known of the process's glibc. */
static void tunable(const struct ms_aspace *as, uint32_t pid, char *buf, size_t len)
{
	static const char *const libc[] = { "/libc.so.6", NULL };
	const char *path = mapped(as, pid, libc);
	int minor = path ? glibc_minor(path) : -1;

	if (minor >= 35)
		snprintf(buf, len, "start it with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (its glibc is 2.%d: malloc then "
			 "madvises its heap and arenas)", minor);
	else if (minor >= 0)
		snprintf(buf, len, "malloc's memory, but its glibc is 2.%d and glibc.malloc.hugetlb needs 2.35+: "
			 "madvise(MADV_HUGEPAGE) what malloc returns, where it is called", minor);
	else
		snprintf(buf, len, "start it with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35+; its glibc "
			 "could not be read here)");
}

/*
 * A malloc arena of a thread's (glibc's new_heap): HEAP_MAX_SIZE, 64 MiB
 * on 64-bit, reserved at a multiple of its size. A program seldom maps
 * exactly that itself; a region with no call chain that looks so is taken
 * for one.
 */
static bool arena_like(const struct ms_region *r)
{
	const uint64_t heap_max = 64ULL << 20;

	return r->kind == MS_KIND_ANON && r->start % heap_max == 0 && r->end - r->start == heap_max;
}

/* Whether r is glibc malloc's memory: the heap, or made under malloc (or, with no chain, an arena's shape). */
static bool mallocs(const struct ms_region *r, const char *chain)
{
	return r->kind == MS_KIND_HEAP || (chain ? malloc_made(chain) : arena_like(r));
}

const char *hugepages_alloc(const struct ms_region *r, struct ms_session *s)
{
	const char *site = ms_session_alloc_site(s, r), *chain = ms_session_alloc_chain(s, r);

	if (site || !mallocs(r, chain))
		return site;
	return r->kind == MS_KIND_HEAP ? "glibc malloc (brk heap)" : chain ? "glibc malloc (mmap)" :
	       "glibc malloc (an arena, by its shape)";
}

enum hugepages_how hugepages_do(const struct ms_huge_advice *a, struct ms_session *s, char *buf, size_t len)
{
	static const char *const jvm[] = { "/libjvm.so", NULL };
	const struct ms_region *r = a->region;
	const struct ms_aspace *as = ms_session_aspace(s);
	const char *site, *chain;
	enum hugepages_how how;
	char fix[512];
	size_t at;

	if (!a->advised) {            /* before the site is named: most rows are not advised, and print no site */
		snprintf(buf, len, "none");
		return HOW_NONE;
	}
	site = ms_session_alloc_site(s, r);
	chain = ms_session_alloc_chain(s, r);
	if (mallocs(r, chain)) {
		how = HOW_TUNABLE;
		tunable(as, r->pid, fix, sizeof(fix));
		if (site && strlen(fix) + strlen(site) + 64 < sizeof(fix))
			snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix), ", or madvise(p, len, MADV_HUGEPAGE) "
				 "on what malloc returns to %s", site);
	} else if (r->kind == MS_KIND_ANON && mapped(as, r->pid, jvm)) {
		how = HOW_JVM;
		snprintf(fix, sizeof(fix), "start java with -XX:+UseTransparentHugePages (the JVM's heap and its "
			 "other memory are madvised as they are made)");
	} else if (site) {
		how = HOW_SITE;
		snprintf(fix, sizeof(fix), "madvise(p, len, MADV_HUGEPAGE) right after the mmap in %s", site);
	} else {
		how = HOW_UNNAMED;
		snprintf(fix, sizeof(fix), "madvise(p, len, MADV_HUGEPAGE) right after the mmap that makes this "
			 "%" PRIu64 " MiB region (mapscope record, without --no-alloc-stacks, names where "
			 "that is)",
			 (r->end - r->start) >> 20);
	}
	if (a->end)
		at = (size_t)snprintf(buf, len, "now: mapscope hugepages --apply -p %u; lasting: %s", r->pid, fix);
	else
		at = (size_t)snprintf(buf, len, "%s", fix);
	if (!r->alive && at < len)
		snprintf(buf + at, len - at, "; or, the program unchanged: mapscope hugepages --save advice.json, then "
			 "mapscope run --hugepages advice.json -- CMD");
	return how;
}

const char *hugepages_how_name(enum hugepages_how how)
{
	static const char *const n[] = { NULL, "glibc-tunable", "jvm-option", "madvise-at-site", "madvise-where-made" };

	return n[how];
}

const char *hugepages_how_short(enum hugepages_how how)
{
	static const char *const n[] = { "-", "glibc.malloc.hugetlb=1", "-XX:+UseTransparentHugePages",
					 "madvise at its mmap", "madvise where made" };

	return n[how];
}
