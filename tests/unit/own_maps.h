/*
 * For the symbol tests: this process's own executable file mappings fed to
 * an ms_symbols as map events, so that its addresses resolve as they are.
 */
#ifndef MS_TEST_OWN_MAPS_H
#define MS_TEST_OWN_MAPS_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

struct text { uint64_t start, end; };

/* An event of kind k in process pid (its main thread), all else zero. */
static inline struct ms_event task_ev(enum ms_event_kind k, uint32_t pid)
{
	struct ms_event e;

	memset(&e, 0, sizeof(e));
	e.kind = k;
	e.pid = e.tid = pid;
	return e;
}

/* Feeds s the executable file mappings of this process; their extents in *t (up to max). */
static size_t map_own_code(struct ms_symbols *s, struct text *t, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], perms[8], path[4096];
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	struct ms_event ev;
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &start, &end, perms, &pgoff, &maj, &min,
			   &ino, path) < 7 || path[0] != '/' || perms[2] != 'x')
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.kind = MS_EV_MAP;
		ev.pid = ev.tid = (uint32_t)getpid();
		ev.map = (struct ms_event_map){ .start = start, .end = end, .vma_start = start, .vma_end = end,
						.pgoff = pgoff, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
						.maj = maj, .min = min, .ino = ino, .name = path };
		ms_symbols_track(s, &ev);
		if (n < max)
			t[n++] = (struct text){ start, end };
	}
	fclose(f);
	return n;
}

/*
 * Hands s the build-ids of this process's executable files, as a
 * recording does (mapscope record writes each binary's): a pin reads a
 * binary's symbols only once its build-id is known.
 */
static inline void expect_own_build_ids(struct ms_symbols *s)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], perms[8], path[4096];
	unsigned char id[64];
	int n;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %4095s", perms, path) == 2 && path[0] == '/' &&
		    perms[2] == 'x' && (n = ms_elf_build_id(path, id, sizeof(id))) > 0)
			ms_symbols_expect_build_id(s, path, id, (size_t)n);
	fclose(f);
}

#endif
