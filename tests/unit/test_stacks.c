/* Stacks: a fault below [stack] waits for its growth; thread stacks named from their SP. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/aspace.h>

#include "aspace_events.h"

static void stack_fault_before_growth(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_aspace_listener l = { .charge = on_charge };
	struct ms_event g;
	enum ms_aspace_op op;
	int stack;

	ms_aspace_set_listener(as, &l, NULL);
	nr_charged = 0;
	g = ev(MS_EV_MAP);
	g.map.start = g.map.vma_start = 1000 * P;
	g.map.end = g.map.vma_end = 1032 * P;
	g.map.name = "[stack]";
	g.map.via = MS_VIA_KERNEL;
	ms_aspace_apply(as, &g, NULL);
	stack = region_at(as, PID, 1000 * P);
	sample(as, 999 * P + 8);                       /* the fault comes first ... */
	assert_int_equal(nr_charged, 0);               /* ... and waits */
	g = ev(MS_EV_MAP);                             /* ... then the growth record */
	g.map.start = g.map.vma_start = 999 * P;
	g.map.end = g.map.vma_end = 1032 * P;
	g.map.name = "[stack]";
	g.map.via = MS_VIA_KERNEL;
	assert_int_equal(ms_aspace_apply(as, &g, &op), 0);
	assert_int_equal(op, MS_OP_STACK_GROW);
	assert_int_equal(nr_charged, 1);
	assert_int_equal(charged[0], stack);
	assert_int_equal(region_at(as, PID, 999 * P), stack);
	/* A wild access below the stack that no growth follows is unmapped. */
	sample(as, 900 * P);
	sample(as, 1010 * P);
	assert_int_equal(nr_charged, 3);
	assert_int_equal(charged[1], -1);
	assert_int_equal(charged[2], stack);
	sample(as, 990 * P);
	ms_aspace_finish(as);
	assert_int_equal(charged[3], -1);
	ms_aspace_free(as);
}

/* A sample with tid's stack pointer at sp. */
static void sample_sp(struct ms_aspace *as, uint32_t tid, uint64_t addr, uint64_t sp)
{
	struct ms_event s = ev(MS_EV_SAMPLE);

	s.tid = tid;
	s.sample.addr = addr;
	s.sample.has_addr = true;
	s.sample.sp = sp;
	s.sample.has_sp = true;
	assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
}

/*
 * A thread's stack is the anonymous region its stack pointer lies in,
 * named [stack:TID] from a sample or a task-clock SP record; the main
 * thread's SP and an SP in a file mapping name nothing; /proc's name stays.
 */
static void thread_stacks_named_from_sp(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *a, *b, *f;
	struct ms_event t = map_ev(PID, 500 * P, 510 * P, "/lib/x.so");

	t.map.ino = 7;
	assert_int_equal(ms_aspace_apply(as, &t, NULL), 0);
	map(as, 100 * P, 200 * P, "//anon");
	map(as, 300 * P, 400 * P, "//anon");
	a = ms_aspace_lookup(as, PID, 100 * P);
	b = ms_aspace_lookup(as, PID, 300 * P);
	f = ms_aspace_lookup(as, PID, 500 * P);
	sample_sp(as, PID, 100 * P, 150 * P);                  /* the main thread */
	assert_int_equal(a->kind, MS_KIND_ANON);
	sample_sp(as, PID + 1, 500 * P, 505 * P);              /* SP in a file: no stack */
	assert_int_equal(f->kind, MS_KIND_FILE);
	sample_sp(as, PID + 2, 500 * P, 199 * P);
	assert_int_equal(a->kind, MS_KIND_THREAD_STACK);
	assert_string_equal(a->name, "[stack:102]");
	assert_string_equal(a->proc_name, "");
	t = ev(MS_EV_THREAD_SP);
	t.tid = PID + 3;
	t.sample.sp = 350 * P;
	t.sample.has_sp = true;
	assert_int_equal(ms_aspace_apply(as, &t, NULL), 0);
	assert_string_equal(b->name, "[stack:103]");
	sample_sp(as, PID + 2, 500 * P, 350 * P);              /* named once: a later SP elsewhere changes nothing */
	assert_string_equal(b->name, "[stack:103]");
	assert_string_equal(a->name, "[stack:102]");
	ms_aspace_free(as);
}

struct names {
	uint64_t start[8];
	char name[8][32];
	int n;
};

static void name_of(const struct ms_vma *v, void *ctx)
{
	struct names *w = ctx;

	if (w->n < 8) {
		w->start[w->n] = v->start;
		snprintf(w->name[w->n++], sizeof(w->name[0]), "%s", v->name);
	}
}

/* The VMAs of PID in [lo, hi) with their names, in order. */
static struct names vma_names(struct ms_aspace *as, uint64_t lo, uint64_t hi)
{
	struct names w = { .n = 0 }, in = { .n = 0 };
	int i;

	assert_int_equal(ms_aspace_for_each_vma(as, PID, name_of, &w), 0);
	for (i = 0; i < w.n; i++)
		if (w.start[i] >= lo && w.start[i] < hi) {
			in.start[in.n] = w.start[i];
			memcpy(in.name[in.n++], w.name[i], sizeof(w.name[0]));
		}
	return in;
}

