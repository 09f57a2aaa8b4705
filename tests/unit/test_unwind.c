/*
 * Unwinding: this test's own stack, copied with its registers as record
 * --call-graph dwarf copies a sampled thread's, unwinds through the
 * functions that called the copy (known here by their addresses). The
 * walk by simple CFI rows gives libdwfl's frames exactly, stack by stack:
 * on copies of this process's stack taken inside the C library's qsort
 * and twalk and in a signal handler (cut at many lengths), on the stacks of recordings of a
 * workload and of python3 that this test makes (where it can record), and
 * on recordings named in MAPSCOPE_UNWIND_FILES (colon-separated).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <search.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/event.h>
#include <mapscope/session.h>
#include <mapscope/symbols.h>

#include "own_maps.h"
#include "record_workload.h"
#include "symbols/internal.h"

/* perf's x86_64 registers AX..IP (bits 0-8) and R8..R15 (bits 16-23): the 17 DWARF needs, in that order. */
#define MASK (0x1ffULL | (0xffULL << 16))

struct copy {
	uint64_t regs[17];
	unsigned char stack[16384];
	size_t len;
};

/*
 * The stack is copied as the kernel copies a sample's user stack: raw
 * bytes, redzones and all. Under ASan that read must not be checked (its
 * memcpy interceptor would call the redzones an underflow), so the copy is
 * a plain loop in a function ASan leaves alone.
 */
static void __attribute__((noinline, no_sanitize_address)) copy_raw(unsigned char *to, uintptr_t from, size_t len)
{
	const volatile unsigned char *p = (const volatile unsigned char *)from;
	size_t i;

	for (i = 0; i < len; i++)
		to[i] = p[i];
}

/* Registers and stack as they are at one instruction of this function. */
static void __attribute__((noinline)) take_copy(struct copy *c)
{
#if defined(__x86_64__)
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
	memset(c->regs, 0, sizeof(c->regs));
	c->regs[6] = bp;
	c->regs[7] = sp;
	c->regs[8] = ip;
	c->len = 4096;                       /* the frames of this test, well inside the stack */
	copy_raw(c->stack, (uintptr_t)sp, c->len);
#else
	(void)c;
#endif
}

void __attribute__((noinline)) unwind_caller(struct copy *c);

void __attribute__((noinline)) unwind_caller(struct copy *c)
{
	take_copy(c);
	__asm__ volatile("" ::: "memory");   /* not a tail call: this frame stays */
}

static void free_nothing(void *p)
{
	(void)p;
}

static void unwinds_own_stack(void **state)
{
#if defined(__x86_64__)
	struct ms_symbols *s = ms_symbols_new();
	uint32_t pid = (uint32_t)getpid();
	struct copy *c = calloc(1, sizeof(*c));
	uint64_t pcs[16];
	struct text t[32];
	struct ms_sym sym;
	int n, i, found = -1;

	assert_non_null(c);
	map_own_code(s, t, 32);
	unwind_caller(c);
	n = ms_symbols_unwind(s, pid, c->regs, MASK, c->stack, c->len, pcs, 16);
	assert_true(n >= 2);
	assert_int_equal(ms_symbols_resolve(s, pid, pcs[0], false, &sym), 0);
	assert_string_equal(sym.name, "take_copy");
	for (i = 1; i < n && found < 0; i++)
		if (!ms_symbols_resolve(s, pid, pcs[i], false, &sym) && sym.name && !strcmp(sym.name, "unwind_caller"))
			found = i;
	assert_int_equal(found, 1);
	free(c);
	ms_symbols_free(s);
#else
	skip();
#endif
}

/* How many of this process's maps map path from its start: the loader's first segment, and each whole file libelf maps. */
static int maps_from_start(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], name[4096];
	unsigned long long pgoff;
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*x-%*x %*7s %llx %*x:%*x %*u %4095s", &pgoff, name) == 2 && !pgoff &&
		    !strcmp(name, path))
			n++;
	fclose(f);
	return n;
}

