/*
 * The self modes' queue: changes come out in the order they went in, a
 * full ring refuses and counts the loss, the generation moves with every
 * put and refusal, and four producer threads racing one consumer lose or
 * reorder nothing of any one thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "watch/evring.h"

#define PRODUCERS 4
#define PER_THREAD 20000

static struct ms_change change(uint32_t tid, uint64_t start)
{
	return (struct ms_change){ .op = MS_OP_UNMAP, .tid = tid, .start = start, .end = start + 4096, .name = "" };
}

static void in_order_and_full(void **state)
{
	struct ms_evring r;
	struct ms_change c, in;
	uint64_t lost, g;
	int i;

	(void)state;
	assert_int_equal(ms_evring_init(&r, 6), -EINVAL);
	assert_int_equal(ms_evring_init(&r, 8), 0);
	assert_int_equal(ms_evring_get(&r, &c, &lost), 0);
	assert_int_equal(lost, 0);
	for (i = 0; i < 8; i++) {
		g = ms_evring_gen(&r);
		in = change(1, (uint64_t)i << 12);
		assert_int_equal(ms_evring_put(&r, &in), 0);
		assert_true(ms_evring_gen(&r) != g);
	}
	g = ms_evring_gen(&r);
	assert_int_equal(ms_evring_put(&r, &in), -ENOSPC);
	assert_true(ms_evring_gen(&r) != g);     /* a loss moves the generation too */
	for (i = 0; i < 8; i++) {
		assert_int_equal(ms_evring_get(&r, &c, &lost), 1);
		assert_int_equal(lost, i == 0 ? 1 : 0);
		assert_int_equal(c.start, (uint64_t)i << 12);
	}
	assert_int_equal(ms_evring_get(&r, &c, &lost), 0);
	in = change(1, 99);
	assert_int_equal(ms_evring_put(&r, &in), 0);  /* room again after the wrap */
	assert_int_equal(ms_evring_get(&r, &c, &lost), 1);
	assert_int_equal(c.start, 99);
	ms_evring_release(&r);
}

/* A producer between taking its slot and writing it: writes slot 0 after a while. */
static void *late_writer(void *arg)
{
	struct ms_evring *r = arg;

	usleep(20000);
	r->slots[0].c = change(7, 0x7000);
	__atomic_store_n(&r->slots[0].seq, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&r->gen, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A slot taken and not yet written, and a later one published (the
 * userfaultfd reader took its slot, the unmapping thread's interposed
 * munmap published after it): a reader who saw the later one's generation
 * gets the earlier change first, waited for, not nothing.
 */
static void taken_not_yet_written(void **state)
{
	struct ms_evring r;
	struct ms_change c, in = change(8, 0x8000);
	pthread_t t;
	uint64_t lost;

	(void)state;
	assert_int_equal(ms_evring_init(&r, 8), 0);
	__atomic_store_n(&r.reserved, 1, __ATOMIC_RELEASE);   /* slot 0 taken */
	assert_int_equal(ms_evring_put(&r, &in), 0);         /* slot 1 out, the generation moved */
	assert_int_equal(pthread_create(&t, NULL, late_writer, &r), 0);
	assert_int_equal(ms_evring_get(&r, &c, &lost), 1);
	assert_int_equal(c.start, 0x7000);
	assert_int_equal(ms_evring_get(&r, &c, &lost), 1);
	assert_int_equal(c.start, 0x8000);
	assert_int_equal(ms_evring_get(&r, &c, &lost), 0);
	pthread_join(t, NULL);
	ms_evring_release(&r);
}

struct producer {
	pthread_t t;
	struct ms_evring *r;
	uint32_t id;
	uint64_t refused;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct ms_change c;
	uint64_t i;

	for (i = 0; i < PER_THREAD; i++) {
		c = change(p->id, i);
		p->refused += ms_evring_put(p->r, &c) != 0;
	}
	return NULL;
}

static void racing_producers(void **state)
{
	struct producer p[PRODUCERS];
	struct ms_evring r;
	struct ms_change c;
	uint64_t next[PRODUCERS] = { 0 }, got = 0, lost_total = 0, refused = 0, lost;
	int i, done = 0;

	(void)state;
	assert_int_equal(ms_evring_init(&r, 256), 0);
	for (i = 0; i < PRODUCERS; i++) {
		p[i] = (struct producer){ .r = &r, .id = (uint32_t)i };
		assert_int_equal(pthread_create(&p[i].t, NULL, produce, &p[i]), 0);
	}
	while (done < 2) {
		int n = ms_evring_get(&r, &c, &lost);

		lost_total += lost;
		if (n) {
			assert_true(c.tid < PRODUCERS);
			assert_true(c.start >= next[c.tid]);   /* a thread's changes keep their order */
			next[c.tid] = c.start + 1;
			got++;
		} else if (got + lost_total == (uint64_t)PRODUCERS * PER_THREAD) {
			done++;
		}
	}
	for (i = 0; i < PRODUCERS; i++) {
		pthread_join(p[i].t, NULL);
		refused += p[i].refused;
	}
	assert_int_equal(lost_total, refused);
	assert_int_equal(got + refused, (uint64_t)PRODUCERS * PER_THREAD);
	ms_evring_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_and_full),
		cmocka_unit_test(taken_not_yet_written),
		cmocka_unit_test(racing_producers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
