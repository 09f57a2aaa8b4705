/*
 * The tracepoint formats of a recording's TRACING_DATA, read by the stream
 * itself: each tracepoint event is classified by the format with its id,
 * its fields found by their exact names (arrays and __data_loc fields
 * declared before them in the way), and damage keeps what came before it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/internal.h"
#include "util/buf.h"

#define COMMON "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	       "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* mremap's entry, with an array, a __data_loc string and a near-miss name before the arguments. */
static const char enter_mremap[] =
	"name: sys_enter_mremap\nID: 410\nformat:\n" COMMON
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:0;\n"
	"\tfield:__data_loc char[] filename;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long addr_hi;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long new_addr;\toffset:80;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long addr;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long  old_len ;\toffset:48;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long new_len;\toffset:56;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long flags;\toffset:64;\tsize:8;\tsigned:0;\n"
	"\nprint fmt: \"addr: 0x%08lx\", ((unsigned long)(REC->addr)) % 0\n";
static const char exit_mremap[] =
	"name: sys_exit_mremap\nID: 411\nformat:\n" COMMON
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n";
/* No offset for its only argument: not taken. */
static const char enter_brk[] =
	"name: sys_enter_brk\nID: 420\nformat:\n" COMMON
	"\tfield:unsigned long brk;\tsize:8;\tsigned:0;\n";
static const char enter_open[] =
	"name: sys_enter_open\nID: 430\nformat:\n" COMMON
	"\tfield:const char * filename;\toffset:16;\tsize:8;\tsigned:0;\n";
static const char ma_write[] =
	"name: ma_write\nID: 500\nformat:\n" COMMON
	"\tfield:const char * fn;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long index[1];\toffset:16;\tsize:8;\tsigned:0;\n"   /* an array: named index */
	"\tfield:unsigned long last;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:void * val;\toffset:40;\tsize:8;\tsigned:0;\n";

#define put ms_buf_append
#define put_u32 ms_buf_u32
#define put_u64 ms_buf_u64

/* A blob in perf's trace-event-info layout: systems and their formats. */
static void blob(struct ms_buf *b, const char *const *sys, const char *const *const *fmts, size_t nsys)
{
	static const char head[] = "\027\010\104tracing0.6";
	size_t i, j, n;

	put(b, head, sizeof(head));                     /* with the version's NUL */
	put(b, "\0\010\0\020\0\0", 6);                  /* little-endian, 8-byte longs, 4 KiB pages */
	put(b, "header_page", 12);
	put_u64(b, 3);
	put(b, "hp\n", 3);
	put(b, "header_event", 13);
	put_u64(b, 3);
	put(b, "he\n", 3);
	put_u32(b, 0);                                  /* no ftrace formats */
	put_u32(b, (uint32_t)nsys);
	for (i = 0; i < nsys; i++) {
		put(b, sys[i], strlen(sys[i]) + 1);
		for (n = 0; fmts[i][n]; n++)
			;
		put_u32(b, (uint32_t)n);
		for (j = 0; j < n; j++) {
			put_u64(b, strlen(fmts[i][j]));
			put(b, fmts[i][j], strlen(fmts[i][j]));   /* no NUL: the size bounds it */
		}
	}
	assert_int_equal(ms_buf_error(b), 0);
}

struct fixture {
	struct ms_stream s;
	struct evinfo ev[6];
	struct perf_event_attr attr[6];
};

/* Events of tracepoints with these ids, and one that is not a tracepoint. */
static void events(struct fixture *f, const uint64_t *ids, size_t n)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < n; i++) {
		f->attr[i] = (struct perf_event_attr){ .type = PERF_TYPE_TRACEPOINT, .config = ids[i] };
		f->ev[i].attr = &f->attr[i];
	}
	f->attr[n] = (struct perf_event_attr){ .type = PERF_TYPE_SOFTWARE, .config = 410 };
	f->ev[n].attr = &f->attr[n];
	f->s.ev = f->ev;
	f->s.nr_ev = n + 1;
}

static const char *const systems[] = { "syscalls", "maple_tree" };
static const char *const sc[] = { enter_mremap, exit_mremap, enter_brk, enter_open, NULL };
static const char *const mt[] = { ma_write, NULL };
static const char *const *const formats[] = { sc, mt };

static void fields_by_exact_name(void **state)
{
	static const uint64_t ids[] = { 410, 411, 420, 430, 500 };
	static const uint16_t off[] = { 40, 48, 56, 64, 80 };
	struct fixture f;
	struct ms_buf b;
	int k;

	(void)state;
	ms_buf_init(&b);
	blob(&b, systems, formats, 2);
	events(&f, ids, 5);
	assert_int_equal(stream_classify_tracepoints(&f.s, b.data, b.len), 0);
	assert_int_equal(f.ev[0].kind, EK_ENTER);
	assert_int_equal(f.ev[0].sc, SC_MREMAP);
	assert_int_equal(f.ev[0].nr_fields, 5);
	for (k = 0; k < 5; k++) {
		assert_int_equal(f.ev[0].off[k], off[k]);
		assert_int_equal(f.ev[0].size[k], 8);
	}
	assert_int_equal(f.ev[1].kind, EK_EXIT);
	assert_int_equal(f.ev[1].sc, SC_MREMAP);
	assert_int_equal(f.ev[1].off[0], 16);
	assert_int_equal(f.ev[1].size[0], 8);
	assert_int_not_equal(f.ev[2].kind, EK_ENTER);   /* brk's field has no offset */
	assert_int_not_equal(f.ev[3].kind, EK_ENTER);   /* open is not followed */
	assert_int_equal(f.ev[4].kind, EK_VMA_TREE);
	assert_int_equal(f.ev[4].off[0], 16);
	assert_int_equal(f.ev[4].off[1], 24);
	assert_int_equal(f.ev[4].off[2], 40);
	assert_int_not_equal(f.ev[5].kind, EK_ENTER);   /* not a tracepoint, though its config is 410 */
	ms_buf_release(&b);
}

/* Cut inside the second system: the first system's formats still count. */
static void damage_keeps_what_came_before(void **state)
{
	static const uint64_t ids[] = { 410, 500 };
	struct fixture f;
	struct ms_buf b;
	size_t cut;

	(void)state;
	ms_buf_init(&b);
	blob(&b, systems, formats, 2);
	for (cut = b.len - 1; cut > b.len - sizeof(ma_write) + 10; cut -= 7) {
		events(&f, ids, 2);
		assert_int_equal(stream_classify_tracepoints(&f.s, b.data, cut), 0);
		assert_int_equal(f.ev[0].kind, EK_ENTER);
		assert_int_not_equal(f.ev[1].kind, EK_VMA_TREE);
	}
	events(&f, ids, 2);
	assert_int_equal(stream_classify_tracepoints(&f.s, b.data, 9), 0);   /* not even the magic */
	assert_int_not_equal(f.ev[0].kind, EK_ENTER);
	ms_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields_by_exact_name),
		cmocka_unit_test(damage_keeps_what_came_before),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
