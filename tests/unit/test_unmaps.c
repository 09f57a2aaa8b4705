/*
 * Unmaps a syscall's exit does not place (lib/stream/unmaps.c), on
 * synthetic recordings: a munmap or an mremap that another thread's map
 * overtook is applied before that map, once; io_destroy unmaps the AIO ring its
 * context id names, whole, and nothing else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "syscall_recs.h"

/* Thread PID + 2's mmap(mm) at time t, which the kernel placed at addr: its entry, its MMAP2 of len, its exit. */
static void mapped_by_other(struct rec *r, uint64_t t, const uint64_t mm[5], uint64_t addr, uint64_t len)
{
	enter(r, "mmap", t, PID + 2, mm, 5);
	put_map_by(r, t + 1, PID + 2, addr, len);
	leave(r, "mmap", t + 2, PID + 2, (int64_t)addr);
}

/*
 * A munmap done before it returns: thread PID + 1's munmap of [A, A + 32
 * pages) lets go of the mmap lock, thread PID + 2 maps 32 pages with no
 * address asked for and the kernel puts them at A, and only then does the
 * munmap return. The unmap is applied before the new map, not at its exit
 * (which unmapped the new map too). A map with MAP_FIXED proves nothing
 * (it may have been made before the unmap took the lock): that unmap
 * waits for its exit.
 */
static void unmap_overtaken(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "sys_enter_mmap", "sys_exit_mmap" };
	const uint64_t un[2] = { A, 32 * P }, b = A + 64 * P;
	uint64_t mm[5] = { 0, 32 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1 };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "munmap", 10, PID + 1, un, 2);
	mapped_by_other(&r, 11, mm, A, 32 * P);
	leave(&r, "munmap", 14, PID + 1, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_true(mapped(s, A));
	assert_true(mapped(s, A + 31 * P));
	assert_int_equal(w.n, 1);                       /* once: not again at its exit */
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.start[0], A);
	ms_session_free(s);

	/* MAP_FIXED, over another range the munmap holds: it comes off at the munmap's exit. */
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "munmap", 10, PID + 1, un, 2);
	mm[0] = A + 8 * P;
	mm[1] = 4 * P;
	mm[3] |= MAP_FIXED;
	mapped_by_other(&r, 11, mm, A + 8 * P, 4 * P);
	leave(&r, "munmap", 14, PID + 1, 0);
	/* Another process's map at the same address proves nothing of this one's. */
	put_map(&r, 20, b, 32 * P);
	enter(&r, "munmap", 21, PID + 1, (const uint64_t[]){ b, 32 * P }, 2);
	mm[0] = 0;
	mm[1] = 32 * P;
	mm[3] &= ~(uint64_t)MAP_FIXED;
	enter(&r, "mmap", 22, PID + 2, mm, 5);
	leave(&r, "mmap", 23, PID + 2, (int64_t)(b + 64 * P));   /* no MMAP2 there: nothing named */
	leave(&r, "munmap", 24, PID + 1, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, A + 8 * P));
	assert_false(mapped(s, A));
	assert_false(mapped(s, b));
	ms_session_free(s);

	/* Overtaken, its exit lost: the thread's next munmap is its own, applied at its exit. */
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	put_map(&r, 2, b, 32 * P);
	enter(&r, "munmap", 10, PID + 1, un, 2);
	mapped_by_other(&r, 11, mm, A, 32 * P);
	enter(&r, "munmap", 20, PID + 1, (const uint64_t[]){ b, 32 * P }, 2);
	leave(&r, "munmap", 21, PID + 1, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_true(mapped(s, A));
	assert_false(mapped(s, b));
	ms_session_free(s);
}

/*
 * mremap overtaken the same way: a move to a fixed place, and a shrink,
 * free what another thread's map then takes before the call returns. The
 * move (or the shrink) is applied before that map, once; the memory moved
 * is at its new place, and the new map at the old one.
 */
static void remap_overtaken(void **state)
{
	static const char *const tps[] = { "sys_enter_mremap", "sys_exit_mremap", "sys_enter_mmap", "sys_exit_mmap" };
	const uint64_t to = A + 256 * P;
	uint64_t mv[5] = { A, 32 * P, 32 * P, MREMAP_MAYMOVE | MREMAP_FIXED, to };
	uint64_t mm[5] = { 0, 32 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1 };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "mremap", 10, PID + 1, mv, 5);
	mapped_by_other(&r, 11, mm, A, 32 * P);
	leave(&r, "mremap", 14, PID + 1, (int64_t)to);
	/* A shrink of the memory moved: its tail freed, and taken by a map of 8 pages. */
	mv[0] = to;
	mv[2] = 24 * P;
	mv[3] = 0;
	enter(&r, "mremap", 20, PID + 1, mv, 5);
	mm[1] = 8 * P;
	mapped_by_other(&r, 21, mm, to + 24 * P, 8 * P);
	leave(&r, "mremap", 24, PID + 1, (int64_t)to);
	close_rec(&r);
	s = replay(&r, &w);
	assert_true(mapped(s, A));                       /* the new map at the old place */
	assert_true(mapped(s, A + 31 * P));
	assert_true(mapped(s, to));                      /* the memory moved, shrunk */
	assert_true(mapped(s, to + 23 * P));
	assert_true(mapped(s, to + 24 * P));             /* the second new map in its tail */
	assert_int_not_equal(ms_aspace_lookup(ms_session_aspace(s), PID, to + 24 * P),
			     ms_aspace_lookup(ms_session_aspace(s), PID, to));
	assert_int_equal(w.n, 2);                        /* each once */
	assert_int_equal(w.op[0], MS_OP_REMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.op[1], MS_OP_REMAP);
	ms_session_free(s);
}

