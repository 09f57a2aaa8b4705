/* /proc/PID/maps parsing and the MMAP2/COMM records built from it. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "kernel/procsynth.h"

static void parses_file_mapping(void **state)
{
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line("55a01bcb1000-55a01bcb5000 r-xp 00002000 fe:00 248139"
					    "                    /usr/bin/true\n", &e), 0);
	assert_int_equal(e.start, 0x55a01bcb1000ULL);
	assert_int_equal(e.end, 0x55a01bcb5000ULL);
	assert_int_equal(e.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(e.flags, MAP_PRIVATE);
	assert_int_equal(e.pgoff, 0x2000);
	assert_int_equal(e.maj, 0xfe);
	assert_int_equal(e.min, 0);
	assert_int_equal(e.ino, 248139);
	assert_string_equal(e.name, "/usr/bin/true");
}

static void parses_anon_shared_and_odd_names(void **state)
{
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line("7f00-8000 ---p 00000000 00:00 0 \n", &e), 0);
	assert_int_equal(e.prot, 0);
	assert_string_equal(e.name, "");
	assert_int_equal(ms_maps_parse_line("7f000-80000 rw-s 00000000 00:01 7 /SYSV00000000 (deleted)\n", &e), 0);
	assert_int_equal(e.flags, MAP_SHARED);
	assert_int_equal(e.prot, PROT_READ | PROT_WRITE);
	assert_string_equal(e.name, "/SYSV00000000 (deleted)");
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p 0 08:01 12 /a dir/with spaces", &e), 0);
	assert_string_equal(e.name, "/a dir/with spaces");
}

static void rejects_garbage(void **state)
{
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line("", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("zz-1000 r--p 0 0:0 0", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("2000-1000 r--p 0 0:0 0", &e), -EINVAL);  /* end < start */
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p 0 08 12 x", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p 0 08:01 x", &e), -EINVAL);
}

static void builds_mmap2_record(void **state)
{
	struct ms_sample_id sid = { .pid = 10, .tid = 11, .time = 123, .id = 7, .identifier = 7 };
	struct ms_maps_entry e;
	struct perf_event_header *h;
	struct ms_buf b;
	const uint64_t *u;
	const uint32_t *w;

	ms_buf_init(&b);
	assert_int_equal(ms_maps_parse_line("7f0000001000-7f0000003000 rw-p 00000000 00:00 0", &e), 0);
	ms_synth_mmap2(&b, &e, &sid);
	assert_int_equal(ms_buf_error(&b), 0);
	h = (struct perf_event_header *)b.data;
	assert_int_equal(h->type, PERF_RECORD_MMAP2);
	assert_int_equal(h->size, b.len);
	assert_int_equal(h->size % 8, 0);
	assert_true(h->misc & PERF_RECORD_MISC_MMAP_DATA);    /* not executable */
	w = (const uint32_t *)(h + 1);
	assert_int_equal(w[0], 10);
	assert_int_equal(w[1], 11);
	u = (const uint64_t *)(w + 2);
	assert_int_equal(u[0], 0x7f0000001000ULL);             /* addr */
	assert_int_equal(u[1], 0x2000);                         /* len */
	assert_string_equal((const char *)(b.data + 72), "//anon");  /* after prot, flags */
	/* The sample_id trailer ends the record. */
	assert_memory_equal(b.data + b.len - sizeof(sid), &sid, sizeof(sid));
	ms_buf_release(&b);
}

static void builds_comm_record(void **state)
{
	struct ms_sample_id sid = { .pid = 3, .tid = 4 };
	struct perf_event_header *h;
	struct ms_buf b;

	ms_buf_init(&b);
	ms_synth_comm(&b, "worker", &sid);
	h = (struct perf_event_header *)b.data;
	assert_int_equal(h->type, PERF_RECORD_COMM);
	assert_int_equal(h->size, 8 + 8 + 8 + sizeof(sid));     /* "worker\0" padded to 8 */
	assert_string_equal((const char *)(b.data + 16), "worker");
	ms_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_file_mapping),
		cmocka_unit_test(parses_anon_shared_and_odd_names),
		cmocka_unit_test(rejects_garbage),
		cmocka_unit_test(builds_mmap2_record),
		cmocka_unit_test(builds_comm_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
