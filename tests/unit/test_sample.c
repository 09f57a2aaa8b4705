/*
 * Sample bodies and trailers decoded by their event's sample_type
 * (lib/stream/sample.c): every field where the kernel puts it, the user
 * stack pointer found among the registers, a record too short for its
 * fields refused, and the fixed offsets a layout without variable fields
 * has.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stream/sample.h"

#define TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | \
	      PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | \
	      PERF_SAMPLE_DATA_SRC)

/* A sample of TYPE, with 2 frames, 4 raw bytes and registers 0 and 7 (x86's SP) and 8. */
struct body {
	struct perf_event_header h;
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
	uint32_t cpu, res;
	uint64_t nr, chain[2];
	uint32_t raw_size;
	unsigned char raw[4];
	uint64_t abi, regs[3];
	uint64_t data_src;
};

static struct body sample(void)
{
	return (struct body){ { PERF_RECORD_SAMPLE, 0, sizeof(struct body) }, 9, 0x401000, 10, 11, 5000,
			      0x7f0000001000, 3, 0, 2, { 0x401000, 0x402000 }, 4, { 1, 2, 3, 4 },
			      PERF_SAMPLE_REGS_ABI_64, { 100, 0x7ffd0000, 200 }, 0x42 };
}

static void every_field_in_its_place(void **state)
{
	struct perf_event_attr a = { .sample_type = TYPE, .sample_regs_user = 1 | 1 << 7 | 1 << 8 };
	struct body b = sample();
	struct ms_sample s;

	(void)state;
	assert_int_equal(ms_sample_parse(&a, &b.h, &s), 0);
	assert_int_equal(s.id, 9);
	assert_true(s.has_id);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 10);
	assert_int_equal(s.tid, 11);
	assert_int_equal(s.time, 5000);
	assert_int_equal(s.addr, 0x7f0000001000);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.chain_len, 2);
	assert_int_equal(s.chain[1], 0x402000);
	assert_int_equal(s.raw_size, 4);
	assert_memory_equal(s.raw, b.raw, 4);
	assert_int_equal(s.regs_mask, a.sample_regs_user);
	assert_int_equal(s.data_src, 0x42);
#if defined(__x86_64__)
	assert_true(s.has_sp);                       /* register 7, the second sampled */
	assert_int_equal(s.sp, 0x7ffd0000);
	assert_int_equal(ms_sample_sp_index(a.sample_regs_user), 1);
#endif
}

/* Cut anywhere before its end, the record does not hold its fields. */
static void short_record_refused(void **state)
{
	struct perf_event_attr a = { .sample_type = TYPE, .sample_regs_user = 1 | 1 << 7 | 1 << 8 };
	struct body b = sample();
	struct ms_sample s;
	uint16_t size;

	(void)state;
	for (size = sizeof(b.h); size < sizeof(b); size += 4) {
		b.h.size = size;
		assert_int_equal(ms_sample_parse(&a, &b.h, &s), -EBADMSG);
	}
	b.h.size = sizeof(b);
	b.nr = 1000;                                 /* a chain longer than the record */
	assert_int_equal(ms_sample_parse(&a, &b.h, &s), -EBADMSG);
}

/* The trailer of another record: TID, TIME, CPU, IDENTIFIER from its end. */
static void trailer_fields(void **state)
{
	struct perf_event_attr a = { .sample_type = TYPE, .sample_id_all = 1 };
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		uint32_t tpid, ttid;
		uint64_t ttime;
		uint32_t cpu, res;
		uint64_t id;
	} r = { { PERF_RECORD_EXIT, 0, sizeof(r) }, 1, 1, 1, 1, 0, 20, 21, 777, 2, 0, 9 };
	struct ms_sample s;

	(void)state;
	assert_int_equal(ms_sample_parse_id(&a, &r.h, &s), 0);
	assert_int_equal(s.pid, 20);
	assert_int_equal(s.tid, 21);
	assert_int_equal(s.time, 777);
	assert_int_equal(s.cpu, 2);
	assert_int_equal(s.id, 9);
}

/* A layout with only fixed-size fields has offsets; one with a chain has none. */
static void fixed_layout_offsets(void **state)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC,
	};
	struct ms_sample_layout l;

	(void)state;
	ms_sample_layout_of(&a, &l);
	assert_true(l.fixed);
	assert_int_equal(l.size, 8 + 6 * 8);
	assert_int_equal(l.ip, 16);
	assert_int_equal(l.tid, 24);
	assert_int_equal(l.time, 32);
	assert_int_equal(l.addr, 40);
	assert_int_equal(l.data_src, 48);
	assert_int_equal(l.cpu, -1);
	assert_int_equal(l.sp, -1);
	a.sample_type |= PERF_SAMPLE_CALLCHAIN;
	ms_sample_layout_of(&a, &l);
	assert_false(l.fixed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_in_its_place),
		cmocka_unit_test(short_record_refused),
		cmocka_unit_test(trailer_fields),
		cmocka_unit_test(fixed_layout_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