/*
 * A binary's symbols and every process's unwinder read one mapping of its
 * file: each mapped it whole for itself, and the pages both touch counted
 * twice in the peak memory (8 MB of a chromium recording's).
 */
static void symbols_and_unwinding_map_a_binary_once(void **state)
{
#if defined(__x86_64__)
	struct ms_symbols *s = ms_symbols_new();
	struct copy *c = calloc(1, sizeof(*c));
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct ms_sym sym;
	uint64_t pcs[4];
	struct text t[32];
	int before;

	assert_non_null(c);
	assert_true(len > 0);
	exe[len] = '\0';
	before = maps_from_start(exe);
	map_own_code(s, t, 32);
	unwind_caller(c);
	assert_true(ms_symbols_unwind(s, (uint32_t)getpid(), c->regs, MASK, c->stack, c->len, pcs, 4) >= 2);
	assert_int_equal(ms_symbols_resolve(s, (uint32_t)getpid(), pcs[0], false, &sym), 0);
	assert_string_equal(sym.name, "take_copy");
	assert_int_equal(maps_from_start(exe), before + 1);
	ms_symbols_free(s);
	assert_int_equal(maps_from_start(exe), before);
	free(c);
#else
	skip();
#endif
}

static void refuses_what_it_cannot_unwind(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint64_t regs[17] = { 0 }, pcs[4];
	unsigned char stack[64] = { 0 };
	struct text t[32];

	assert_int_equal(ms_symbols_unwind(s, 1, regs, MASK, stack, sizeof(stack), pcs, 4), -ENOENT);
	map_own_code(s, t, 32);
	assert_int_equal(ms_symbols_unwind(s, (uint32_t)getpid(), NULL, MASK, stack, sizeof(stack), pcs, 4), -ENOENT);
	/* Without IP (bit 8) the registers are not enough to start from. */
	assert_int_equal(ms_symbols_unwind(s, (uint32_t)getpid(), regs, MASK & ~(1ULL << 8), stack, sizeof(stack),
					   pcs, 4), -EINVAL);
	ms_symbols_free(s);
}

/* A stack's frames by rows and by libdwfl: how many stacks and frames matched, how many did not. */
struct tally {
	uint64_t stacks, frames, differ;
};

static void compare_stack(struct ms_symbols *s, uint32_t pid, const uint64_t *regs, uint64_t mask,
			  const unsigned char *stack, size_t len, struct tally *t)
{
	uint64_t rows[64], dwfl[64];
	int nr, nd, i;

	ms_symbols_unwind_dwfl_only(s, false);
	nr = ms_symbols_unwind(s, pid, regs, mask, stack, len, rows, 64);
	ms_symbols_unwind_dwfl_only(s, true);
	nd = ms_symbols_unwind(s, pid, regs, mask, stack, len, dwfl, 64);
	ms_symbols_unwind_dwfl_only(s, false);
	t->stacks++;
	t->frames += nd > 0 ? (uint64_t)nd : 0;
	if (nr == nd && (nr <= 0 || !memcmp(rows, dwfl, (size_t)nr * sizeof(*rows))))
		return;
	if (t->differ++ < 5) {
		fprintf(stderr, "pid %u: %d frames by rows, %d by libdwfl\n", pid, nr, nd);
		for (i = 0; i < nr || i < nd; i++)
			fprintf(stderr, "  %2d %#18llx %#18llx\n", i, i < nr ? (unsigned long long)rows[i] : 0ULL,
				i < nd ? (unsigned long long)dwfl[i] : 0ULL);
	}
}

/* This process's stack, copied inside the C library's code at many depths. */
static struct {
	struct ms_symbols *s;
	struct copy *c;
	struct tally t;
} own;

static void compare_own(void)
{
	static const size_t lens[] = { 4096, 2048, 1024, 512, 300, 160, 64, 8, 0 };
	size_t i;

	take_copy(own.c);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		compare_stack(own.s, (uint32_t)getpid(), own.c->regs, MASK, own.c->stack, lens[i], &own.t);
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	compare_own();
	return (x > y) - (x < y);
}

