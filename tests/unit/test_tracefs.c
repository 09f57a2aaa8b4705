/* The TRACING_DATA blob, built from a fake tracefs tree. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/tracefs.h"
#include "fake_tracefs.h"

static char root[] = "/tmp/ms-tracefs-XXXXXX";

static void put(const char *rel, const char *text)
{
	fake_put(root, rel, text);
}

static int setup(void **state)
{
	if (!mkdtemp(root))
		return -1;
	put("events/header_page", "HP");
	put("events/header_event", "HEV");
	put("events/syscalls/sys_enter_munmap/format", "FMT-enter-munmap");
	put("events/syscalls/sys_enter_munmap/id", "693\n");
	put("events/syscalls/sys_exit_munmap/format", "FMT-exit");
	put("events/sched/sched_switch/format", "FMT-switch");
	put("printk_formats", "PK");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

static void reads_event_id(void **state)
{
	uint64_t id = 0;

	assert_int_equal(ms_tracefs_event_id(root, "syscalls", "sys_enter_munmap", &id), 0);
	assert_int_equal(id, 693);
	assert_int_equal(ms_tracefs_event_id(root, "syscalls", "sys_enter_nothing", &id), -ENOENT);
}

/* A reader over the blob, in perf's order. */
struct cursor { const unsigned char *p, *end; };

static uint32_t u32(struct cursor *c) { uint32_t v; assert_true(c->p + 4 <= c->end); memcpy(&v, c->p, 4); c->p += 4; return v; }
static uint64_t u64(struct cursor *c) { uint64_t v; assert_true(c->p + 8 <= c->end); memcpy(&v, c->p, 8); c->p += 8; return v; }
static const char *str(struct cursor *c) { const char *s = (const char *)c->p; c->p += strlen(s) + 1; assert_true(c->p <= c->end); return s; }
static void sized(struct cursor *c, const char *want)
{
	uint64_t n = u64(c);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(c->p, want, n);
	c->p += n;
}

static void builds_blob_grouped_by_system(void **state)
{
	const char *names[] = { "syscalls/sys_enter_munmap", "sched/sched_switch", "syscalls/sys_exit_munmap" };
	struct ms_buf b;
	struct cursor c;

	ms_buf_init(&b);
	assert_int_equal(ms_tracefs_tracing_data(root, names, 3, &b), 0);
	c = (struct cursor){ b.data, b.data + b.len };
	assert_memory_equal(c.p, "\027\010\104tracing", 10);
	c.p += 10;
	assert_string_equal(str(&c), "0.6");
	assert_int_equal(*c.p++, 0);                      /* little endian */
	assert_int_equal(*c.p++, sizeof(long));
	assert_int_equal(u32(&c), (uint32_t)sysconf(_SC_PAGESIZE));
	assert_string_equal(str(&c), "header_page");
	sized(&c, "HP");
	assert_string_equal(str(&c), "header_event");
	sized(&c, "HEV");
	assert_int_equal(u32(&c), 0);                     /* ftrace formats */
	assert_int_equal(u32(&c), 2);                     /* systems */
	assert_string_equal(str(&c), "syscalls");
	assert_int_equal(u32(&c), 2);
	sized(&c, "FMT-enter-munmap");
	sized(&c, "FMT-exit");
	assert_string_equal(str(&c), "sched");
	assert_int_equal(u32(&c), 1);
	sized(&c, "FMT-switch");
	assert_int_equal(u32(&c), 0);                     /* kallsyms */
	assert_int_equal(u32(&c), 2);                     /* printk formats */
	assert_memory_equal(c.p, "PK", 2);
	c.p += 2;
	assert_int_equal(u64(&c), 0);                     /* saved cmdlines */
	assert_ptr_equal(c.p, c.end);
	ms_buf_release(&b);
}

