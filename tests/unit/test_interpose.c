/*
 * Interposition on this very test program: while it runs, munmap, a
 * MAP_FIXED mmap, madvise, mremap, brk/sbrk and shmdt called through the
 * PLT come out of the ring as the changes they made; a raw syscall does
 * not (the blind spot); a second start is refused; after the stop nothing
 * more comes. A library loaded by dlopen afterwards is patched as well. A shm segment split by mprotect is found whole.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "watch/interpose.h"

#define PAGE 4096UL

static struct ms_evring ring;

static int start(void **state)
{
	(void)state;
	assert_int_equal(ms_evring_init(&ring, 64), 0);
	return ms_interpose_start(&ring);
}

static int stop(void **state)
{
	(void)state;
	ms_interpose_stop();
	ms_evring_release(&ring);
	return 0;
}

/* The one change queued since the last call: its op and released range. */
static void expect(enum ms_aspace_op op, uint64_t lo, uint64_t hi)
{
	struct ms_change c;
	uint64_t lost;

	assert_int_equal(ms_evring_get(&ring, &c, &lost), 1);
	assert_int_equal(lost, 0);
	assert_int_equal(c.op, op);
	assert_int_equal(c.release_start, lo);
	assert_int_equal(c.release_end, hi);
	assert_int_equal(c.pid, getpid());
	assert_int_equal(c.tid, gettid());
	assert_int_equal(ms_evring_get(&ring, &c, &lost), 0);
}

static void nothing_queued(void)
{
	struct ms_change c;
	uint64_t lost;

	assert_int_equal(ms_evring_get(&ring, &c, &lost), 0);
}

static char *map(size_t pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	nothing_queued();               /* a plain mmap releases nothing */
	return p;
}

static void releasing_calls(void **state)
{
	char *p = map(8), *q;
	uint64_t a = (uint64_t)p;

	(void)state;
	assert_int_equal(munmap(p + 7 * PAGE, 100), 0);          /* rounded up to the page */
	expect(MS_OP_UNMAP, a + 7 * PAGE, a + 8 * PAGE);
	assert_true(mmap(p, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p);
	expect(MS_OP_MAP, a, a + PAGE);
	assert_int_equal(madvise(p + PAGE, PAGE, MADV_DONTNEED), 0);
	expect(MS_OP_MADVISE, a + PAGE, a + 2 * PAGE);
	assert_int_equal(madvise(p + PAGE, PAGE, MADV_WILLNEED), 0);
	nothing_queued();
	q = mremap(p, 7 * PAGE, 3 * PAGE, 0);                     /* shrinks in place */
	assert_true(q == p);
	expect(MS_OP_REMAP, a + 3 * PAGE, a + 7 * PAGE);
	assert_int_equal(syscall(SYS_munmap, p, 3 * PAGE), 0);    /* the blind spot */
	nothing_queued();
}

static void break_and_shm(void **state)
{
	char *b0 = sbrk(0), *p;
	uint64_t lo, hi;
	int id;

	(void)state;
	assert_true(sbrk(8 * PAGE) == b0);
	assert_int_equal(ms_evring_gen(&ring) != 0, 1);
	{
		struct ms_change c;
		uint64_t lost;

		assert_int_equal(ms_evring_get(&ring, &c, &lost), 1);   /* growth: a brk, nothing released */
		assert_int_equal(c.op, MS_OP_BRK);
		assert_int_equal(c.release_end, 0);
	}
	assert_int_equal(brk(b0), 0);
	expect(MS_OP_BRK, ((uint64_t)b0 + PAGE - 1) & ~(PAGE - 1), ((uint64_t)b0 + 8 * PAGE + PAGE - 1) & ~(PAGE - 1));
	id = shmget(IPC_PRIVATE, 4 * PAGE, IPC_CREAT | 0600);
	assert_true(id >= 0);
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	assert_true(p != (void *)-1);
	assert_int_equal(mprotect(p + PAGE, PAGE, PROT_READ), 0);  /* three VMAs, one segment */
	assert_int_equal(ms_interpose_extent((uint64_t)p, &lo, &hi), 0);
	assert_int_equal(lo, (uint64_t)p);
	assert_int_equal(hi, (uint64_t)p + 4 * PAGE);
	assert_int_equal(shmdt(p), 0);
	expect(MS_OP_UNMAP, (uint64_t)p, (uint64_t)p + 4 * PAGE);
	assert_int_equal(ms_interpose_extent((uint64_t)p, &lo, &hi), -ENOENT);
}

static void one_at_a_time_and_stop(void **state)
{
	struct ms_evring other;
	char *p = map(1);

	(void)state;
	assert_int_equal(ms_evring_init(&other, 8), 0);
	assert_int_equal(ms_interpose_start(&other), -EBUSY);
	ms_evring_release(&other);
	ms_interpose_stop();
	assert_int_equal(munmap(p, PAGE), 0);
	nothing_queued();
	assert_int_equal(ms_interpose_start(&ring), 0);        /* and again */
	p = map(1);
	assert_int_equal(munmap(p, PAGE), 0);
	expect(MS_OP_UNMAP, (uint64_t)p, (uint64_t)p + PAGE);
}

static void dlopened_later(void **state)
{
	void *h = dlopen(UNMAPPER_SO, RTLD_NOW | RTLD_LOCAL);
	int (*unmap)(void *, size_t);
	char *p;

	(void)state;
	assert_non_null(h);
	unmap = (int (*)(void *, size_t))dlsym(h, "unmapper_munmap");
	assert_non_null(unmap);
	p = map(2);
	assert_int_equal(unmap(p, 2 * PAGE), 0);
	expect(MS_OP_UNMAP, (uint64_t)p, (uint64_t)p + 2 * PAGE);
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dlopened_later),
		cmocka_unit_test(releasing_calls),
		cmocka_unit_test(break_and_shm),
		cmocka_unit_test(one_at_a_time_and_stop),
	};

	return cmocka_run_group_tests(tests, start, stop);
}
