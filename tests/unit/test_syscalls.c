/*
 * Syscall pairing, on synthetic recordings whose tracepoint formats come
 * from a fake tracefs tree: an entry and its exit make one change, applied
 * when the syscall succeeded; threads interleave; an exit with no entry is
 * left alone; a file with entries only applies what an entry says alone;
 * a call that failed part-way applies the part before its failure point;
 * a munmap refused at a sealed VMA splits the VMA at its start;
 * a call in flight when the recording began (its entry unseen) unmaps
 * what the VMA tree's writes of NULL say, and only then.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "syscall_recs.h"

static const char *const both[] = {
	"sys_enter_munmap", "sys_exit_munmap", "sys_enter_mremap", "sys_exit_mremap",
	"sys_enter_mlock", "sys_exit_mlock",
};

/* An entry and its exit: applied when the call succeeded, not when it failed; an exit alone is left. */
static void pairs_by_thread(void **state)
{
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[5];

	(void)state;
	open_rec(&r, both, sizeof(both) / sizeof(both[0]));
	put_map(&r, 1, A, 32 * P);
	a[0] = A + 4 * P, a[1] = 2 * P;
	enter(&r, "munmap", 10, PID, a, 2);
	leave(&r, "munmap", 11, PID, 0);
	a[0] = A + 8 * P, a[1] = P;
	enter(&r, "munmap", 20, PID, a, 2);
	leave(&r, "munmap", 21, PID, -EINVAL);       /* failed: nothing changes */
	/* Two threads, their calls interleaved: each exit closes its own thread's entry. */
	a[0] = A + 10 * P, a[1] = P;
	enter(&r, "munmap", 30, PID + 1, a, 2);
	a[0] = A + 12 * P, a[1] = P;
	enter(&r, "munmap", 31, PID + 2, a, 2);
	leave(&r, "munmap", 32, PID + 2, 0);
	leave(&r, "munmap", 33, PID + 1, -ENOMEM);
	leave(&r, "munmap", 40, PID + 3, 0);         /* an exit whose entry was not recorded */
	/* mremap: the result says where the memory went. */
	a[0] = A + 14 * P, a[1] = 2 * P, a[2] = 2 * P, a[3] = MREMAP_MAYMOVE, a[4] = 0;
	enter(&r, "mremap", 50, PID, a, 5);
	leave(&r, "mremap", 51, PID, (int64_t)0x20000000);
	/* mlock of an unaligned range: rounded out to pages. */
	a[0] = A + 20 * P + 100, a[1] = P;
	enter(&r, "mlock", 60, PID, a, 2);
	leave(&r, "mlock", 61, PID, 0);
	close_rec(&r);

	s = replay(&r, &w);
	assert_int_equal(w.n, 4);
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.start[0], A + 4 * P);
	assert_int_equal(w.end[0], A + 6 * P);
	assert_int_equal(w.op[1], MS_OP_UNMAP);
	assert_int_equal(w.tid[1], PID + 2);
	assert_int_equal(w.start[1], A + 12 * P);
	assert_int_equal(w.op[2], MS_OP_REMAP);
	assert_int_equal(w.op[3], MS_OP_LOCK);
	assert_int_equal(w.start[3], A + 20 * P);
	assert_int_equal(w.end[3], A + 22 * P);
	assert_false(mapped(s, A + 4 * P));
	assert_false(mapped(s, A + 5 * P));
	assert_true(mapped(s, A + 6 * P));
	assert_true(mapped(s, A + 8 * P));            /* the failed munmap */
	assert_true(mapped(s, A + 10 * P));           /* the other thread's, failed */
	assert_false(mapped(s, A + 12 * P));
	assert_false(mapped(s, A + 14 * P));
	assert_true(mapped(s, 0x20000000));
	assert_true(mapped(s, 0x20000000 + P));
	ms_session_free(s);
}