static void visit(const void *node, VISIT which, int depth)
{
	(void)node; (void)depth;
	if (which == leaf)
		compare_own();
}

static void on_signal(int sig)
{
	(void)sig;
	compare_own();
}

static void rows_match_libdwfl_on_own_stacks(void **state)
{
#if defined(__x86_64__)
	struct ms_unwind_stats st;
	struct text t[32];
	void *root = NULL;
	int v[40], i;

	own.s = ms_symbols_new();
	own.c = calloc(1, sizeof(*own.c));
	assert_non_null(own.c);
	map_own_code(own.s, t, 32);
	for (i = 0; i < 40; i++)
		v[i] = (i * 7919) % 40;
	qsort(v, 40, sizeof(v[0]), by_value);
	for (i = 0; i < 40; i++)
		tsearch(&v[i], &root, by_value);
	twalk(root, visit);
	tdestroy(root, free_nothing);
	/* Inside a signal handler: the C library's trampoline is a signal frame, which libdwfl walks. */
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	signal(SIGUSR1, SIG_DFL);
	ms_symbols_unwind_stats(own.s, &st);
	assert_true(st.why[MS_CFI_SIGNAL] > 0);
	fprintf(stderr, "own stacks: %llu, %llu frames; %llu by rows\n", (unsigned long long)own.t.stacks,
		(unsigned long long)own.t.frames, (unsigned long long)st.rules);
	assert_int_equal(own.t.differ, 0);
	assert_true(own.t.stacks > 1000);
	assert_true(st.rules > own.t.stacks / 2);   /* the rows walked most (each stack is walked twice) */
	free(own.c);
	ms_symbols_free(own.s);
#else
	skip();
#endif
}

/* A crafted stack of nw words at B, with ip and bp; sp is B. */
struct chain {
	uint64_t ip, bp;
	size_t nw;
	uint64_t w[8];
};

#define B 0x7ff000000000ULL

/*
 * Stacks no compiler makes, whose pcs no binary holds, so that both walks
 * follow the frame pointer as libdwfl's x86-64 backend does: a chain that
 * turns back down, a return address of 0, a saved frame pointer below the
 * copy, the copy cut inside a frame, a frame pointer of 0 or near 2^64.
 * Rows and libdwfl give the same frames.
 */
static void rows_match_libdwfl_on_frame_pointer_chains(void **state)
{
	static const struct chain cases[] = {
		{ 0x1000, B + 16, 4, { B + 16, 0x3000, B, 0x2000 } },
		{ 0x1000, B, 4, { B + 16, 0, 0, 0x4000 } },
		{ 0x1000, B - 8, 2, { 0x5000, 0 } },
		{ 0x1000, B + 8, 2, { 0, B } },
		{ 0x1000, 0, 2, { B, 0x2000 } },
		{ 0x1000, ~0ULL - 7, 2, { B, 0x2000 } },
		{ 0x1000, ~0ULL - 15, 2, { B, 0x2000 } },
	};
	struct tally t = { 0 };
	struct ms_symbols *s = ms_symbols_new();
	uint32_t pid = (uint32_t)getpid();
	unsigned char stack[64];
	uint64_t regs[17] = { 0 };
	struct text tx[32];
	size_t i;

	map_own_code(s, tx, 32);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(stack, cases[i].w, cases[i].nw * 8);
		regs[6] = cases[i].bp;
		regs[7] = B;
		regs[8] = cases[i].ip;
		compare_stack(s, pid, regs, MASK, stack, cases[i].nw * 8, &t);
	}
	assert_int_equal(t.differ, 0);
	ms_symbols_free(s);
}

/*
 * A read 8 bytes below 2^64 from a stack pointer under 8 (a crafted file's
 * sample) is outside the copy, though its offset plus 8 wraps to 0: the
 * saved frame pointer there is not read, by rows or by libdwfl, and the
 * bytes before the copy (a frame pointer of 8 here) never become a frame.
 */
