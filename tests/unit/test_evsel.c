/*
 * The stream's events (lib/stream/evsel.c), from an event list alone: which
 * is the data event, where ids and times lie, which event a record is
 * of, and the one fixed-layout data event the fast paths take.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perfdata/evlist.h"
#include "stream/internal.h"
#include "stream/stream.h"

static struct ms_evsel *add(struct ms_evlist *l, uint32_t type, uint64_t config, uint64_t sample_type,
			    uint64_t id)
{
	struct perf_event_attr a = {
		.type = type, .size = sizeof(a), .config = config, .sample_type = sample_type,
		.sample_id_all = 1,
	};
	struct ms_evsel *e = ms_evlist_add(l, &a, sizeof(a));

	assert_non_null(e);
	assert_int_equal(ms_evsel_add_id(l, e, id), 0);
	return e;
}

#define DATA (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

/* A sample of id at time t, as DATA lays it out: id, ip, pid/tid, time, addr. */
struct smp {
	struct perf_event_header h;
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
};

static void no_events_no_stream(void **state)
{
	struct ms_evlist l = { 0 };

	(void)state;
	errno = 0;
	assert_null(ms_stream_new(&l, NULL, 0, false));
	assert_int_equal(errno, EBADMSG);
}

/*
 * A page-fault data event among a clock with user registers (mapscope
 * record's stack pointer event, no data source): the fault event is the
 * data event and the fast one; a sample finds its event by its id.
 */
static void data_event_and_ids(void **state)
{
	struct ms_evlist l = { 0 };
	struct ms_stream *s;
	struct smp x = { { PERF_RECORD_SAMPLE, 0, sizeof(x) }, 7, 0x400000, 1, 2, 1234, 0x10000 };

	(void)state;
	add(&l, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, DATA | PERF_SAMPLE_REGS_USER, 5);
	add(&l, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, DATA, 7);
	l.v[0]->attr.sample_regs_user = 1ULL << 7;
	s = ms_stream_new(&l, NULL, 0, false);
	assert_non_null(s);
	assert_int_equal(s->nr_ev, 2);
	assert_int_equal(s->ev[0].kind, EK_OTHER);       /* a clock: its ADDR is always 0 */
	assert_int_equal(s->ev[1].kind, EK_DATA);
	assert_true(s->ev[1].fault);
	assert_int_equal(s->id_pos, 0);                  /* IDENTIFIER first in every sample */
	assert_int_equal(s->id_from_end, 8);
	assert_int_equal(s->fast_ev, 1);
	assert_true(s->multi);
	assert_int_equal(s->fast_size, sizeof(x));
	assert_int_equal(s->fast_time, offsetof(struct smp, time));
	assert_int_equal(stream_sample_evsel(s, &x.h), 1);
	assert_true(fast_sample(s, &x.h));
	assert_int_equal(record_time(s, &x.h), 1234);
	x.id = 5;
	assert_int_equal(stream_sample_evsel(s, &x.h), 0);
	assert_false(fast_sample(s, &x.h));
	x.id = 99;
	assert_int_equal(stream_sample_evsel(s, &x.h), -1);   /* no event has it */
	assert_false(ms_stream_has_syscalls(s));
	ms_stream_free(s);
	ms_evlist_release(&l);
}

/*
 * ID without IDENTIFIER: the id lies after IP, TID, TIME and ADDR in a
 * sample, and before STREAM_ID and CPU in another record's trailer, where
 * its time lies too.
 */
static void id_and_time_offsets_without_identifier(void **state)
{
	const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			   PERF_SAMPLE_ID | PERF_SAMPLE_CPU;
	struct ms_evlist l = { 0 };
	struct ms_stream *s;
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		/* trailer: tid, time, id, cpu */
		uint32_t tpid, ttid;
		uint64_t ttime, tid_, tcpu;
	} fork = { { PERF_RECORD_FORK, 0, sizeof(fork) }, 2, 1, 2, 1, 0, 2, 2, 5555, 11, 0 };

	(void)state;
	add(&l, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, t, 10);
	add(&l, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, t, 11);
	s = ms_stream_new(&l, NULL, 0, false);
	assert_non_null(s);
	assert_int_equal(s->id_pos, 32);
	assert_int_equal(s->id_from_end, 16);
	assert_int_equal(s->ev[1].time_off, 16);
	assert_int_equal(s->ev[1].time_from_end, 24);
	assert_int_equal(s->fast_size, 0);               /* two data events: told apart the slow way */
	assert_int_equal(stream_trailer_evsel(s, &fork.h), 1);
	assert_int_equal(record_time(s, &fork.h), 5555);
	ms_stream_free(s);
	ms_evlist_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_events_no_stream),
		cmocka_unit_test(data_event_and_ids),
		cmocka_unit_test(id_and_time_offsets_without_identifier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