/* Entries only (perf record -e syscalls:sys_enter_munmap): what an entry says alone is applied. */
static void lone_entries(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_enter_mremap", "sys_exit_mremap" };
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[2] = { A + 4 * P, 2 * P };

	(void)state;
	open_rec(&r, tps, 3);
	put_map(&r, 1, A, 32 * P);
	enter(&r, "munmap", 10, PID, a, 2);
	close_rec(&r);
	s = replay(&r, &w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_false(mapped(s, A + 4 * P));
	assert_true(mapped(s, A + 6 * P));
	ms_session_free(s);
}

/*
 * Failed part-way: mprotect changed the VMAs its MMAP2 records show, up to
 * the failure point; madvise over a hole advised every VMA; mlock locked
 * up to the gap. A failed mprotect with no MMAP2 changed nothing.
 */
static void failed_part_way(void **state)
{
	static const char *const tps[] = { "sys_enter_mprotect", "sys_exit_mprotect", "sys_enter_madvise",
					   "sys_exit_madvise", "sys_enter_mlock", "sys_exit_mlock" };
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[3];

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 8 * P);
	put_map(&r, 2, A + 9 * P, 8 * P);
	a[0] = A + 2 * P, a[1] = 10 * P, a[2] = PROT_READ;
	enter(&r, "mprotect", 10, PID, a, 3);
	put_map(&r, 11, A + 2 * P, 6 * P);             /* mprotect_fixup's record of the VMA it changed */
	leave(&r, "mprotect", 12, PID, -ENOMEM);
	a[0] = A + 8 * P, a[1] = 4 * P, a[2] = PROT_NONE;
	enter(&r, "mprotect", 20, PID, a, 3);
	leave(&r, "mprotect", 21, PID, -ENOMEM);       /* from the hole: nothing changed */
	a[0] = A, a[1] = 16 * P, a[2] = MADV_DONTDUMP;
	enter(&r, "madvise", 30, PID, a, 3);
	leave(&r, "madvise", 31, PID, -ENOMEM);
	a[0] = A + 9 * P, a[1] = P, a[2] = MADV_DONTDUMP;
	enter(&r, "madvise", 40, PID, a, 3);
	leave(&r, "madvise", 41, PID, -EINVAL);        /* failed at the start: left out */
	a[0] = A + 4 * P, a[1] = 8 * P;
	enter(&r, "mlock", 50, PID, a, 2);
	leave(&r, "mlock", 51, PID, -ENOMEM);
	close_rec(&r);

	s = replay(&r, &w);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.op[0], MS_OP_PROTECT);
	assert_int_equal(w.start[0], A + 2 * P);
	assert_int_equal(w.end[0], A + 8 * P);
	assert_int_equal(ms_aspace_prot_at(ms_session_aspace(s), PID, A + 7 * P), PROT_READ);
	assert_int_equal(ms_aspace_prot_at(ms_session_aspace(s), PID, A + 9 * P), PROT_READ | PROT_WRITE);
	assert_int_equal(w.op[1], MS_OP_MADVISE);
	assert_int_equal(w.op[2], MS_OP_LOCK);
	ms_session_free(s);
}

/*
 * Populating calls: mmap with MAP_POPULATE says so on its map, not with
 * MAP_NONBLOCK too; madvise(MADV_POPULATE_WRITE) is a change (it makes
 * anon_vmas), MADV_POPULATE_READ is not (but where the recording says a
 * read fault takes a page of its own, mm.read_fault_zero_page 0).
 */