/*
 * A move to a place the kernel picks (MREMAP_MAYMOVE, growing), overtaken
 * by a map in the old place: with the tree, the call's first write outside
 * the old range (copy_vma's) says where the memory went, and the move is
 * applied then. A write of another length (merged with a neighbour there)
 * does not say where in it: the move waits for the exit, as without the
 * tree, and takes the new map with it (a known limit).
 */
static void picked_move_overtaken(void **state)
{
	static const char *const tps[] = { "sys_enter_mremap", "sys_exit_mremap", "sys_enter_mmap", "sys_exit_mmap",
					   "ma_write" };
	const uint64_t to = A + 256 * P, vma = 0xffff888100001000ULL;
	uint64_t mv[5] = { A, 32 * P, 64 * P, MREMAP_MAYMOVE, 0 };
	uint64_t mm[5] = { 0, 32 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1 };
	struct ms_session *s;
	struct seen w;
	struct rec r;
	int merged;

	(void)state;
	for (merged = 0; merged < 2; merged++) {
		open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
		put_map(&r, 1, A, 32 * P);
		if (merged)
			put_map(&r, 2, to - 4 * P, 4 * P);       /* a neighbour the copy merged with */
		enter(&r, "mremap", 10, PID + 1, mv, 5);
		tree_write(&r, 11, PID + 1, merged ? to - 4 * P : to, to + 64 * P, vma);
		mapped_by_other(&r, 12, mm, A, 32 * P);
		leave(&r, "mremap", 15, PID + 1, (int64_t)to);
		close_rec(&r);
		s = replay(&r, &w);
		assert_int_equal(w.n, 1);                  /* once */
		assert_int_equal(w.op[0], MS_OP_REMAP);
		assert_int_equal(w.tid[0], PID + 1);
		assert_true(mapped(s, to));
		assert_true(mapped(s, to + 63 * P));
		assert_int_equal(mapped(s, A), !merged);    /* the new map kept, where the write said where */
		ms_session_free(s);
	}
}

/* An MMAP2 of an AIO ring of n pages at addr, shared, as io_setup maps it (its name cut to what is read of it). */
static void put_ring(struct rec *r, uint64_t t, uint64_t addr, uint64_t n)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, PID, PID, addr, n * P, 0,
			       0, 19, 2494411, 0, PROT_READ | PROT_WRITE, MAP_SHARED, "/[aio]", PID, PID, t, FAULT_ID,
			       0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &m.h), 0);
}

/*
 * Two rings and a map after them: io_destroy of the first unmaps it whole
 * (3 pages) and leaves the rest; one that failed, or of an id no ring was
 * seen at, unmaps nothing.
 */
static void aio_ring_destroyed(void **state)
{
	static const char *const tps[] = { "sys_enter_io_destroy", "sys_exit_io_destroy" };
	const uint64_t one = A, two = A + 16 * P, after = A + 64 * P;
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_ring(&r, 1, one, 3);
	put_ring(&r, 2, two, 10);
	put_map(&r, 3, after, 4 * P);
	enter(&r, "io_destroy", 10, PID, &one, 1);
	leave(&r, "io_destroy", 11, PID, 0);
	enter(&r, "io_destroy", 12, PID, &two, 1);
	leave(&r, "io_destroy", 13, PID, -EINVAL);        /* failed: the ring stays */
	enter(&r, "io_destroy", 14, PID, &after, 1);
	leave(&r, "io_destroy", 15, PID, 0);             /* no ring seen there */
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, one));
	assert_false(mapped(s, one + 2 * P));
	assert_true(mapped(s, two));
	assert_true(mapped(s, two + 9 * P));
	assert_true(mapped(s, after));
	assert_int_equal(w.n, 1);
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.start[0], one);
	assert_int_equal(w.end[0], one + 3 * P);
	ms_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unmap_overtaken),
		cmocka_unit_test(remap_overtaken),
		cmocka_unit_test(picked_move_overtaken),
		cmocka_unit_test(aio_ring_destroyed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