static void reads_nothing_outside_the_copy(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint32_t pid = (uint32_t)getpid();
	uint64_t mem[5] = { 8, 0x5000, 0, 0x7000, 0 }, regs[17] = { 0 }, pcs[8];
	struct text tx[32];
	int dwfl;

	map_own_code(s, tx, 32);
	regs[6] = ~0ULL - 7;
	regs[7] = 0;
	regs[8] = 0x1000;
	for (dwfl = 0; dwfl < 2; dwfl++) {
		ms_symbols_unwind_dwfl_only(s, dwfl);
		assert_int_equal(ms_symbols_unwind(s, pid, regs, MASK, (const unsigned char *)&mem[1], 32, pcs, 8), 2);
		assert_true(pcs[0] == 0x1000 && pcs[1] == 0x5000);
	}
	ms_symbols_free(s);
}

/* This process's code fed to s, and a copy of its stack in c unwound once: its unwinder, made. */
static struct proc_bins *own_unwound(struct ms_symbols *s, struct copy *c)
{
	uint32_t pid = (uint32_t)getpid();
	struct text tx[32];
	uint64_t pcs[16];

	assert_non_null(c);
	map_own_code(s, tx, 32);
	unwind_caller(c);
	assert_true(ms_symbols_unwind(s, pid, c->regs, MASK, c->stack, c->len, pcs, 16) > 0);
	return ms_symbols_proc(s, pid, false);
}

#if !defined(__SANITIZE_ADDRESS__)
/*
 * realloc, failing once where a test arms it: the fail_at'th call for
 * fail_size bytes from then on. (ASan's own realloc is left alone.)
 */
extern void *__libc_realloc(void *p, size_t n);
static size_t fail_size;
static int fail_at;

void *realloc(void *p, size_t n)
{
	if (fail_size && n == fail_size && --fail_at == 0) {
		fail_size = 0;
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

/* This test's own code mapped again (as in another place of the same process), shifted down by delta. */
static void map_own_text_at(struct ms_symbols *s, uint64_t delta)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, pgoff, ino;
	uintptr_t here = (uintptr_t)take_copy;
	char line[4352], perms[8], path[4096];
	unsigned int maj, min;
	struct ms_event ev;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &start, &end, perms, &pgoff, &maj, &min, &ino,
			   path) == 8 && start <= here && here < end) {
			ev = task_ev(MS_EV_MAP, (uint32_t)getpid());
			ev.map = (struct ms_event_map){ .start = start - delta, .end = end - delta,
							.vma_start = start - delta, .vma_end = end - delta,
							.pgoff = pgoff, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
							.maj = maj, .min = min, .ino = ino, .name = path };
			ms_symbols_track(s, &ev);
		}
	fclose(f);
}
#endif

/*
 * A process's binaries, as its unwinder has them, are never left half
 * made where memory ran out: their list sorted by address could not grow
 * for the binaries mapped since, and the next stack took the list as
 * current, sorted without them, for as long as the process mapped nothing
 * more (a pc in one of them then in no binary, its walk not libdwfl's).
 */
static void spans_whole_after_no_memory(void **state)
{
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
	struct ms_symbols *s = ms_symbols_new();
	uint32_t pid = (uint32_t)getpid();
	struct copy *c = calloc(1, sizeof(*c));
	struct tally t = { 0 };
	struct proc_bins *p;
	uint64_t pcs[16], delta = 0;
	size_t cap;

	p = own_unwound(s, c);
	cap = p->uw_sorted_cap;
	assert_int_equal(cap, p->uw_cap);
	while (p->n <= cap)
		map_own_text_at(s, delta += 1ULL << 39);
	fail_size = 2 * cap * sizeof(struct uw_span);
	fail_at = 2;                     /* the spans grow; their sorted copy cannot */
	assert_int_equal(ms_symbols_unwind(s, pid, c->regs, MASK, c->stack, c->len, pcs, 16), -ENOENT);
	assert_int_equal(fail_size, 0);
	assert_true(ms_symbols_unwind(s, pid, c->regs, MASK, c->stack, c->len, pcs, 16) > 0);
	assert_int_equal(p->uw_sorted_nr, p->uw_nr);
	/* The copy as if taken in the last copy of this code: rows and libdwfl find it there alike. */
	c->regs[8] -= delta;
	compare_stack(s, pid, c->regs, MASK, c->stack, c->len, &t);
	assert_int_equal(t.differ, 0);
	free(c);
	ms_symbols_free(s);
#else
	skip();                          /* ASan's realloc cannot be made to fail */
#endif
}