static void populate_told(void **state)
{
	static const char *const tps[] = { "sys_enter_mmap", "sys_exit_mmap", "sys_enter_madvise",
					   "sys_exit_madvise" };
	uint64_t mm[5] = { 0, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1 };
	struct ms_session *s;
	struct seen w;
	struct rec r;
	int i;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	for (i = 0; i < 3; i++) {
		mm[3] = MAP_PRIVATE | MAP_ANONYMOUS | (i ? MAP_POPULATE : 0) | (i == 2 ? MAP_NONBLOCK : 0);
		enter(&r, "mmap", 10 + 10 * (uint64_t)i, PID, mm, 5);
		put_map(&r, 11 + 10 * (uint64_t)i, A + 8 * P * (uint64_t)i, 4 * P);
		leave(&r, "mmap", 12 + 10 * (uint64_t)i, PID, (int64_t)(A + 8 * P * (uint64_t)i));
	}
	/* Locked by the call, and by mlockall (the record says MAP_LOCKED for both): only the call's is told. */
	for (i = 3; i < 5; i++) {
		mm[3] = MAP_PRIVATE | MAP_ANONYMOUS | (i == 3 ? MAP_LOCKED : 0);
		enter(&r, "mmap", 50 + 10 * (uint64_t)i, PID, mm, 5);
		put_flagged_map(&r, 51 + 10 * (uint64_t)i, PID, A + 8 * P * (uint64_t)i, 4 * P, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_LOCKED, "//anon");
		leave(&r, "mmap", 52 + 10 * (uint64_t)i, PID, (int64_t)(A + 8 * P * (uint64_t)i));
	}
	enter(&r, "madvise", 40, PID, (const uint64_t[]){ A, 4 * P, 22 /* MADV_POPULATE_READ */ }, 3);
	leave(&r, "madvise", 41, PID, 0);
	enter(&r, "madvise", 50, PID, (const uint64_t[]){ A, 4 * P, 23 /* MADV_POPULATE_WRITE */ }, 3);
	leave(&r, "madvise", 51, PID, 0);
	/* Stopped at a VMA it may not write, after filling those before: told too; a read's failure is not. */
	enter(&r, "madvise", 60, PID, (const uint64_t[]){ A, 4 * P, 23 }, 3);
	leave(&r, "madvise", 61, PID, -EINVAL);
	enter(&r, "madvise", 70, PID, (const uint64_t[]){ A, 4 * P, MADV_DONTDUMP }, 3);
	leave(&r, "madvise", 71, PID, -EINVAL);
	close_rec(&r);
	s = replay(&r, &w);
	assert_int_equal(w.maps, 5);
	assert_false(w.populate[0]);
	assert_true(w.populate[1]);
	assert_false(w.populate[2]);
	assert_true(w.map_flags[3] & MAP_LOCKED);
	assert_false(w.map_flags[4] & MAP_LOCKED);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.op[0], MS_OP_MADVISE);
	assert_int_equal(w.advice[0], 23);
	assert_int_equal(w.start[0], A);
	assert_int_equal(w.end[0], A + 4 * P);
	assert_int_equal(w.advice[1], 23);
	ms_session_free(s);
}

/*
 * Calls in flight since before the recording (an attach): their entries
 * unseen, their writes of NULL into the VMA tree are unmaps where the
 * exit says an unmapping call succeeded, and nothing where the thread's
 * next record is an entry, a FORK or a failed exit. A store by another
 * thread between the write and the exit cuts the hole.
 */
