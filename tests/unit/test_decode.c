/*
 * Records -> events (lib/stream/decode.c), through a stream that copies
 * what is pushed into it, as the live rings bind it: samples decoded at
 * their offsets with the period they stand for, set aside at kernel
 * addresses and at address 0 where the event has no address (a page
 * fault's address 0 is a NULL pointer's access, kept); forks,
 * exits, exec and comm; lost records counted by process, however many;
 * a record larger than its type can be dropped as damage.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perfdata/evlist.h"
#include "stream/stream.h"

#define TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

struct smp {
	struct perf_event_header h;
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
};

/* sample_id_all's trailer for TYPE: tid, time, identifier. */
struct trailer {
	uint32_t pid, tid;
	uint64_t time, id;
};

struct task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
	struct trailer t;
};

struct comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char name[16];
	struct trailer t;
};

struct lost {
	struct perf_event_header h;
	uint64_t id, lost;
	struct trailer t;
};

struct got {
	struct ms_event ev[64];
	char comm[64][16];
	size_t n;
};

static int on_event(const struct ms_event *ev, void *ctx)
{
	struct got *g = ctx;

	assert_true(g->n < 64);
	g->ev[g->n] = *ev;
	if (ev->kind == MS_EV_COMM || ev->kind == MS_EV_EXEC)
		strncpy(g->comm[g->n], ev->comm.comm, 15);
	g->n++;
	return 0;
}

/* A stream of page faults, one sampled in 16 (or, with clock, perf -d's cpu-clock, which has no address). */
static struct ms_stream *stream_of_event(struct ms_evlist *l, bool clock)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
		.config = clock ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_PAGE_FAULTS,
		.sample_type = TYPE, .sample_id_all = 1, .sample_period = 16,
	};
	struct ms_stream *s;

	memset(l, 0, sizeof(*l));
	assert_int_equal(ms_evsel_add_id(l, ms_evlist_add(l, &a, sizeof(a)), 1), 0);
	s = ms_stream_new(l, NULL, 0, true);
	assert_non_null(s);
	return s;
}

static struct ms_stream *stream_of(struct ms_evlist *l)
{
	return stream_of_event(l, false);
}

static void push_sample(struct ms_stream *s, uint64_t time, uint64_t addr)
{
	struct smp x = { { PERF_RECORD_SAMPLE, 0, sizeof(x) }, 1, 0x401000, 10, 11, time, addr };

	assert_int_equal(ms_stream_push(s, &x.h), 0);
	memset(&x, 0xee, sizeof(x));                 /* the ring's bytes are written over */
}

/* Samples at their offsets; address 0 and kernel addresses set aside and counted. */
static void samples_decoded_and_set_aside(void **state)
{
	struct ms_stream_stats st;
	struct ms_evlist l;
	struct ms_stream *s = stream_of(&l);
	struct got g = { .n = 0 };

	(void)state;
	push_sample(s, 300, 0x7f0000001000);
	push_sample(s, 100, 0);
	push_sample(s, 200, 0xffffffff81000000);
	push_sample(s, 150, 0x10000);
	assert_int_equal(ms_stream_flush(s, UINT64_MAX, on_event, &g), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.ev[0].time, 100);            /* in time order; a fault at 0 is an access */
	assert_int_equal(g.ev[0].sample.addr, 0);
	assert_int_equal(g.ev[1].time, 150);
	assert_int_equal(g.ev[1].sample.addr, 0x10000);
	assert_int_equal(g.ev[1].sample.ip, 0x401000);
	assert_int_equal(g.ev[1].pid, 10);
	assert_int_equal(g.ev[1].tid, 11);
	assert_true(g.ev[1].sample.fault);
	assert_int_equal(g.ev[1].sample.period, 16);    /* -c 16: each stands for 16 faults */
	assert_int_equal(g.ev[2].sample.addr, 0x7f0000001000);
	ms_stream_stats(s, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.zero_addr, 0);
	assert_int_equal(st.kernel_addr, 1);
	assert_int_equal(st.first_time, 100);
	assert_int_equal(st.last_time, 300);
	ms_stream_free(s);
	ms_evlist_release(&l);

	/* perf -d's clock writes 0 for "no address": set aside. */
	s = stream_of_event(&l, true);
	g.n = 0;
	push_sample(s, 100, 0);
	push_sample(s, 150, 0x10000);
	assert_int_equal(ms_stream_flush(s, UINT64_MAX, on_event, &g), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.ev[0].sample.addr, 0x10000);
	ms_stream_stats(s, &st);
	assert_int_equal(st.zero_addr, 1);
	ms_stream_free(s);
	ms_evlist_release(&l);
}

