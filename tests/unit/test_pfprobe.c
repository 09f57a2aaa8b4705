/*
 * A prefetch uprobe's samples at replay: the event is known by its group
 * (mapscope_PID) and its four fields; its address is base + idx * scale +
 * disp, a negative displacement included, with a prefetch's data source;
 * a record too short for its fields is not charged at all, and a
 * tracepoint of another group is left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stream/internal.h"

/* The uprobe's format as tracefs writes it: __probe_ip at 8, then base, idx, disp, scale. */
static bool find(const void *f, const char *field, uint16_t *off, uint16_t *size)
{
	static const struct { const char *name; uint16_t off, size; } t[] = {
		{ "base", 16, 8 }, { "idx", 24, 8 }, { "disp", 32, 8 }, { "scale", 40, 1 },
	};
	size_t i;

	(void)f;
	for (i = 0; i < 4; i++)
		if (!strcmp(t[i].name, field)) {
			*off = t[i].off;
			*size = t[i].size;
			return true;
		}
	return false;
}

static bool find_none(const void *f, const char *field, uint16_t *off, uint16_t *size)
{
	(void)f, (void)field, (void)off, (void)size;
	return false;
}

static void address_computed(void **state)
{
	struct evinfo ei = { 0 };
	unsigned char raw[44] = { 0 };
	uint64_t base = 0x2badf0010000ULL, idx = 0x10, disp = (uint64_t)-64;
	uint8_t scale = 8;
	struct ms_sample smp = { .raw = raw, .raw_size = sizeof(raw), .has_addr = true };

	(void)state;
	assert_true(stream_classify_prefetch(&ei, "mapscope_1234", find, NULL));
	assert_int_equal(ei.kind, EK_PREFETCH);
	memcpy(raw + 16, &base, 8);
	memcpy(raw + 24, &idx, 8);
	memcpy(raw + 32, &disp, 8);
	memcpy(raw + 40, &scale, 1);
	stream_prefetch_address(&ei, &smp);
	assert_true(smp.has_addr);
	assert_int_equal(smp.addr, base + 0x80 - 64);
	assert_int_equal(smp.data_src >> PERF_MEM_OP_SHIFT, PERF_MEM_OP_PFETCH);
	smp.raw_size = 40;                                  /* the scale cut off: damage */
	stream_prefetch_address(&ei, &smp);
	assert_false(smp.has_addr);
}

static void other_events_left_alone(void **state)
{
	struct evinfo ei = { 0 };

	(void)state;
	assert_false(stream_classify_prefetch(&ei, "probe_libc", find, NULL));
	assert_int_equal(ei.kind, EK_OTHER);
	assert_true(stream_classify_prefetch(&ei, "mapscope_1234", find_none, NULL));   /* ours, but not this format */
	assert_int_equal(ei.kind, EK_OTHER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(address_computed),
		cmocka_unit_test(other_events_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
