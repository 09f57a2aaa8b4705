/*
 * Whose VMA tree a write is in (lib/stream/mmlock.c): a process's mm is
 * learnt from the write locks it takes in its own address-space calls
 * (not an ioctl's, not an exec's before its exec, not a read lock nor a
 * failed try), and a fork's child's from the lock its parent nested in
 * its own; a write under another process's mm goes to that process, or
 * waits until a process is seen to own the mm and then goes to it (or is
 * dropped where the mm is seen made anew); one under the writer's own mm,
 * under a lock let go, under a fork's nested lock, after lost records, or
 * where neither mm is known, stays the writer's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/internal.h"

#define P 4096ULL
#define MM_A 0xffff888100000000ULL
#define MM_B 0xffff888100004000ULL
#define MM_C 0xffff888100008000ULL

static struct ms_event got[8];
static size_t nr_got;
static uint64_t now;                 /* each record's time: one after the one before */

static int keep(const struct ms_event *ev, void *ctx)
{
	(void)ctx;
	if (nr_got < 8)
		got[nr_got] = *ev;
	nr_got++;
	return 0;
}

/* mmap_lock_acquire_returned's fields (mm, write, success) and mmap_lock_released's (mm, write). */
static const struct evinfo acquire = { .kind = EK_MMLOCK, .nr_fields = 3, .off = { 0, 8, 9 }, .size = { 8, 1, 1 } };
static const struct evinfo release = { .kind = EK_MMLOCK, .nr_fields = 2, .off = { 0, 8 }, .size = { 8, 1 } };

static void lock_event(struct ms_stream *s, const struct evinfo *ei, uint32_t pid, uint32_t tid, uint64_t mm,
		       bool write, bool success)
{
	unsigned char raw[16] = { 0 };
	struct ms_sample smp = { .pid = pid, .tid = tid, .time = ++now, .raw = raw, .raw_size = sizeof(raw) };

	memcpy(raw, &mm, 8);
	raw[8] = write;
	raw[9] = success;
	assert_int_equal(stream_on_mmlock(s, ei, &smp), 0);
}

/* Thread tid of pid, in a call sc (-1: none), takes mm's write lock and lets it go. */
static void own_call(struct ms_stream *s, uint32_t pid, uint32_t tid, int sc, uint64_t mm)
{
	struct thread *t = stream_thread_get(s, tid);

	assert_non_null(t);
	t->sc = sc;
	lock_event(s, &acquire, pid, tid, mm, true, true);
	lock_event(s, &release, pid, tid, mm, true, false);
	t->sc = -1;
}

/* Where thread tid's write of [start, end) goes: 0 its own process's, 1 elsewhere. */
static int tree_write(struct ms_stream *s, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end)
{
	struct ms_sample smp = { .pid = pid, .tid = tid, .time = ++now };

	return stream_tree_owner(s, stream_thread_get(s, tid), &smp, start, end);
}

static void setup(struct ms_stream *s)
{
	memset(s, 0, sizeof(*s));
	ms_u32map_init(&s->threads);
	ms_u32map_init(&s->brks);
	ms_u32map_init(&s->mms);
	s->fn = keep;
	nr_got = 0;
}

static void assert_vma(size_t i, uint32_t pid, uint64_t start, uint64_t end)
{
	assert_true(i < nr_got);
	assert_int_equal(got[i].kind, MS_EV_VMA);
	assert_int_equal(got[i].pid, pid);
	assert_int_equal(got[i].tid, pid);
	assert_int_equal(got[i].vma.start, start);
	assert_int_equal(got[i].vma.end, end);
}

static void goes_to_the_mms_process(void **state)
{
	struct ms_stream s;

	(void)state;
	setup(&s);
	own_call(&s, 1, 1, SC_MADVISE, MM_A);
	own_call(&s, 2, 2, SC_MMAP, MM_B);
	assert_int_equal(nr_got, 0);
	/* pid 1's thread 3, in no followed call (a close), writes under pid 2's mm: pid 2's change. */
	lock_event(&s, &acquire, 1, 3, MM_B, true, true);
	assert_int_equal(tree_write(&s, 1, 3, 10 * P, 20 * P), 1);
	assert_int_equal(nr_got, 1);
	assert_vma(0, 2, 10 * P, 20 * P);
	/* A lock of another mm let go leaves it held; its own let go, a write is the writer's again. */
	lock_event(&s, &release, 1, 3, MM_A, true, false);
	assert_int_equal(tree_write(&s, 1, 3, 10 * P, 20 * P), 1);
	lock_event(&s, &release, 1, 3, MM_B, true, false);
	assert_int_equal(tree_write(&s, 1, 3, 10 * P, 20 * P), 0);
	/* Under its own mm's lock: its own. */
	lock_event(&s, &acquire, 1, 3, MM_A, true, true);
	assert_int_equal(tree_write(&s, 1, 3, 30 * P, 40 * P), 0);
	assert_int_equal(nr_got, 2);
	stream_free_threads(&s);
}

