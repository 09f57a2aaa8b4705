/*
 * The process table: a leader that exits before its threads, an exec from
 * a thread, and processes that share one address space (clone(CLONE_VM),
 * vfork), each as the kernel keeps the mm alive, and which share it when
 * (ms_aspace_shares).
 */
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

#include "aspace/internal.h"

#include "aspace_events.h"

static struct ms_event task_ev(enum ms_event_kind k, uint32_t pid, uint32_t tid)
{
	struct ms_event e = ev(k);

	e.pid = pid;
	e.tid = tid;
	return e;
}

static void apply_ok(struct ms_aspace *as, const struct ms_event *e)
{
	assert_int_equal(ms_aspace_apply(as, e, NULL), 0);
}

static void fork_of(struct ms_aspace *as, uint32_t pid, uint32_t child_pid, uint32_t child_tid, bool share)
{
	struct ms_event f = task_ev(MS_EV_FORK, pid, pid);

	f.fork.child_pid = child_pid;
	f.fork.child_tid = child_tid;
	f.fork.share_vm = share;
	apply_ok(as, &f);
}

static void map_in(struct ms_aspace *as, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e)
{
	struct ms_event m = task_ev(MS_EV_MAP, pid, tid);

	m.map.start = m.map.vma_start = s;
	m.map.end = m.map.vma_end = e;
	m.map.prot = RW;
	m.map.flags = MAP_PRIVATE;
	m.map.name = "//anon";
	m.map.via = MS_VIA_MMAP;
	apply_ok(as, &m);
}

/* Applies the EXIT of pid:tid; returns whether the model said beforehand that it ends the process. */
static bool exit_of(struct ms_aspace *as, uint32_t pid, uint32_t tid)
{
	struct ms_event x = task_ev(MS_EV_EXIT, pid, tid);
	bool ends = ms_aspace_exit_ends(as, &x);

	apply_ok(as, &x);
	return ends;
}

static void leader_exits_first(void **state)
{
	struct ms_aspace *as = ms_aspace_new();

	map_in(as, PID, PID, 16 * P, 32 * P);
	fork_of(as, PID, PID, PID + 1, false);       /* a thread */
	assert_false(exit_of(as, PID, PID));         /* the leader goes, the thread runs on */
	assert_int_equal(vmas_of(as, PID).n, 1);
	map_in(as, PID, PID + 1, 64 * P, 65 * P);    /* and changes the maps */
	assert_int_equal(vmas_of(as, PID).n, 2);
	assert_true(exit_of(as, PID, PID + 1));      /* the last thread: the maps go */
	assert_int_equal(vmas_of(as, PID).n, 0);
	assert_false(ms_aspace_region(as, 0)->alive);
	ms_aspace_free(as);
}

/* Without a thread known alive, the leader's exit ends the process, as it always did. */
static void leader_alone(void **state)
{
	struct ms_aspace *as = ms_aspace_new();

	map_in(as, PID, PID, 16 * P, 32 * P);
	fork_of(as, PID, PID, PID + 1, false);
	assert_false(exit_of(as, PID, PID + 1));     /* the thread first */
	assert_true(exit_of(as, PID, PID));
	assert_int_equal(vmas_of(as, PID).n, 0);
	/* A thread seen by a change it made counts as alive too. */
	map_in(as, PID + 5, PID + 5, 16 * P, 32 * P);
	map_in(as, PID + 5, PID + 6, 40 * P, 41 * P);
	assert_false(exit_of(as, PID + 5, PID + 5));
	assert_int_equal(vmas_of(as, PID + 5).n, 2);
	/* Records without sample_id_all say tid 0: no thread. */
	map_in(as, PID + 7, 0, 16 * P, 32 * P);
	assert_true(exit_of(as, PID + 7, PID + 7));
	ms_aspace_free(as);
}