static void in_flight(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "ma_write" };
	const uint64_t vma = 0xffff888123456000ULL;
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[2];

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);                    /* the maps read from /proc */
	tree_write(&r, 10, PID + 1, A + 4 * P, A + 6 * P, 0);
	leave(&r, "munmap", 11, PID + 1, 0);          /* its entry came before the events */
	tree_write(&r, 20, PID + 2, A + 8 * P, A + 9 * P, 0);
	a[0] = A + 30 * P, a[1] = P;
	enter(&r, "munmap", 21, PID + 2, a, 2);       /* a new call: the write was not one in flight */
	leave(&r, "munmap", 22, PID + 2, 0);
	tree_write(&r, 30, PID + 3, A + 12 * P, A + 16 * P, 0);
	tree_write(&r, 31, PID + 4, A + 13 * P, A + 14 * P, vma);   /* another thread maps there */
	leave(&r, "munmap", 32, PID + 3, 0);
	tree_write(&r, 40, PID + 5, A + 20 * P, A + 21 * P, 0);
	leave(&r, "munmap", 41, PID + 5, -EINVAL);
	tree_write(&r, 50, PID + 6, A + 22 * P, A + 23 * P, 0);   /* a fork's VM_DONTCOPY, in the child's tree */
	put_fork(&r, 51, PID + 6, 99);
	leave(&r, "munmap", 52, PID + 6, 0);
	a[0] = A + 31 * P, a[1] = P;
	enter(&r, "munmap", 60, PID + 7, a, 2);
	leave(&r, "munmap", 61, PID + 7, 0);
	tree_write(&r, 62, PID + 7, A + 24 * P, A + 25 * P, 0);   /* not in flight: its entries are seen */
	leave(&r, "munmap", 63, PID + 7, 0);
	close_rec(&r);

	s = replay(&r, &w);
	assert_false(mapped(s, A + 4 * P));
	assert_false(mapped(s, A + 5 * P));
	assert_true(mapped(s, A + 6 * P));
	assert_true(mapped(s, A + 8 * P));
	assert_false(mapped(s, A + 30 * P));
	assert_false(mapped(s, A + 12 * P));
	assert_true(mapped(s, A + 13 * P));
	assert_false(mapped(s, A + 14 * P));
	assert_false(mapped(s, A + 15 * P));
	assert_true(mapped(s, A + 16 * P));
	assert_true(mapped(s, A + 20 * P));
	assert_true(mapped(s, A + 22 * P));
	assert_false(mapped(s, A + 31 * P));
	assert_true(mapped(s, A + 24 * P));
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.start[0], A + 4 * P);
	assert_int_equal(w.end[0], A + 6 * P);
	ms_session_free(s);
}

/*
 * The kernel's write of NULL takes in the gaps beside what the call
 * removed (the maple tree widens a NULL store over its NULL neighbours;
 * after brk gives pages back, it reaches up to the lowest mmap): the
 * change is what was mapped in it, and over nothing mapped, no change.
 */
static void in_flight_reach(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "ma_write" };
	/* Pages of A after it: munmap(A + 4P, 4P) wrote NULL up to the map at A + 16P. */
	static const struct { uint64_t page; bool mapped; } want[] = {
		{ 3, true }, { 4, false }, { 7, false }, { 8, false }, { 16, true }, { 23, true },
	};
	struct seen w;
	struct rec r;
	struct ms_session *s;
	size_t i;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 8 * P);
	put_map(&r, 2, A + 16 * P, 8 * P);
	tree_write(&r, 10, PID + 1, A + 4 * P, A + 16 * P, 0);
	leave(&r, "munmap", 11, PID + 1, 0);
	tree_write(&r, 20, PID + 2, A + 40 * P, A + 64 * P, 0);   /* over nothing: /proc was read after it */
	leave(&r, "munmap", 21, PID + 2, 0);
	close_rec(&r);

	s = replay(&r, &w);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(mapped(s, A + want[i].page * P), want[i].mapped);
	assert_int_equal(w.n, 1);              /* the unmap of the page range alone */
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.start[0], A + 4 * P);
	assert_int_equal(w.end[0], A + 8 * P);
	ms_session_free(s);
}

struct vmas { uint64_t s[8], e[8]; int n; };

static void collect(const struct ms_vma *v, void *ctx)
{
	struct vmas *out = ctx;

	if (out->n < 8) {
		out->s[out->n] = v->start;
		out->e[out->n++] = v->end;
	}
}

/*
 * munmap refused (-EPERM) at a sealed VMA: nothing is unmapped, but the
 * VMA holding its start, not sealed, was split there by the kernel before
 * it reached the seal, and stays split.
 */
