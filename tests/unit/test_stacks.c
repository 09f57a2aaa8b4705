/* Stacks: a fault below [stack] waits for its growth; thread stacks named from their SP. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_fault_before_growth),
		cmocka_unit_test(thread_stacks_named_from_sp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
