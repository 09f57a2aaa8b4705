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

/*
 * Three events' ids, each event's ids found for it and nothing between
 * or beside them: by the table where the ids lie close (1000-1011, a
 * damaged file's id given twice taking the first event's, as the search
 * does), by the search for one that lies far away (as mapscope record's
 * own events' do), and with it the table for the rest.
 */
static void ids_by_table_and_by_search(void **state)
{
	struct smp x = { { PERF_RECORD_SAMPLE, 0, sizeof(x) }, 0, 0x400000, 1, 2, 1234, 0x10000 };
	struct ms_evlist l;
	struct ms_stream *s;
	uint64_t far, id;
	int k, i;

	(void)state;
	for (far = 0; far < 2; far++) {
		memset(&l, 0, sizeof(l));
		for (k = 0; k < 3; k++) {
			add(&l, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS + (uint64_t)k, DATA, 1000 + 4 * (uint64_t)k);
			for (i = 1; i < 4; i++)
				assert_int_equal(ms_evsel_add_id(&l, l.v[k], 1000 + 4 * (uint64_t)k + (uint64_t)i), 0);
		}
		assert_int_equal(ms_evsel_add_id(&l, l.v[2], 1001), 0);   /* event 0's too */
		if (far)
			assert_int_equal(ms_evsel_add_id(&l, l.v[1], 1ULL << 40), 0);
		s = ms_stream_new(&l, NULL, 0, false);
		assert_non_null(s);
		assert_non_null(s->id_table);
		assert_int_equal(s->id_base, 1000);
		assert_int_equal(s->id_span, 12);
		for (id = 990; id < 1030; id++) {
			x.id = id;
			assert_int_equal(stream_sample_evsel(s, &x.h), id >= 1000 && id < 1012 ? (int)(id - 1000) / 4 : -1);
		}
		x.id = 1ULL << 40;
		assert_int_equal(stream_sample_evsel(s, &x.h), far ? 1 : -1);
		x.id = (1ULL << 40) + 1;
		assert_int_equal(stream_sample_evsel(s, &x.h), -1);
		ms_stream_free(s);
		ms_evlist_release(&l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_events_no_stream),
		cmocka_unit_test(data_event_and_ids),
		cmocka_unit_test(id_and_time_offsets_without_identifier),
		cmocka_unit_test(ids_by_table_and_by_search),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
