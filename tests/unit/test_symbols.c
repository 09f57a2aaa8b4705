/*
 * Symbols: following a process's binaries through its map, fork and exec
 * events, and naming addresses of this very test (its functions are the
 * ground truth: their addresses are known here).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "own_maps.h"
#include "symbols/generation.h"
#include "symbols/internal.h"

int __attribute__((noinline)) marker_function(int x);

int __attribute__((noinline)) marker_function(int x)
{
	return x * 3 + 1;
}

static void names_own_function_and_line(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint64_t addr = (uint64_t)(uintptr_t)marker_function;
	uint32_t pid = (uint32_t)getpid();
	struct text t[32];
	struct ms_sym sym;

	assert_non_null(s);
	assert_int_equal(ms_symbols_resolve(s, pid, addr, false, &sym), -ENOENT);   /* nothing mapped yet */
	assert_true(map_own_code(s, t, 32) >= 1);
	assert_int_equal(ms_symbols_resolve(s, pid, addr + 2, true, &sym), 0);
	assert_string_equal(sym.name, "marker_function");
	assert_int_equal(sym.offset, 2);
	assert_non_null(strstr(sym.dso, "test_symbols"));
	assert_non_null(sym.file);
	assert_non_null(strstr(sym.file, "test_symbols.c"));
	assert_true(sym.line > 0);
	assert_int_equal(ms_symbols_resolve(s, pid + 1, addr, false, &sym), -ENOENT);   /* another process */
	ms_symbols_free(s);
}

static void fork_copies_exec_clears(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint64_t addr = (uint64_t)(uintptr_t)marker_function, gen;
	uint32_t pid = (uint32_t)getpid(), child = pid + 1000;
	struct ms_event e;
	struct text t[32];
	struct ms_sym sym;

	map_own_code(s, t, 32);
	gen = ms_symbols_generation(s);
	e = task_ev(MS_EV_FORK, pid);
	e.fork.child_pid = e.fork.child_tid = child;
	ms_symbols_track(s, &e);
	assert_true(ms_symbols_generation(s) > gen);
	assert_int_equal(ms_symbols_resolve(s, child, addr, false, &sym), 0);
	assert_string_equal(sym.name, "marker_function");
	gen = ms_symbols_generation(s);
	e = task_ev(MS_EV_EXEC, child);
	ms_symbols_track(s, &e);
	assert_true(ms_symbols_generation(s) > gen);
	assert_int_equal(ms_symbols_resolve(s, child, addr, false, &sym), -ENOENT);
	assert_int_equal(ms_symbols_resolve(s, pid, addr, false, &sym), 0);   /* the parent keeps its own */
	gen = ms_symbols_generation(s);
	e = task_ev(MS_EV_SAMPLE, pid);
	ms_symbols_track(s, &e);
	assert_int_equal(ms_symbols_generation(s), gen);                      /* samples change nothing */
	ms_symbols_free(s);
}

/*
 * A process's generation moves with what changes its own names only: a
 * map in another process leaves it (a memo of its names stays good), its
 * own map, exec and the fork that makes it move it.
 */
static void generation_per_process(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint64_t mine, other, g;
	uint32_t pid = (uint32_t)getpid(), child = pid + 1000, stranger = pid + 2000;
	struct ms_event e;
	struct text t[32];

	(void)state;
	map_own_code(s, t, 32);
	e = task_ev(MS_EV_FORK, pid);
	e.fork.child_pid = e.fork.child_tid = stranger;
	ms_symbols_track(s, &e);
	mine = ms_symbols_proc_generation(s, pid);
	other = ms_symbols_proc_generation(s, stranger);
	assert_true(other > mine);                                   /* the fork made it */
	e = task_ev(MS_EV_MAP, stranger);                            /* the stranger maps a file */
	e.map = (struct ms_event_map){ .start = 0x10000, .end = 0x11000, .prot = PROT_READ, .name = "/nonexistent" };
	ms_symbols_track(s, &e);
	assert_true(ms_symbols_generation(s) > other);               /* the symbols' own moves */
	assert_int_equal(ms_symbols_proc_generation(s, pid), mine);  /* ours does not */
	assert_true(ms_symbols_proc_generation(s, stranger) > other);
	g = ms_symbols_proc_generation(s, stranger);
	e = task_ev(MS_EV_FORK, pid);                                /* we fork: the child's moves */
	e.fork.child_pid = e.fork.child_tid = child;
	ms_symbols_track(s, &e);
	assert_int_equal(ms_symbols_proc_generation(s, pid), mine);
	assert_int_equal(ms_symbols_proc_generation(s, stranger), g);
	assert_true(ms_symbols_proc_generation(s, child) > g);
	g = ms_symbols_proc_generation(s, child);
	e = task_ev(MS_EV_EXEC, child);
	ms_symbols_track(s, &e);
	assert_true(ms_symbols_proc_generation(s, child) > g);
	e = task_ev(MS_EV_MAP, pid);                                 /* our own map moves ours */
	e.map = (struct ms_event_map){ .start = 0x10000, .end = 0x11000, .prot = PROT_READ, .name = "[anon]" };
	ms_symbols_track(s, &e);
	assert_true(ms_symbols_proc_generation(s, pid) > mine);
	mine = ms_symbols_proc_generation(s, pid);
	e = task_ev(MS_EV_PROTECT, pid);                             /* and memory made executable */
	e.protect.start = 0x10000;
	e.protect.end = 0x11000;
	e.protect.prot = PROT_READ | PROT_EXEC;
	ms_symbols_track(s, &e);
	assert_true(ms_symbols_proc_generation(s, pid) > mine);
	ms_symbols_free(s);
}