static void refused_at_seal(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "sys_enter_mseal",
					   "sys_exit_mseal" };
	struct vmas v = { .n = 0 };
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[3];

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	a[0] = A + 8 * P, a[1] = 2 * P, a[2] = 0;
	enter(&r, "mseal", 10, PID, a, 3);
	leave(&r, "mseal", 11, PID, 0);
	a[0] = A + 6 * P, a[1] = 4 * P;
	enter(&r, "munmap", 20, PID, a, 2);
	leave(&r, "munmap", 21, PID, -EPERM);
	close_rec(&r);

	s = replay(&r, &w);
	assert_int_equal(w.n, 0);
	assert_true(mapped(s, A + 6 * P));
	assert_true(mapped(s, A + 8 * P));
	assert_int_equal(ms_aspace_for_each_vma(ms_session_aspace(s), PID, collect, &v), 0);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.e[0], A + 6 * P);
	assert_int_equal(v.s[1], A + 6 * P);
	assert_int_equal(v.e[1], A + 8 * P);
	assert_int_equal(v.e[2], A + 10 * P);
	assert_int_equal(v.e[3], A + 32 * P);
	ms_session_free(s);
}

/*
 * The main stack's bottom page made read-only, then writable again: the
 * kernel records the VMA each mprotect changed, and the second is the
 * whole stack again, named [stack]. That record is the mprotect's (one
 * VMA again), not the stack growing.
 */
static void stack_merged_in_mprotect(void **state)
{
	static const char *const tps[] = { "sys_enter_mprotect", "sys_exit_mprotect" };
	struct vmas v = { .n = 0 };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_named_map(&r, 1, PID, A, 8 * P, PROT_READ | PROT_WRITE, "[stack]");
	enter(&r, "mprotect", 10, PID, (const uint64_t[]){ A, P, PROT_READ }, 3);
	put_named_map(&r, 11, PID, A, P, PROT_READ, "//anon");
	leave(&r, "mprotect", 12, PID, 0);
	enter(&r, "mprotect", 20, PID, (const uint64_t[]){ A, P, PROT_READ | PROT_WRITE }, 3);
	put_named_map(&r, 21, PID, A, 8 * P, PROT_READ | PROT_WRITE, "[stack]");
	leave(&r, "mprotect", 22, PID, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.op[0], MS_OP_PROTECT);
	assert_int_equal(w.op[1], MS_OP_PROTECT);
	assert_int_equal(ms_aspace_for_each_vma(ms_session_aspace(s), PID, collect, &v), 0);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.s[0], A);
	assert_int_equal(v.e[0], A + 8 * P);
	ms_session_free(s);
}

/*
 * pkey_mprotect (key -1: none) is an mprotect: a protect change, and the
 * kernel's record of the VMA it changed is that call's, so the pages stay
 * the region they were (not a new map the kernel made).
 */
static void pkey_protect_is_a_protect(void **state)
{
	static const char *const tps[] = { "sys_enter_pkey_mprotect", "sys_exit_pkey_mprotect" };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 8 * P);
	enter(&r, "pkey_mprotect", 10, PID, (const uint64_t[]){ A + 2 * P, 2 * P, PROT_READ, (uint64_t)-1 }, 4);
	put_named_map(&r, 11, PID, A + 2 * P, 2 * P, PROT_READ, "//anon");
	leave(&r, "pkey_mprotect", 12, PID, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.op[0], MS_OP_PROTECT);
	assert_int_equal(w.start[0], A + 2 * P);
	assert_int_equal(ms_aspace_prot_at(ms_session_aspace(s), PID, A + 2 * P), PROT_READ);
	assert_ptr_equal(ms_aspace_lookup(ms_session_aspace(s), PID, A + 2 * P),
			 ms_aspace_lookup(ms_session_aspace(s), PID, A));
	ms_session_free(s);
}

/*
 * prctl(PR_SET_MEMORY_MERGE, 1) that succeeded: every private VMA is
 * mergeable, in place (one VMA still), so MADV_UNMERGEABLE of a page
 * splits it in three; one that failed changes nothing.
 */