static void waits_for_the_mms_owner(void **state)
{
	struct ms_stream s;
	uint64_t written;

	(void)state;
	setup(&s);
	own_call(&s, 1, 1, SC_MPROTECT, MM_A);
	lock_event(&s, &acquire, 1, 1, MM_C, true, true);        /* an mm nobody is seen to own yet */
	assert_int_equal(tree_write(&s, 1, 1, 10 * P, 20 * P), 1);
	assert_int_equal(tree_write(&s, 1, 1, 20 * P, 30 * P), 1);
	written = now;
	assert_int_equal(nr_got, 0);
	assert_int_equal(s.nr_foreign, 2);
	own_call(&s, 4, 4, SC_MUNMAP, MM_B);                     /* another mm: nothing goes */
	assert_int_equal(nr_got, 0);
	own_call(&s, 5, 6, SC_MADVISE, MM_C);                    /* pid 5 owns it: both go there, in order */
	assert_int_equal(nr_got, 2);
	assert_vma(0, 5, 10 * P, 20 * P);
	assert_vma(1, 5, 20 * P, 30 * P);
	assert_true(got[0].time > written);                      /* told when known, never before */
	assert_int_equal(s.nr_foreign, 0);
	stream_free_threads(&s);
}

static void what_does_not_teach(void **state)
{
	struct ms_stream s;
	struct thread *t;

	(void)state;
	setup(&s);
	/* Neither mm known: the writer's own, as in a file without the locks. */
	lock_event(&s, &acquire, 7, 7, MM_A, true, true);
	assert_int_equal(tree_write(&s, 7, 7, 10 * P, 20 * P), 0);
	/* Outside a call, an ioctl's (a uffd of another's), an exec's before its exec: none learnt. */
	own_call(&s, 7, 7, -1, MM_A);
	own_call(&s, 7, 7, SC_IOCTL, MM_A);
	t = stream_thread_get(&s, 7);
	t->in_exec = true;
	own_call(&s, 7, 7, SC_EXECVE, MM_A);
	t->in_exec = false;
	assert_null(ms_u32map_get(&s.mms, 7));
	/* A read lock, a failed try: nothing held, nothing learnt. */
	t->sc = SC_MMAP;
	lock_event(&s, &acquire, 7, 7, MM_B, false, true);
	lock_event(&s, &acquire, 7, 7, MM_B, true, false);
	t->sc = -1;
	assert_null(ms_u32map_get(&s.mms, 7));
	assert_int_equal(t->locked_mm, 0);
	/* Learnt, then its exec or exit forgets it: pid 8's write under it waits again. */
	own_call(&s, 7, 7, SC_MMAP, MM_A);
	assert_non_null(ms_u32map_get(&s.mms, 7));
	stream_mm_forget(&s, 7);
	own_call(&s, 8, 8, SC_MMAP, MM_B);
	lock_event(&s, &acquire, 8, 8, MM_A, true, true);
	assert_int_equal(tree_write(&s, 8, 8, 10 * P, 20 * P), 1);   /* waits: MM_A's owner unknown again */
	assert_int_equal(nr_got, 0);
	stream_free_threads(&s);
}