static void format(void **state)
{
	char buf[64];
	struct ms_sym sym = { .dso = "/usr/lib/libx.so", .vaddr = 0x1234 };

	(void)state;
	ms_sym_format(&sym, 0, 0x7f00, buf, sizeof(buf));
	assert_string_equal(buf, "libx.so+0x1234");
	sym.name = "f";
	sym.offset = 0x1f;
	ms_sym_format(&sym, 0, 0x7f00, buf, sizeof(buf));
	assert_string_equal(buf, "f+0x1f");
	ms_sym_format(&sym, -ENOENT, 0x7f00, buf, sizeof(buf));
	assert_string_equal(buf, "0x7f00");
}

static void feed_map(struct ms_symbols *s, const char *path, uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot)
{
	struct ms_event e = task_ev(MS_EV_MAP, 4242);

	e.map = (struct ms_event_map){ .start = start, .end = start + len, .vma_start = start, .vma_end = start + len,
				       .pgoff = pgoff, .prot = prot, .flags = MAP_PRIVATE, .maj = 8, .min = 1, .ino = 99,
				       .name = path };
	ms_symbols_track(s, &e);
}

/*
 * A segment that starts inside the page where the one before it ends
 * (this test's own RW segment, as the linker lays it out, and libdl's,
 * libpython's): the maps of both segments start at that page's offset.
 * Each belongs to the segment that puts the binary where its first map
 * did: one instance, at the loader's base, never a second a page off.
 */
static void segments_sharing_a_page(void **state)
{
	const uint64_t base = 0x500000000000ULL;
	struct ms_symbols *s = ms_symbols_new();
	struct proc_bins *p;
	const struct seg *g;
	char self[4096] = "";
	size_t k;
	struct bin *b;

	(void)state;
	assert_true(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
	feed_map(s, self, base, 0x1000, 0, PROT_READ);
	p = ms_symbols_proc(s, 4242, false);
	assert_non_null(p);
	assert_int_equal(p->n, 1);
	b = &s->bins[p->v[0].bin];
	for (k = 1; k < b->nr_segs; k++)
		if ((b->segs[k].offset & ~4095ULL) < b->segs[k - 1].offset + b->segs[k - 1].filesz)
			break;
	if (k == b->nr_segs) {
		ms_symbols_free(s);
		skip();                          /* laid out with no shared page */
	}
	g = &b->segs[k];
	/* The earlier segment's map, then the later one's, both at the shared page's offset. */
	feed_map(s, self, base + ((g - 1)->vaddr & ~4095ULL) + ((g->offset & ~4095ULL) - ((g - 1)->offset & ~4095ULL)),
		 0x1000, g->offset & ~4095ULL, PROT_READ);
	feed_map(s, self, base + (g->vaddr & ~4095ULL), 0x1000, g->offset & ~4095ULL, PROT_READ | PROT_WRITE);
	assert_int_equal(p->n, 1);
	assert_int_equal(p->v[0].bias, base);
	ms_symbols_free(s);
}

/*
 * 300 files mapped, each three times (their slots grown from 64 to 1024
 * on the way): one bin each, its path its own, in the order first seen;
 * a path that differs by a byte, or only by " (deleted)", is its own
 * file or the same one, as before.
 */
static void bins_found_by_path(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	char path[64];
	size_t i, k;

	(void)state;
	assert_non_null(s);
	for (k = 0; k < 3; k++)
		for (i = 0; i < 300; i++) {
			snprintf(path, sizeof(path), "/nonexistent/mapscope-test/lib%zu.so", i);
			feed_map(s, path, 0x10000000ULL * (i + 1), 0x1000, 0, PROT_READ);
		}
	assert_int_equal(s->nr_bins, 300);
	for (i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "/nonexistent/mapscope-test/lib%zu.so", i);
		assert_string_equal(s->bins[i].path, path);
	}
	feed_map(s, "/nonexistent/mapscope-test/lib7.so (deleted)", 0x1000, 0x1000, 0, PROT_READ);
	feed_map(s, "/nonexistent/mapscope-test/lib7.sp", 0x1000, 0x1000, 0, PROT_READ);
	assert_int_equal(s->nr_bins, 301);
	assert_string_equal(s->bins[300].path, "/nonexistent/mapscope-test/lib7.sp");
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_own_function_and_line),
		cmocka_unit_test(fork_copies_exec_clears),
		cmocka_unit_test(generation_per_process),
		cmocka_unit_test(format),
		cmocka_unit_test(segments_sharing_a_page),
		cmocka_unit_test(bins_found_by_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
