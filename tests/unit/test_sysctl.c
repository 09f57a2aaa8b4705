/*
 * mapscope:sysctl, as record writes it: a sample's layout (8-byte
 * aligned; the value and the name where the format says, the name at its
 * __data_loc), names too long refused, and a setting read from a fake
 * /proc/sys: a number, a file that holds none, and none at all; and
 * whether a read fault maps the zero page, against smaps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "kernel/sysctl.h"


static void test_encode(void **state)
{
	unsigned char rec[MS_SYSCTL_RECORD_MAX] __attribute__((aligned(8)));
	struct perf_event_header h;
	uint64_t id, time, value;
	uint32_t pid, raw_size, loc;
	uint16_t type;
	size_t n = ms_sysctl_encode(0xfffd, 321, 5000, "vm.mmap_min_addr", 65536, rec, sizeof(rec));

	(void)state;
	assert_true(n > 0);
	assert_int_equal(n % 8, 0);
	memcpy(&h, rec, sizeof(h));
	assert_int_equal(h.type, PERF_RECORD_SAMPLE);
	assert_int_equal(h.size, n);
	memcpy(&id, rec + 8, 8);
	assert_true(id == MS_SYSCTL_ID);
	memcpy(&pid, rec + 24, 4);
	assert_int_equal(pid, 321);
	memcpy(&time, rec + 32, 8);
	assert_int_equal(time, 5000);
	memcpy(&raw_size, rec + 48, 4);
	assert_int_equal(raw_size, n - 52);
	memcpy(&type, rec + 52, 2);
	assert_int_equal(type, 0xfffd);
	/* As the format says: value at 8, the name's __data_loc at 16 (of the raw data). */
	memcpy(&value, rec + 52 + 8, 8);
	assert_int_equal(value, 65536);
	memcpy(&loc, rec + 52 + 16, 4);
	assert_int_equal(loc >> 16, strlen("vm.mmap_min_addr") + 1);
	assert_true((loc & 0xffff) + (loc >> 16) <= raw_size);
	assert_string_equal((const char *)rec + 52 + (loc & 0xffff), "vm.mmap_min_addr");
}

static void test_encode_refuses(void **state)
{
	unsigned char rec[MS_SYSCTL_RECORD_MAX] __attribute__((aligned(8)));
	char name[MS_SYSCTL_NAME_MAX + 1];

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(ms_sysctl_encode(1, 1, 1, name, 1, rec, sizeof(rec)), 0);
	assert_int_equal(ms_sysctl_encode(1, 1, 1, "vm.mmap_min_addr", 1, rec, 40), 0);
}

static void test_format(void **state)
{
	struct ms_buf b;

	(void)state;
	ms_buf_init(&b);
	ms_sysctl_format(65533, &b);
	ms_buf_u32(&b, 0);   /* a NUL to end the text */
	assert_non_null(strstr((const char *)b.data, "name: sysctl\nID: 65533\n"));
	assert_non_null(strstr((const char *)b.data, "field:u64 value;\toffset:8;\tsize:8;"));
	assert_non_null(strstr((const char *)b.data, "field:__data_loc char[] name;\toffset:16;\tsize:4;"));
	ms_buf_release(&b);
}

static void put(const char *root, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/sys/vm", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/sys/vm/mmap_min_addr", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_read(void **state)
{
	char root[] = "/tmp/ms-sysctl-XXXXXX", cmd[64];
	uint64_t v = 7;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(ms_sysctl_read(root, "vm.mmap_min_addr", &v), -ENOENT);
	put(root, "4096\n");
	assert_int_equal(ms_sysctl_read(root, "vm.mmap_min_addr", &v), 0);
	assert_int_equal(v, 4096);
	put(root, "65536");
	assert_int_equal(ms_sysctl_read(root, "vm.mmap_min_addr", &v), 0);
	assert_int_equal(v, 65536);
	put(root, "64k\n");
	assert_int_equal(ms_sysctl_read(root, "vm.mmap_min_addr", &v), -EINVAL);
	put(root, "");
	assert_int_equal(ms_sysctl_read(root, "vm.mmap_min_addr", &v), -EINVAL);
	assert_int_equal(ms_sysctl_read(root, "vm.no_such_setting", &v), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* kB of anonymous memory /proc/self/smaps counts in the VMA that starts at addr (its own pages, not the zero page). */
static long anonymous_kb(const void *addr)
{
	char line[256], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	long kb = -1;

	assert_non_null(f);
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)addr);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		else if (in && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * Whether a read fault maps the zero page, as record writes it: the
 * answer agrees with smaps, which counts a page of the VMA's own as
 * Anonymous and the zero page as nothing (4 kB where the kernel is booted
 * without the zero page, pvm_no_zero_page=1; 0 on any other).
 */
static void test_read_fault_zero_page(void **state)
{
	uint64_t zero = 7;
	volatile char *m;
	char c;
	long kb;

	(void)state;
	if (ms_read_fault_zero_page(&zero) == -ENOENT || access("/proc/self/smaps", R_OK))
		skip();                      /* no /proc */
	assert_true(zero == 0 || zero == 1);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	c = *m;
	(void)c;
	kb = anonymous_kb((const void *)m);
	munmap((void *)m, 4096);
	assert_true(kb >= 0);
	assert_int_equal(zero, kb == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_fault_zero_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
