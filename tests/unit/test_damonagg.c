/*
 * damon:damon_aggregated samples decoded into MS_EV_ACCESS (source DAMON),
 * on the synthetic recording of tests/tools/synth_rec.h: each region's
 * range, count and age, its interval from the event's attr, and the pid
 * mapscope record writes it under, so that the model finds the regions it
 * overlaps at that instant.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

#include "../tools/synth_rec.h"

struct seen {
	size_t n, hot, cold, other_pid, overlaps_region;
	uint64_t hot_accesses, cold_accesses, last_interval, last_max;
	uint32_t last_age;
};

/* What a charging analysis does with an access: find the region it overlaps, in the model, now. */
static int on_event(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct seen *v = ctx;
	const struct ms_region *r;

	if (ev->kind != MS_EV_ACCESS)
		return 0;
	assert_int_equal(ev->access.source, MS_ACCESS_DAMON);
	v->n++;
	v->last_interval = ev->access.interval_ns;
	v->last_max = ev->access.max_nr_accesses;
	r = ms_aspace_lookup(ms_session_aspace(s), ev->pid, ev->access.start);
	if (r && r->start <= ev->access.start && ev->access.end <= r->end)
		v->overlaps_region++;
	if (ev->pid != SR_PID) {
		v->other_pid += ev->pid == SR_PID2 && ev->access.nr_accesses == 5 &&
				ev->access.end == SR_HOT + SR_SIZE / 2;
		return 0;
	}
	if (ev->access.start == SR_HOT && ev->access.end == SR_HOT + SR_SIZE) {
		v->hot++;
		v->hot_accesses += ev->access.nr_accesses;
		v->last_age = ev->access.age;
	} else if (ev->access.start == SR_COLD && ev->access.end == SR_COLD + SR_SIZE) {
		v->cold++;
		v->cold_accesses += ev->access.nr_accesses;
	}
	return 0;
}

static void replay(int fd, struct seen *v)
{
	static const struct ms_analysis a = { .name = "damon-test", .event = on_event };
	char path[64];
	struct ms_session *s;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	s = ms_session_open(path, NULL);
	assert_non_null(s);
	assert_int_equal(ms_session_add(s, &a, v), 0);
	assert_int_equal(ms_session_run(s), 0);
	ms_session_free(s);
}

static void aggregates_become_accesses(void **state)
{
	int fd = memfd_create("damon", 0);
	struct seen v = { 0 };

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(sr_write_damon(fd, NULL), 0);
	replay(fd, &v);
	assert_int_equal(v.n, 3 * SR_INTERVALS);
	assert_int_equal(v.hot, SR_INTERVALS);
	assert_int_equal(v.cold, SR_INTERVALS);
	assert_int_equal(v.other_pid, SR_INTERVALS);      /* target 1, under its own pid */
	assert_int_equal(v.hot_accesses, 20 * SR_INTERVALS);
	assert_int_equal(v.cold_accesses, 0);
	assert_int_equal(v.last_age, SR_INTERVALS);
	/* The intervals ride in the attr: 100 ms aggregations of 5 ms checks, at most 20 hits. */
	assert_int_equal(v.last_interval, 100 * SR_MS);
	assert_int_equal(v.last_max, 20);
	/* Every aggregate lies in a region of the model at its time, in its own process. */
	assert_int_equal(v.overlaps_region, v.n);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aggregates_become_accesses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