/* An exec: a new program in PID. */
static void exec_new(struct ms_aspace *as)
{
	struct ms_event e = ev(MS_EV_EXEC);

	e.comm.comm = "new";
	assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
}

/* The main stack, [1000, 1032) pages, mapped by way of via. */
static void stack_map(struct ms_aspace *as, enum ms_map_via via)
{
	struct ms_event g = ev(MS_EV_MAP);

	g.map.start = g.map.vma_start = 1000 * P;
	g.map.end = g.map.vma_end = 1032 * P;
	g.map.prot = RW;
	g.map.flags = MAP_PRIVATE;
	g.map.name = "[stack]";
	g.map.via = via;
	assert_int_equal(ms_aspace_apply(as, &g, NULL), 0);
}

/* The main thread's stack pointer, from a syscall's entry or an execve's exit. */
static void main_sp(struct ms_aspace *as, uint64_t sp)
{
	struct ms_event t = ev(MS_EV_THREAD_SP);

	t.sample.sp = sp;
	t.sample.has_sp = true;
	assert_int_equal(ms_aspace_apply(as, &t, NULL), 0);
}

/*
 * /proc names [stack] the VMA that holds where the main stack began
 * (vma_is_initial_stack), known from the main thread's first stack pointer
 * after the exec: the top page split off (firefox's madvise) and a guard
 * page at the bottom are unnamed; the VMA with it keeps the name. A stack
 * read from /proc at an attach, whose first stack pointer is anywhere in
 * it, names every piece as before; so does one whose start is not known.
 */
static void stack_named_where_it_began(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct names w;

	(void)state;
	exec_new(as);
	stack_map(as, MS_VIA_KERNEL);
	main_sp(as, 1030 * P + 0x800);
	main_sp(as, 1001 * P);                         /* later ones are no start */
	advise(as, 1000 * P, 1031 * P, MADV_NOHUGEPAGE);
	protect(as, 1000 * P, 1001 * P, PROT_NONE);
	w = vma_names(as, 1000 * P, 1032 * P);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.name[0], "");            /* the guard page */
	assert_string_equal(w.name[1], "[stack]");     /* [1001, 1031): holds 1030 */
	assert_string_equal(w.name[2], "");            /* the top page */
	ms_aspace_free(as);

	as = ms_aspace_new();
	stack_map(as, MS_VIA_SYNTH);                   /* read at an attach: no exec seen */
	main_sp(as, 1001 * P);
	advise(as, 1000 * P, 1031 * P, MADV_NOHUGEPAGE);
	w = vma_names(as, 1000 * P, 1032 * P);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.name[0], "[stack]");
	assert_string_equal(w.name[1], "[stack]");
	ms_aspace_free(as);

	as = ms_aspace_new();
	stack_map(as, MS_VIA_KERNEL);                  /* a map of the kernel's named [stack], no exec seen */
	main_sp(as, 1001 * P);
	advise(as, 1000 * P, 1031 * P, MADV_NOHUGEPAGE);
	w = vma_names(as, 1000 * P, 1032 * P);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.name[1], "[stack]");
	ms_aspace_free(as);
}

/*
 * /proc names [heap] each anonymous VMA over [start_brk, brk)
 * (vma_is_initial_heap), known from the first brk after an exec: with the
 * break not moved, a VMA merged across it; then the heap's top moved away
 * by mremap is unnamed. A process whose exec was not seen names its heap
 * region as before.
 */
static void heap_named_by_the_break(void **state)
{
	const uint64_t b = 2000 * P;
	struct ms_aspace *as = ms_aspace_new();
	struct names w;

	(void)state;
	exec_new(as);
	stack_map(as, MS_VIA_KERNEL);
	brk(as, b, b, 0, 0);                           /* brk(0): where the break starts */
	map(as, b - P, b, "//anon");
	map_vma(as, b, b + P, b - P, b + P, "//anon");   /* merged across it */
	w = vma_names(as, b - P, b + P);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.name[0], "[heap]");
	unmap(as, b - P, b + P);
	brk(as, b, b + 8 * P, b, b + 8 * P);           /* the heap */
	remap(as, b + 6 * P, b + 8 * P, 3000 * P, 3002 * P);
	w = vma_names(as, b, b + 8 * P);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.name[0], "[heap]");
	w = vma_names(as, 3000 * P, 3002 * P);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.name[0], "");            /* moved away: the break does not cover it */
	ms_aspace_free(as);

	as = ms_aspace_new();                          /* no exec seen: the first brk is no start */
	stack_map(as, MS_VIA_KERNEL);                  /* a stack map of the kernel's all the same */
	brk(as, b + 8 * P, b + 8 * P, 0, 0);
	brk(as, b + 8 * P, b + 16 * P, b + 8 * P, b + 16 * P);
	remap(as, b + 14 * P, b + 16 * P, 3000 * P, 3002 * P);
	w = vma_names(as, 3000 * P, 3002 * P);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.name[0], "[heap]");
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_fault_before_growth),
		cmocka_unit_test(thread_stacks_named_from_sp),
		cmocka_unit_test(stack_named_where_it_began),
		cmocka_unit_test(heap_named_by_the_break),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