static void forks_and_losses(void **state)
{
	struct ms_stream s;

	(void)state;
	setup(&s);
	own_call(&s, 1, 1, SC_MMAP, MM_A);
	/* pid 2 (thread 2) writes under MM_C, whose owner is not known: it waits. */
	own_call(&s, 2, 2, SC_MMAP, MM_B);
	lock_event(&s, &acquire, 2, 2, MM_C, true, true);
	assert_int_equal(tree_write(&s, 2, 2, 50 * P, 60 * P), 1);
	lock_event(&s, &release, 2, 2, MM_C, true, false);
	assert_int_equal(s.nr_foreign, 1);
	/* pid 1 forks: its own lock, the child's nested in it; the copies stay pid 1's. */
	lock_event(&s, &acquire, 1, 1, MM_A, true, true);
	lock_event(&s, &acquire, 1, 1, MM_C, true, true);
	assert_int_equal(s.nr_foreign, 0);                       /* MM_C is new: what waited was a freed one's */
	assert_int_equal(tree_write(&s, 1, 1, 10 * P, 20 * P), 0);
	lock_event(&s, &release, 1, 1, MM_C, true, false);
	assert_int_equal(stream_thread_get(&s, 1)->locked_mm, MM_A);
	lock_event(&s, &release, 1, 1, MM_A, true, false);
	assert_int_equal(stream_thread_get(&s, 1)->locked_mm, 0);
	stream_mm_forked(&s, 1, 1, 9);
	assert_int_equal((uint64_t)(uintptr_t)ms_u32map_get(&s.mms, 9), MM_C);
	assert_int_equal(nr_got, 0);
	/* Now pid 1's thread closes the child's uffd: the write is pid 9's. */
	lock_event(&s, &acquire, 1, 3, MM_C, true, true);
	assert_int_equal(tree_write(&s, 1, 3, 10 * P, 20 * P), 1);
	assert_vma(0, 9, 10 * P, 20 * P);
	/* Records lost (its release among them, maybe): no lock is taken as held. */
	stream_mm_lost(&s);
	assert_int_equal(tree_write(&s, 1, 3, 10 * P, 20 * P), 0);
	/* A process that takes MM_C in its own call owns it alone: pid 9 was left for dead. */
	own_call(&s, 12, 12, SC_BRK, MM_C);
	assert_null(ms_u32map_get(&s.mms, 9));
	assert_int_equal((uint64_t)(uintptr_t)ms_u32map_get(&s.mms, 12), MM_C);
	stream_free_threads(&s);
}

static void downgrades_and_thread_clones(void **state)
{
	struct ms_stream s;

	(void)state;
	setup(&s);
	own_call(&s, 1, 1, SC_MMAP, MM_A);
	own_call(&s, 5, 5, SC_MMAP, MM_C);
	/* A fault grows pid 1's stack: its lock, a write, a downgrade (no write lock let go is seen). */
	lock_event(&s, &acquire, 1, 1, MM_A, true, true);
	assert_int_equal(tree_write(&s, 1, 1, 90 * P, 100 * P), 0);
	/* Then it closes pid 5's uffd: not a fork's nested lock, so the write is pid 5's. */
	lock_event(&s, &acquire, 1, 1, MM_C, true, true);
	assert_int_equal(stream_thread_get(&s, 1)->outer_mm, 0);
	assert_int_equal(tree_write(&s, 1, 1, 10 * P, 20 * P), 1);
	assert_int_equal(nr_got, 1);
	assert_vma(0, 5, 10 * P, 20 * P);
	assert_int_equal((uint64_t)(uintptr_t)ms_u32map_get(&s.mms, 5), MM_C);
	/* A nested lock whose fork then failed: the next lock forgets it, and a thread clone learns nothing. */
	lock_event(&s, &release, 1, 1, MM_C, true, false);
	lock_event(&s, &acquire, 1, 1, MM_A, true, true);
	lock_event(&s, &acquire, 1, 1, MM_B, true, true);
	assert_int_equal(stream_thread_get(&s, 1)->new_mm, MM_B);
	lock_event(&s, &release, 1, 1, MM_B, true, false);
	lock_event(&s, &release, 1, 1, MM_A, true, false);
	lock_event(&s, &acquire, 1, 1, MM_A, true, true);
	assert_int_equal(stream_thread_get(&s, 1)->new_mm, 0);
	lock_event(&s, &acquire, 1, 1, MM_B, true, true);        /* nested again, then a thread is made */
	stream_mm_forked(&s, 1, 1, 1);
	assert_int_equal((uint64_t)(uintptr_t)ms_u32map_get(&s.mms, 1), MM_A);
	assert_int_equal(stream_thread_get(&s, 1)->new_mm, 0);
	stream_free_threads(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(goes_to_the_mms_process),
		cmocka_unit_test(waits_for_the_mms_owner),
		cmocka_unit_test(what_does_not_teach),
		cmocka_unit_test(forks_and_losses),
		cmocka_unit_test(downgrades_and_thread_clones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