/*
 * A pc at either edge of each of this process's binaries, or just past
 * one (the module that ends there is the one libdwfl finds, where no other
 * begins there), as the first frame's pc with this test's stack and as
 * a caller's: rows and libdwfl alike.
 */
static void rows_match_libdwfl_at_module_edges(void **state)
{
#if defined(__x86_64__)
	struct ms_symbols *s = ms_symbols_new();
	uint32_t pid = (uint32_t)getpid();
	struct copy *c = calloc(1, sizeof(*c));
	struct tally t = { 0 };
	struct uw_span *sp;
	struct proc_bins *p;
	uint64_t edge[5], regs[17] = { 0 }, chain[4] = { B + 16, 0, 0, 0 };
	size_t i, nr;
	int k;

	p = own_unwound(s, c);
	nr = p->uw_sorted_nr;
	sp = malloc(nr * sizeof(*sp));
	assert_non_null(sp);
	memcpy(sp, p->uw_sorted, nr * sizeof(*sp));
	for (i = 0; i < nr; i++) {
		edge[0] = sp[i].lo;
		edge[1] = sp[i].lo - 1;
		edge[2] = sp[i].hi - 1;
		edge[3] = sp[i].hi;
		edge[4] = sp[i].hi + 1;
		for (k = 0; k < 5; k++) {
			c->regs[8] = edge[k];
			compare_stack(s, pid, c->regs, MASK, c->stack, c->len, &t);
			/* and as a caller's pc (looked up less one), reached by the frame pointer from no binary */
			chain[1] = edge[k];
			regs[6] = regs[7] = B;
			regs[8] = 0x1000;
			compare_stack(s, pid, regs, MASK, (const unsigned char *)chain, sizeof(chain), &t);
		}
	}
	assert_int_equal(t.differ, 0);
	assert_true(t.stacks >= 10);
	free(sp);
	free(c);
	ms_symbols_free(s);
#else
	skip();
#endif
}

/* Every stack a recording's changes carry, compared where the report unwinds it. */
static int compare_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	if (ev && ev->uregs && ev->ustack && c->region)
		compare_stack(ms_session_symbols(s), c->region->pid, ev->uregs, ev->uregs_mask, ev->ustack,
			      ev->ustack_len, ctx);
	return 0;
}

static const struct ms_analysis compare_analysis = {
	.name = "unwind-compare", .change = compare_change, .flags = MS_ANALYSIS_NEEDS_SYMBOLS,
};

/* Why the stacks libdwfl walked were not walked by rows. */
static void print_why(const struct ms_unwind_stats *st)
{
	static const char *const names[MS_UW_WHY_NR] = {
		[MS_CFI_NO_FDE] = "no FDE", [MS_CFI_EXPR] = "expression", [MS_CFI_SIGNAL] = "signal frame",
		[MS_CFI_OTHER] = "other", [MS_UW_DEBUG_FRAME] = ".debug_frame", [MS_UW_OVERLAP] = "overlapping binaries",
		[MS_UW_NOT_X86_64] = "not x86-64",
	};
	int i;

	for (i = 1; i < MS_UW_WHY_NR; i++)
		if (st->why[i])
			fprintf(stderr, ", %s %llu", names[i], (unsigned long long)st->why[i]);
	fprintf(stderr, "\n");
}