static void fails_on_missing_format_or_bad_name(void **state)
{
	const char *missing[] = { "syscalls/sys_enter_nothing" };
	const char *bad[] = { "no-slash" };
	struct ms_buf b;

	ms_buf_init(&b);
	assert_int_equal(ms_tracefs_tracing_data(root, missing, 1, &b), -ENOENT);
	b.len = 0;
	assert_int_equal(ms_tracefs_tracing_data(root, bad, 1, &b), -EINVAL);
	ms_buf_release(&b);
}

/* A system tracefs does not have, added to a blob: first among the systems, the rest as it was. */
static void adds_a_system_of_its_own(void **state)
{
	const char *names[] = { "syscalls/sys_enter_munmap" };
	struct ms_buf b, out;
	struct cursor c;

	ms_buf_init(&b);
	ms_buf_init(&out);
	assert_int_equal(ms_tracefs_tracing_data(root, names, 1, &b), 0);
	assert_int_equal(ms_tracefs_add_system(b.data, b.len, "mapscope", "FMT-ours", 8, &out), 0);
	assert_int_equal(out.len, b.len + strlen("mapscope") + 1 + 4 + 8 + 8);
	c = (struct cursor){ out.data, out.data + out.len };
	c.p += 10;
	str(&c);
	c.p += 6;
	assert_string_equal(str(&c), "header_page");
	sized(&c, "HP");
	assert_string_equal(str(&c), "header_event");
	sized(&c, "HEV");
	assert_int_equal(u32(&c), 0);
	assert_int_equal(u32(&c), 2);
	assert_string_equal(str(&c), "mapscope");
	assert_int_equal(u32(&c), 1);
	sized(&c, "FMT-ours");
	assert_string_equal(str(&c), "syscalls");
	assert_int_equal(u32(&c), 1);
	sized(&c, "FMT-enter-munmap");
	/* A blob that does not parse up to its systems is refused. */
	out.len = 0;
	assert_int_equal(ms_tracefs_add_system(b.data, 30, "mapscope", "F", 1, &out), -EBADMSG);
	ms_buf_release(&b);
	ms_buf_release(&out);
}

static void reads_a_line(void **state)
{
	char path[128], text[8];

	(void)state;
	put("nr_kdamonds", "12\nmore\n");
	snprintf(path, sizeof(path), "%s/nr_kdamonds", root);
	assert_int_equal(ms_kernel_read_line(path, text, sizeof(text)), 0);
	assert_string_equal(text, "12");
	put("long", "0123456789\n");
	snprintf(path, sizeof(path), "%s/long", root);
	assert_int_equal(ms_kernel_read_line(path, text, sizeof(text)), 0);
	assert_string_equal(text, "0123456");         /* cut to the buffer */
	snprintf(path, sizeof(path), "%s/none", root);
	assert_int_equal(ms_kernel_read_line(path, text, sizeof(text)), -ENOENT);
}

/* Attributes are replaced (O_TRUNC), lists appended to (O_APPEND). */
static void writes_whole(void **state)
{
	char path[128], text[16];

	(void)state;
	put("attr", "old value\n");
	snprintf(path, sizeof(path), "%s/attr", root);
	assert_int_equal(ms_kernel_write(path, "on\n", O_TRUNC), 0);
	assert_int_equal(ms_kernel_read_line(path, text, sizeof(text)), 0);
	assert_string_equal(text, "on");
	assert_int_equal(ms_kernel_write(path, "more\n", O_APPEND), 0);
	assert_int_equal(ms_kernel_read_line(path, text, sizeof(text)), 0);
	assert_string_equal(text, "on");                /* kept, the line added after it */
	snprintf(path, sizeof(path), "%s/none", root);
	assert_int_equal(ms_kernel_write(path, "x", O_APPEND), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_event_id),
		cmocka_unit_test(writes_whole),
		cmocka_unit_test(builds_blob_grouped_by_system),
		cmocka_unit_test(fails_on_missing_format_or_bad_name),
		cmocka_unit_test(adds_a_system_of_its_own),
		cmocka_unit_test(reads_a_line),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