/* FORK, EXIT, COMM and COMM with the exec flag, each with its fields; one too large dropped. */
static void task_records(void **state)
{
	struct ms_stream_stats st;
	struct ms_evlist l;
	struct ms_stream *s = stream_of(&l);
	struct task fork = { { PERF_RECORD_FORK, 0, sizeof(fork) }, 20, 10, 21, 10, 5, { 10, 10, 5, 1 } };
	struct task ex = { { PERF_RECORD_EXIT, 0, sizeof(ex) }, 20, 10, 21, 10, 9, { 20, 21, 9, 1 } };
	struct comm c = { { PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(c) }, 20, 21, "worker",
			  { 20, 21, 7, 1 } };
	unsigned char big[8 + 24 + 48 + 8] = { 0 };
	struct perf_event_header *bh = (void *)big;
	struct got g = { .n = 0 };

	(void)state;
	*bh = (struct perf_event_header){ PERF_RECORD_EXIT, 0, sizeof(big) };
	assert_int_equal(ms_stream_push(s, &ex.h), 0);
	assert_int_equal(ms_stream_push(s, &fork.h), 0);
	assert_int_equal(ms_stream_push(s, &c.h), 0);
	assert_int_equal(ms_stream_push(s, bh), 0);
	assert_int_equal(ms_stream_flush(s, UINT64_MAX, on_event, &g), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.ev[0].kind, MS_EV_FORK);
	assert_int_equal(g.ev[0].pid, 10);
	assert_int_equal(g.ev[0].fork.child_pid, 20);
	assert_int_equal(g.ev[0].fork.child_tid, 21);
	assert_int_equal(g.ev[1].kind, MS_EV_EXEC);
	assert_int_equal(g.ev[1].time, 7);
	assert_string_equal(g.comm[1], "worker");
	assert_int_equal(g.ev[2].kind, MS_EV_EXIT);
	assert_int_equal(g.ev[2].tid, 21);
	ms_stream_stats(s, &st);
	assert_int_equal(st.bad_records, 1);
	ms_stream_free(s);
	ms_evlist_release(&l);
}

/* LOST records counted in all and by process, past any fixed number of processes. */
static void lost_by_process(void **state)
{
	struct ms_stream_stats st;
	struct ms_stream_lost lp;
	struct ms_evlist l;
	struct ms_stream *s = stream_of(&l);
	struct lost x = { { PERF_RECORD_LOST, 0, sizeof(x) }, 1, 0, { 0 } };
	struct got g = { .n = 0 };
	uint32_t pid;

	const size_t *idx;
	size_t i;

	(void)state;
	ms_stream_note_lost_changes(s, true);
	for (pid = 1; pid <= 20; pid++) {
		x.lost = pid;
		x.t = (struct trailer){ pid, pid, 1000 + pid, 1 };
		assert_int_equal(ms_stream_push(s, &x.h), 0);
	}
	x.lost = 5;
	x.t = (struct trailer){ 3, 3, 2000, 1 };       /* process 3 again */
	assert_int_equal(ms_stream_push(s, &x.h), 0);
	assert_int_equal(ms_stream_flush(s, UINT64_MAX, on_event, &g), 0);
	/* Each entry a record made or changed, noted once a record: 0 to 19, then 2 again; then none. */
	assert_int_equal(ms_stream_lost_changes(s, &idx), 21);
	for (i = 0; i < 20; i++)
		assert_int_equal(idx[i], i);
	assert_int_equal(idx[20], 2);
	assert_int_equal(ms_stream_lost_changes(s, &idx), 0);
	assert_int_equal(g.n, 21);
	assert_int_equal(g.ev[0].kind, MS_EV_LOST);
	assert_int_equal(g.ev[0].lost.count, 1);
	ms_stream_stats(s, &st);
	assert_int_equal(st.lost, 210 + 5);
	assert_int_equal(st.lost_first, 1001);
	assert_int_equal(st.lost_last, 2000);
	assert_int_equal(st.nr_lost_pids, 20);
	assert_true(ms_stream_lost_pid(s, 2, &lp));
	assert_int_equal(lp.pid, 3);
	assert_int_equal(lp.count, 3 + 5);
	assert_int_equal(lp.first, 1003);
	assert_int_equal(lp.last, 2000);
	assert_true(ms_stream_lost_pid(s, 19, &lp));
	assert_int_equal(lp.pid, 20);
	assert_int_equal(lp.count, 20);
	assert_false(ms_stream_lost_pid(s, 20, &lp));
	ms_stream_free(s);
	ms_evlist_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_decoded_and_set_aside),
		cmocka_unit_test(task_records),
		cmocka_unit_test(lost_by_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
