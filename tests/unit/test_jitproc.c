/*
 * A process's JIT code through ms_symbols: its perf map names addresses
 * in the anonymous executable memory the events showed (and nowhere
 * else: a stale map never names a heap address); its jitdump, found by
 * the map of jit-PID.dump, names them by the instant set, and the
 * generation moves where a name changes; an exec forgets it all.
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

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "symbols/jit.h"

static uint32_t pid;                  /* no live process: its perf map is ours alone */
static char map_path[64], dir[] = "/tmp/ms-jitproc.XXXXXX", dump_path[128];

static void feed(struct ms_symbols *s, enum ms_event_kind kind, uint64_t t, uint64_t start, uint64_t end,
		 uint32_t prot, const char *name)
{
	struct ms_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.time = t;
	ev.pid = ev.tid = pid;
	if (kind == MS_EV_PROTECT) {
		ev.protect.start = start;
		ev.protect.end = end;
		ev.protect.prot = prot;
	} else if (kind == MS_EV_MAP)
		ev.map = (struct ms_event_map){ .start = start, .end = end, .vma_start = start, .vma_end = end,
						.prot = prot, .flags = MAP_PRIVATE, .name = name,
						.ino = name[0] == '/' && name[1] != '/' ? 12 : 0 };
	ms_symbols_track(s, &ev);
}

static const char *name_of(struct ms_symbols *s, uint64_t addr)
{
	struct ms_sym sym;

	return ms_symbols_resolve(s, pid, addr, true, &sym) ? NULL : sym.name;
}

static void perf_map_in_jit_memory_only(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	struct ms_frame fr[4];
	struct ms_sym sym;
	FILE *f = fopen(map_path, "w");

	(void)state;
	assert_non_null(f);
	fprintf(f, "10100 100 JS:*work n1.js:1:14\n30000 100 in the heap\n50000 100 JS:*later n1.js:9:1\n");
	fclose(f);
	feed(s, MS_EV_MAP, 1, 0x10000, 0x20000, PROT_READ | PROT_WRITE | PROT_EXEC, "//anon");
	feed(s, MS_EV_MAP, 2, 0x30000, 0x40000, PROT_READ | PROT_WRITE, "//anon");
	feed(s, MS_EV_MAP, 2, 0x50000, 0x60000, PROT_READ | PROT_WRITE, "//anon");
	assert_int_equal(ms_symbols_resolve(s, pid, 0x10150, true, &sym), 0);
	assert_string_equal(sym.name, "JS:*work n1.js:1:14");
	assert_string_equal(sym.dso, map_path);
	assert_int_equal(sym.offset, 0x50);
	assert_null(name_of(s, 0x30010));                      /* not executable: never the map's */
	assert_null(name_of(s, 0x50010));
	feed(s, MS_EV_PROTECT, 3, 0x50000, 0x60000, PROT_READ | PROT_EXEC, NULL);   /* made code later */
	assert_string_equal(name_of(s, 0x50010), "JS:*later n1.js:9:1");
	assert_int_equal(ms_symbols_frames(s, pid, 0x10150, fr, 4), 1);
	assert_string_equal(fr[0].name, "JS:*work n1.js:1:14");
	assert_null(fr[0].file);
	feed(s, MS_EV_EXEC, 4, 0, 0, 0, NULL);                 /* another program: its memory is gone */
	assert_null(name_of(s, 0x10150));
	ms_symbols_free(s);
	unlink(map_path);
}

static void write_dump(void)
{
	uint32_t h[6] = { 0x4A695444, 1, 40, 62, 0, pid }, pr[2] = { 0, 16 + 40 + 2 }, ids[2] = { pid, pid };
	uint64_t h2[2] = { 1, 0 }, t, f[4];
	FILE *out = fopen(dump_path, "w");
	int i;

	assert_non_null(out);
	fwrite(h, sizeof(h), 1, out);
	fwrite(h2, sizeof(h2), 1, out);
	for (i = 0; i < 2; i++) {             /* "a" at 100, "b" over it at 200 */
		t = 100 * (uint64_t)(i + 1);
		f[0] = f[1] = 0x10100;
		f[2] = 0x40;
		f[3] = (uint64_t)i;
		fwrite(pr, sizeof(pr), 1, out);
		fwrite(&t, 8, 1, out);
		fwrite(ids, sizeof(ids), 1, out);
		fwrite(f, sizeof(f), 1, out);
		fwrite(i ? "b" : "a", 2, 1, out);
	}
	fclose(out);
}

static void jitdump_by_the_instant_set(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint64_t gen;

	(void)state;
	write_dump();
	assert_int_equal(ms_symbols_next_change(s), UINT64_MAX);
	feed(s, MS_EV_MAP, 10, 0x10000, 0x20000, PROT_READ | PROT_EXEC, "//anon");
	feed(s, MS_EV_MAP, 50, 0x70000, 0x71000, PROT_READ | PROT_EXEC, dump_path);
	assert_int_equal(ms_symbols_next_change(s), 100);
	assert_null(name_of(s, 0x10110));                      /* nothing loaded yet */
	gen = ms_symbols_generation(s);
	ms_symbols_set_time(s, 99);
	assert_int_equal(ms_symbols_generation(s), gen);       /* nothing changed: memos stay */
	ms_symbols_set_time(s, 150);
	assert_true(ms_symbols_generation(s) != gen);
	assert_string_equal(name_of(s, 0x10110), "a");
	assert_int_equal(ms_symbols_next_change(s), 200);
	ms_symbols_set_time(s, 120);                            /* time never goes back */
	assert_string_equal(name_of(s, 0x10110), "a");
	ms_symbols_set_time(s, 200);
	assert_string_equal(name_of(s, 0x10110), "b");
	assert_int_equal(ms_symbols_next_change(s), UINT64_MAX);
	ms_symbols_free(s);
}

/* On another clock than the dump's (perf record's default), its last state names everything. */
static void jitdump_on_another_clock(void **state)
{
	struct ms_symbols *s = ms_symbols_new();

	(void)state;
	write_dump();
	ms_symbols_clock_monotonic(s, false);
	feed(s, MS_EV_MAP, 10, 0x10000, 0x20000, PROT_READ | PROT_EXEC, "//anon");
	feed(s, MS_EV_MAP, 50, 0x70000, 0x71000, PROT_READ | PROT_EXEC, dump_path);
	assert_int_equal(ms_symbols_next_change(s), UINT64_MAX);
	assert_string_equal(name_of(s, 0x10110), "b");
	ms_symbols_free(s);
}

static int setup(void **state)
{
	(void)state;
	pid = 4190000 + (uint32_t)getpid() % 4000;            /* above any pid_max default but the largest */
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%u.map", pid);
	if (!mkdtemp(dir))
		return -1;
	snprintf(dump_path, sizeof(dump_path), "%s/jit-%u.dump", dir, pid);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(map_path);
	unlink(dump_path);
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_map_in_jit_memory_only),
		cmocka_unit_test(jitdump_by_the_instant_set),
		cmocka_unit_test(jitdump_on_another_clock),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