/* de_thread: the leader's EXIT, then the exec as PID:PID; the process goes on in the new image. */
static void exec_from_thread(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event x;

	map_in(as, PID, PID, 16 * P, 32 * P);
	fork_of(as, PID, PID, PID + 1, false);
	fork_of(as, PID, PID, PID + 2, false);
	assert_false(exit_of(as, PID, PID + 2));     /* killed by de_thread */
	assert_false(exit_of(as, PID, PID));         /* the old leader */
	assert_int_equal(vmas_of(as, PID).n, 1);
	x = task_ev(MS_EV_EXEC, PID, PID);
	x.comm.comm = "new";
	apply_ok(as, &x);
	assert_int_equal(vmas_of(as, PID).n, 0);
	map_in(as, PID, PID, 48 * P, 50 * P);
	assert_int_equal(vmas_of(as, PID).n, 1);
	/* One thread now: its exit ends the process. */
	assert_true(exit_of(as, PID, PID));
	assert_int_equal(vmas_of(as, PID).n, 0);
	ms_aspace_free(as);
}

static void clone_vm_shares(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const uint32_t child = PID + 10;

	map_in(as, PID, PID, 16 * P, 32 * P);
	fork_of(as, PID, child, child, false);       /* the FORK record: a copy */
	assert_false(ms_aspace_shares(as, PID, child));
	fork_of(as, PID, child, child, true);        /* task_newtask: CLONE_VM, so shared */
	assert_true(ms_aspace_shares(as, PID, child));
	assert_true(ms_aspace_shares(as, child, PID));
	assert_false(ms_aspace_shares(as, PID, child + 1));   /* no such process */
	map_in(as, child, child, 64 * P, 66 * P);
	assert_int_equal(vmas_of(as, PID).n, 2);     /* the child's map is the parent's */
	map_in(as, PID, PID, 80 * P, 81 * P);
	assert_int_equal(vmas_of(as, child).n, 3);
	assert_int_equal(region_at(as, child, 80 * P), region_at(as, PID, 80 * P));
	/* The copy made first never held a page: its regions ended with it. */
	assert_false(ms_aspace_region(as, 1)->alive);
	/* The parent exits: the child keeps the maps, the parent's pid has none. */
	assert_true(exit_of(as, PID, PID));
	assert_int_equal(vmas_of(as, PID).n, 0);
	assert_int_equal(vmas_of(as, child).n, 3);
	map_in(as, child, child, 90 * P, 91 * P);    /* made after the parent left: still a region */
	assert_int_not_equal(region_at(as, child, 90 * P), -1);
	assert_true(exit_of(as, child, child));
	assert_int_equal(vmas_of(as, child).n, 0);
	assert_false(ms_aspace_region(as, 0)->alive);
	ms_aspace_free(as);
}

/* vfork: the child runs in the parent's mm until its exec gives it one of its own. */
static void vfork_then_exec(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	const uint32_t child = PID + 10;
	struct ms_event x;

	map_in(as, PID, PID, 16 * P, 32 * P);
	fork_of(as, PID, child, child, false);
	fork_of(as, PID, child, child, true);
	map_in(as, child, child, 64 * P, 66 * P);
	x = task_ev(MS_EV_EXEC, child, child);
	x.comm.comm = "true";
	assert_true(ms_aspace_shares(as, PID, child));
	apply_ok(as, &x);
	assert_false(ms_aspace_shares(as, PID, child)); /* its own mm now */
	assert_int_equal(vmas_of(as, child).n, 0);
	assert_int_equal(vmas_of(as, PID).n, 2);     /* the parent keeps what the child mapped */
	assert_true(ms_aspace_region(as, (size_t)region_at(as, PID, 64 * P))->alive);
	map_in(as, child, child, 48 * P, 49 * P);
	assert_int_equal(vmas_of(as, PID).n, 2);
	assert_int_equal(vmas_of(as, child).n, 1);
	/* A new process at a pid that shared once starts from its parent's copy. */
	assert_true(exit_of(as, child, child));
	fork_of(as, PID, child, child, false);
	assert_int_equal(vmas_of(as, child).n, 2);
	map_in(as, child, child, 100 * P, 101 * P);
	assert_int_equal(vmas_of(as, PID).n, 2);
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leader_exits_first),
		cmocka_unit_test(leader_alone),
		cmocka_unit_test(exec_from_thread),
		cmocka_unit_test(clone_vm_shares),
		cmocka_unit_test(vfork_then_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