static void compare_file(const char *path, struct tally *t, struct ms_unwind_stats *st)
{
	struct ms_session_opts o = { .symbols = true };
	struct ms_session *s = ms_session_open(path, &o);

	assert_non_null(s);
	assert_int_equal(ms_session_add(s, &compare_analysis, t), 0);
	assert_true(ms_session_run(s) >= 0);
	ms_symbols_unwind_stats(ms_session_symbols(s), st);
	fprintf(stderr, "%s: %llu stacks, %llu frames, %llu differ; walks by rows %llu, by libdwfl %llu", path,
		(unsigned long long)t->stacks, (unsigned long long)t->frames, (unsigned long long)t->differ,
		(unsigned long long)st->rules, (unsigned long long)(st->dwfl - t->stacks));
	print_why(st);
	ms_session_free(s);
}

/* Records argv into a folder of its own and compares every stack there; -1 where it cannot record. */
static int compare_recorded(char *const argv[], struct tally *t, struct ms_unwind_stats *st)
{
	char dir[] = "/tmp/ms-unwind-XXXXXX", path[64];
	int err;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rec.data", dir);
	if (!(err = record_workload(path, argv)))
		compare_file(path, t, st);
	unlink(path);
	rmdir(dir);
	if (err)
		return -1;
	assert_int_equal(t->differ, 0);
	assert_true(t->stacks > 0);
	assert_true(st->rules > 0);
	return 0;
}

/*
 * A workload built without frame pointers, whose stacks go through glibc's
 * malloc, and python3 (its interpreter's stacks through libpython and the
 * C library, a thousand of them), recorded as record records by default: a
 * stack copy at every mapping call.
 */
static void rows_match_libdwfl_on_recordings(void **state)
{
	const char *w = getenv("WORKLOADS");
	char prog[4096];
	char *sites[] = { prog, NULL };
	char *py[] = { (char *)"/usr/bin/python3", (char *)"-c",
		       (char *)"import json, re, decimal; d = {i: [str(i)] * 8 for i in range(100000)}; print(len(d))", NULL };
	struct ms_unwind_stats st;
	struct tally t = { 0 };

	snprintf(prog, sizeof(prog), "%s/alloc-sites", w ? w : ".");
	if (!w || compare_recorded(sites, &t, &st))
		skip();                      /* recording needs root, perf and the mapscope binary (ctest sets MAPSCOPE) */
	memset(&t, 0, sizeof(t));
	if (access(py[0], X_OK) == 0)
		assert_int_equal(compare_recorded(py, &t, &st), 0);
}

/* The recordings MAPSCOPE_UNWIND_FILES names (colon-separated): none, and the test is skipped. */
static void rows_match_libdwfl_on_named_files(void **state)
{
	const char *env = getenv("MAPSCOPE_UNWIND_FILES");
	char *list, *path, *save = NULL;
	struct ms_unwind_stats st;
	struct tally t;

	if (!env || !*env)
		skip();
	list = strdup(env);
	assert_non_null(list);
	for (path = strtok_r(list, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
		memset(&t, 0, sizeof(t));
		compare_file(path, &t, &st);
		assert_int_equal(t.differ, 0);
		assert_true(st.rules > 0);
	}
	free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwinds_own_stack),
		cmocka_unit_test(refuses_what_it_cannot_unwind),
		cmocka_unit_test(symbols_and_unwinding_map_a_binary_once),
		cmocka_unit_test(rows_match_libdwfl_on_own_stacks),
		cmocka_unit_test(rows_match_libdwfl_on_frame_pointer_chains),
		cmocka_unit_test(reads_nothing_outside_the_copy),
		cmocka_unit_test(spans_whole_after_no_memory),
		cmocka_unit_test(rows_match_libdwfl_at_module_edges),
		cmocka_unit_test(rows_match_libdwfl_on_recordings),
		cmocka_unit_test(rows_match_libdwfl_on_named_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