static void merge_any_told(void **state)
{
	static const char *const tps[] = { "sys_enter_prctl", "sys_exit_prctl", "sys_enter_madvise",
					   "sys_exit_madvise" };
	struct ms_session *s;
	struct seen w;
	struct rec r;
	int ok;

	(void)state;
	for (ok = 0; ok < 2; ok++) {
		struct vmas v = { .n = 0 };

		open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
		put_map(&r, 1, A, 3 * P);
		enter(&r, "prctl", 10, PID, (const uint64_t[]){ 67, 1, 0, 0, 0 }, 5);
		leave(&r, "prctl", 11, PID, ok ? 0 : -EINVAL);
		enter(&r, "madvise", 20, PID, (const uint64_t[]){ A + P, P, MADV_UNMERGEABLE }, 3);
		leave(&r, "madvise", 21, PID, 0);
		close_rec(&r);
		s = replay(&r, &w);
		assert_int_equal(ms_aspace_for_each_vma(ms_session_aspace(s), PID, collect, &v), 0);
		assert_int_equal(v.n, ok ? 3 : 1);
		ms_session_free(s);
	}
}

/*
 * execve copies its arguments onto the new program's stack before the
 * exec, and the kernel records that stack's growth as maps of the caller:
 * they belong to the address space to come. Passed over where the execve
 * fails (the caller's maps as they were) and where it execs (the new
 * program's maps, after the exec, taken).
 */
static void exec_stack_of_the_next_program(void **state)
{
	static const char *const tps[] = { "sys_enter_execve", "sys_exit_execve", "sys_enter_munmap",
					   "sys_exit_munmap" };
	const uint64_t top = 0x7ffffffff000ULL, b = 0x20000000ULL, none[1] = { 0 };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "execve", 10, PID, none, 0);
	put_map(&r, 11, top - 2 * P, 2 * P);          /* past a page of arguments: grown */
	put_map(&r, 12, top - 3 * P, 3 * P);
	leave(&r, "execve", 13, PID, -8);               /* ENOEXEC: no program */
	put_map(&r, 14, A + 64 * P, P);                 /* the caller's own, after */
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, top - P));
	assert_false(mapped(s, top - 3 * P));
	assert_true(mapped(s, A));
	assert_true(mapped(s, A + 64 * P));
	ms_session_free(s);

	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "execve", 20, PID, none, 0);
	put_map(&r, 21, top - 2 * P, 2 * P);
	put_exec(&r, 22, PID);
	put_map(&r, 23, b, 4 * P);                      /* the new program's */
	leave(&r, "execve", 24, PID, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, top - P));
	assert_false(mapped(s, A));                     /* the exec took the old maps */
	assert_true(mapped(s, b));
	ms_session_free(s);

	/*
	 * From a thread other than the leader: the exec's record names the
	 * leader (the caller takes its tid), and the caller's own tid, given
	 * again later to a new thread, maps as any.
	 */
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "execve", 20, PID + 1, none, 0);
	put_map_by(&r, 21, PID + 1, top - 2 * P, 2 * P);
	put_exec(&r, 22, PID);
	put_map(&r, 23, b, 4 * P);
	leave(&r, "execve", 24, PID, 0);
	put_map_by(&r, 30, PID + 1, b + 64 * P, 2 * P);   /* a new thread with the tid again: its stack */
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, top - P));
	assert_true(mapped(s, b));
	assert_true(mapped(s, b + 64 * P));
	ms_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pairs_by_thread),
		cmocka_unit_test(lone_entries),
		cmocka_unit_test(failed_part_way),
		cmocka_unit_test(in_flight),
		cmocka_unit_test(in_flight_reach),
		cmocka_unit_test(refused_at_seal),
		cmocka_unit_test(exec_stack_of_the_next_program),
		cmocka_unit_test(populate_told),
		cmocka_unit_test(merge_any_told),
		cmocka_unit_test(stack_merged_in_mprotect),
		cmocka_unit_test(pkey_protect_is_a_protect),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
