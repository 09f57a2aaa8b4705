/*
 * The rings merged in time order, on rings laid out in memory as the
 * kernel lays them: records of two CPUs, one ring a little out of order
 * (an interrupt's record before the one it interrupted), one record that
 * wraps round the ring's end, and equal times on both.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/live_impl.h"
#include "kernel/ringmerge.h"

#define RING 256
#define ID_BITS (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/* A sample (IDENTIFIER IP TID TIME) or a COMM-sized record (a word, then TID TIME IDENTIFIER): 40 bytes. */
static void put(struct ring *r, uint64_t *head, bool sample, uint64_t tag, uint64_t time)
{
	uint64_t w[5] = { 0 };
	struct perf_event_header h = { sample ? PERF_RECORD_SAMPLE : PERF_RECORD_COMM, 0, sizeof(w) };
	size_t i;

	memcpy(&w[0], &h, sizeof(h));
	if (sample) {
		w[2] = tag;
		w[4] = time;
	} else {
		w[1] = tag;
		w[3] = time;
	}
	for (i = 0; i < sizeof(w); i++)
		r->data[(*head + i) & (RING - 1)] = ((unsigned char *)w)[i];
	*head += sizeof(w);
}

static uint64_t seen[16];
static size_t nr_seen;

static int note(const struct perf_event_header *rec, void *ctx)
{
	const uint64_t *w = (const void *)rec;

	(void)ctx;
	seen[nr_seen++] = rec->type == PERF_RECORD_SAMPLE ? w[2] : w[1];
	return 0;
}

static void drain_in_order(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .sample_type = ID_BITS, .sample_id_all = 1 };
	struct perf_event_mmap_page pg[2];
	unsigned char data[2][RING];
	static const uint64_t want[] = { 1, 5, 3, 2, 6, 7, 4 };
	struct ms_live *l = calloc(1, sizeof(*l));
	struct ring rings[2];
	uint64_t head;
	int c;

	(void)state;
	assert_non_null(l);
	assert_non_null(ms_evlist_add(&l->ev, &a, sizeof(a)));
	memset(pg, 0, sizeof(pg));
	for (c = 0; c < 2; c++)
		rings[c] = (struct ring){ .fd = 0, .cpu = c, .pg = &pg[c], .data = data[c], .size = RING };
	l->rings = rings;
	l->nr_cpus = 2;
	/* CPU 0 from byte 240: its first record wraps; the one of time 25 came after the one of 30. */
	head = pg[0].data_tail = 240;
	put(&rings[0], &head, true, 1, 10);
	put(&rings[0], &head, true, 2, 30);
	put(&rings[0], &head, false, 3, 25);
	put(&rings[0], &head, true, 4, 50);
	pg[0].data_head = head;
	head = 0;
	put(&rings[1], &head, false, 5, 20);
	put(&rings[1], &head, true, 6, 30);
	put(&rings[1], &head, true, 7, 40);
	pg[1].data_head = head;

	assert_int_equal(ms_live_drain_merged(l, note, NULL), 7);
	assert_int_equal(nr_seen, 7);
	assert_memory_equal(seen, want, sizeof(want));   /* at 30: CPU 0's first */
	assert_int_equal(pg[0].data_tail, pg[0].data_head);
	assert_int_equal(pg[1].data_tail, pg[1].data_head);
	nr_seen = 0;
	assert_int_equal(ms_live_drain_merged(l, note, NULL), 0);   /* nothing new */
	ms_ringmerge_free(l->merge);
	ms_evlist_release(&l->ev);
	free(l);
}

static void time_places(void **state)
{
	struct perf_event_attr a = { .sample_type = ID_BITS, .sample_id_all = 1 }, b = a;
	const struct perf_event_attr *both[2] = { &a, &b };
	uint16_t at, from_end;

	(void)state;
	assert_int_equal(ms_ringmerge_time_offsets(both, 2, &at, &from_end), 0);
	assert_int_equal(at, 32);
	assert_int_equal(from_end, 16);
	b.sample_type |= PERF_SAMPLE_CPU;          /* the trailers differ: no merge */
	assert_int_equal(ms_ringmerge_time_offsets(both, 2, &at, &from_end), -EINVAL);
	b.sample_type = ID_BITS & ~PERF_SAMPLE_TIME;
	assert_int_equal(ms_ringmerge_time_offsets(both, 2, &at, &from_end), -EINVAL);
}

/* Three runs, one empty, one out of order: stable, the lower run first at equal times. */
static void sort_runs(void **state)
{
	struct ms_ringmerge_ent v[6] = {
		{ 5, (void *)1 }, { 3, (void *)2 }, { 9, (void *)3 }, { 3, (void *)4 }, { 5, (void *)5 }, { 1, (void *)6 },
	}, out[6];
	const size_t start[4] = { 0, 3, 3, 6 }, want[6] = { 6, 2, 4, 1, 5, 3 };
	size_t heap[6], i;

	(void)state;
	ms_ringmerge_sort(v, start, 3, out, heap);
	for (i = 0; i < 6; i++)
		assert_int_equal((size_t)out[i].rec, want[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drain_in_order),
		cmocka_unit_test(time_places),
		cmocka_unit_test(sort_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
