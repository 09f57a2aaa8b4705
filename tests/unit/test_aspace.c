/* The model's objects and what it answers: names, lookups, regions, VMAs, call chains. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include <mapscope/aspace.h>

#include "aspace_events.h"

static void names(void **state)
{
	assert_string_equal(ms_aspace_op_name(MS_OP_STACK_GROW), "stack-grow");
	assert_string_equal(ms_aspace_op_name(MS_OP_LOCK), "lock");
	assert_string_equal(ms_aspace_op_name(MS_OP_NONE), "none");
	assert_null(ms_aspace_op_name((enum ms_aspace_op)99));
	assert_string_equal(ms_region_kind_name(MS_KIND_THREAD_STACK), "thread-stack");
	assert_string_equal(ms_region_kind_name((enum ms_region_kind)99), "other");
}

/* A file map at file offset pgoff. */
static void map_file(struct ms_aspace *as, uint64_t s, uint64_t e, uint64_t pgoff, uint32_t prot, const char *name)
{
	struct ms_event m = map_ev(PID, s, e, name);

	m.map.pgoff = pgoff;
	m.map.prot = prot;
	m.map.ino = 42;
	m.map.maj = 8;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

/*
 * Lookups answer as of now: the region and protection at an address,
 * whether a region holds a whole range, the heap and the stack, and every
 * region ever made, in order, the ended ones too.
 */
static void lookups_and_regions(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *lib, *heap;

	map_file(as, 16 * P, 24 * P, 0, PROT_READ | PROT_EXEC, "/lib/x.so");
	map(as, 40 * P, 48 * P, "[heap]");
	map(as, 64 * P, 72 * P, "[stack]");
	protect(as, 44 * P, 45 * P, PROT_READ);
	lib = ms_aspace_lookup(as, PID, 20 * P);
	heap = ms_aspace_heap(as, PID);
	assert_non_null(lib);
	assert_int_equal(lib->kind, MS_KIND_FILE);
	assert_string_equal(lib->name, "/lib/x.so");
	assert_int_equal(heap->kind, MS_KIND_HEAP);
	assert_ptr_equal(ms_aspace_lookup(as, PID, 44 * P + 100), heap);
	assert_null(ms_aspace_lookup(as, PID, 30 * P));
	assert_null(ms_aspace_lookup(as, PID + 1, 20 * P));
	assert_int_equal(ms_aspace_stack(as, PID)->start, 64 * P);
	assert_int_equal(ms_aspace_prot_at(as, PID, 44 * P), PROT_READ);
	assert_int_equal(ms_aspace_prot_at(as, PID, 45 * P), RW);
	assert_int_equal(ms_aspace_prot_at(as, PID, 30 * P), -1);
	assert_true(ms_aspace_holds(as, PID, heap->id, 40 * P, 48 * P));   /* across the protection's split */
	assert_false(ms_aspace_holds(as, PID, heap->id, 40 * P, 49 * P));
	assert_false(ms_aspace_holds(as, PID, lib->id, 40 * P, 41 * P));
	unmap(as, 40 * P, 48 * P);
	assert_null(ms_aspace_heap(as, PID));
	assert_int_equal(ms_aspace_nr_regions(as), 3);
	assert_false(ms_aspace_region(as, heap->id)->alive);
	assert_int_equal(ms_aspace_region(as, heap->id)->ended_ns, now - 1);
	assert_null(ms_aspace_region(as, 3));
	ms_aspace_free(as);
}

struct listed { uint64_t s[8], e[8], off[8]; int n; };

static void list_vma(const struct ms_vma *v, void *ctx)
{
	struct listed *l = ctx;

	l->s[l->n] = v->start;
	l->e[l->n] = v->end;
	l->off[l->n++] = v->offset;
}

/* VMAs as /proc/PID/maps lists them: split pieces of one VMA joined, file offsets kept, anonymous ones 0. */
static void vmas_as_proc_lists_them(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct listed l = { .n = 0 };

	map_file(as, 16 * P, 24 * P, 2 * P, PROT_READ, "/lib/x.so");
	map(as, 32 * P, 40 * P, "//anon");
	sample(as, 34 * P);                                /* the model splits its pieces; the VMA is one */
	assert_int_equal(ms_aspace_for_each_vma(as, PID, list_vma, &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.s[0], 16 * P);
	assert_int_equal(l.off[0], 2 * P);
	assert_int_equal(l.e[1], 40 * P);
	assert_int_equal(l.off[1], 0);
	assert_int_equal(ms_aspace_for_each_vma(as, PID + 1, list_vma, &l), -ESRCH);
	ms_aspace_free(as);
}

/*
 * A syscall's call chain: perf's context markers dropped, and the
 * wrapper's caller (the first stack word that points into code) put back
 * after the wrapper's frame, unless the walk found it.
 */
static void call_chain_repaired(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	uint64_t chain[3] = { PERF_CONTEXT_USER, 16 * P + 8, 17 * P }, stack[3] = { 40 * P, 18 * P + 4, 19 * P };
	uint64_t out[4];
	struct ms_event e = ev(MS_EV_UNMAP);

	map_file(as, 16 * P, 24 * P, 0, PROT_READ | PROT_EXEC, "/lib/libc.so");
	map(as, 40 * P, 48 * P, "//anon");
	e.chain = chain;
	e.chain_len = 3;
	e.stack = stack;
	e.stack_len = 3;
	assert_int_equal(ms_aspace_call_chain(as, &e, out), 3);
	assert_int_equal(out[0], 16 * P + 8);
	assert_int_equal(out[1], 18 * P + 4);                  /* 40 * P is data, not code */
	assert_int_equal(out[2], 17 * P);
	stack[1] = 17 * P;                                     /* the walk has it already */
	assert_int_equal(ms_aspace_call_chain(as, &e, out), 2);
	e.pid = PID + 1;
	assert_int_equal(ms_aspace_call_chain(as, &e, out), 0);
	ms_aspace_free(as);
}

/*
 * Regions are made in blocks: 10,000 maps made in address order, then one
 * below them all (the pieces' array grows at the back, then at the
 * front), each found again where it was made, at the address it has, the
 * anonymous ones with the empty name; one renamed (the heap) frees its
 * own name and not the shared one.
 */
static void many_regions(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_region *first, *r;
	size_t i;

	(void)state;
	for (i = 0; i < 10000; i++)
		map(as, (1000 + 2 * i) * P, (1001 + 2 * i) * P, "//anon");
	map(as, 10 * P, 11 * P, "//anon");
	first = ms_aspace_region(as, 0);
	assert_int_equal(ms_aspace_nr_regions(as), 10001);
	for (i = 0; i < 10000; i++) {
		r = ms_aspace_lookup(as, PID, (1000 + 2 * i) * P);
		assert_non_null(r);
		assert_int_equal(r->id, i);
		assert_ptr_equal(r, ms_aspace_region(as, i));
		assert_string_equal(r->name, "");
		assert_null(ms_aspace_lookup(as, PID, (1001 + 2 * i) * P));
	}
	assert_int_equal(ms_aspace_lookup(as, PID, 10 * P)->id, 10000);
	assert_ptr_equal(ms_aspace_region(as, 0), first);
	map(as, 30000 * P, 30008 * P, "[heap]");
	assert_string_equal(ms_aspace_heap(as, PID)->name, "[heap]");
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(lookups_and_regions),
		cmocka_unit_test(many_regions),
		cmocka_unit_test(vmas_as_proc_lists_them),
		cmocka_unit_test(call_chain_repaired),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
