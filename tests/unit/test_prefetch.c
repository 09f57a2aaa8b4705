/*
 * The prefetch scan: known encodings of each architecture decode to the
 * addressing mode a uprobe fetches (registers, scale, displacement, the
 * file offset), operands a uprobe cannot fetch are counted apart, and a
 * real binary's prefetch is found in the function that holds it.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/prefetch.h"

static void x86_modes(void **state)
{
	static const unsigned char code[] = {
		0x90,                                     /* nop */
		0x0f, 0x18, 0x0c, 0x02,                   /* prefetcht0 (%rdx,%rax,1) */
		0x0f, 0x18, 0x8f, 0x00, 0x00, 0x01, 0x00, /* prefetcht0 0x10000(%rdi) */
		0x0f, 0x18, 0x0d, 0x10, 0x00, 0x00, 0x00, /* prefetcht0 0x10(%rip) */
		0x64, 0x0f, 0x18, 0x08,                   /* prefetcht0 %fs:(%rax): not fetchable */
		0x0f, 0x0d, 0x08,                         /* prefetchw (%rax) */
		0x0f, 0x18, 0x1c, 0xc7,                   /* prefetcht2 (%rdi,%rax,8) */
	};
	struct ms_prefetch_sites s = { 0 };

	(void)state;
	assert_int_equal(ms_prefetch_scan_code(MS_PREFETCH_X86_64, code, sizeof(code), 0x401000, 0x1000, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.unsupported, 1);
	assert_int_equal(s.v[0].vaddr, 0x401001);
	assert_int_equal(s.v[0].offset, 0x1001);
	assert_string_equal(s.v[0].base, "dx");
	assert_string_equal(s.v[0].index, "ax");
	assert_int_equal(s.v[0].scale, 1);
	assert_int_equal(s.v[0].disp, 0);
	assert_string_equal(s.v[1].base, "di");
	assert_string_equal(s.v[1].index, "");
	assert_int_equal(s.v[1].disp, 0x10000);
	assert_string_equal(s.v[2].base, "ip");        /* from the instruction's own address: +7 bytes */
	assert_int_equal(s.v[2].disp, 0x17);
	assert_string_equal(s.v[3].mnemonic, "prefetchw");
	assert_string_equal(s.v[3].base, "ax");
	assert_int_equal(s.v[4].scale, 8);
	ms_prefetch_sites_release(&s);
}

static void arm64_and_ppc64(void **state)
{
	static const unsigned char arm[] = {
		0x00, 0x20, 0x80, 0xf9,                   /* prfm pldl1keep, [x0, #64] */
		0x1f, 0x20, 0x03, 0xd5,                   /* nop */
		0x20, 0x78, 0xa2, 0xf8,                   /* prfm pldl1keep, [x1, x2, lsl #3] */
	};
	static const unsigned char ppc[] = {
		0x7c, 0x03, 0x22, 0x2c,                   /* dcbt r3, r4 */
		0x7c, 0x00, 0x2a, 0x2c,                   /* dcbt 0, r5: no base */
	};
	struct ms_prefetch_sites s = { 0 };
	int err = ms_prefetch_scan_code(MS_PREFETCH_ARM64, arm, sizeof(arm), 0x1000, 0x1000, &s);

	(void)state;
	if (err == -ENOTSUP)
		skip();
	assert_int_equal(err, 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0].base, "x0");
	assert_int_equal(s.v[0].disp, 64);
	assert_string_equal(s.v[1].base, "x1");
	assert_string_equal(s.v[1].index, "x2");
	assert_int_equal(s.v[1].scale, 8);
	assert_int_equal(s.v[1].vaddr, 0x1008);
	ms_prefetch_sites_release(&s);
	assert_int_equal(ms_prefetch_scan_code(MS_PREFETCH_PPC64, ppc, sizeof(ppc), 0, 0, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0].base, "gpr3");
	assert_string_equal(s.v[0].index, "gpr4");
	assert_string_equal(s.v[1].base, "");
	assert_string_equal(s.v[1].index, "gpr5");
	ms_prefetch_sites_release(&s);
}

/* The instruction written out: a sanitizer build would compute p + 4096 in another register first. */
__attribute__((noipa)) void scan_me_prefetches(const char *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetcht0 4096(%0)" : : "D"(p));
#else
	__builtin_prefetch(p + 4096);
#endif
}

static void own_binary(void **state)
{
	struct ms_prefetch_sites s = { 0 };
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t i, found = 0;

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	scan_me_prefetches(self);
	assert_int_equal(ms_prefetch_scan_file(self, &s), 0);
	for (i = 0; i < s.n; i++)
		if (s.v[i].func && !strcmp(s.v[i].func, "scan_me_prefetches")) {
			found++;
			assert_int_equal(s.v[i].disp, 4096);
			assert_string_equal(s.v[i].base, "di");
		}
	assert_int_equal(found, 1);
	ms_prefetch_sites_release(&s);
	assert_int_equal(ms_prefetch_scan_file("/etc/passwd", &s), -ENOEXEC);
	ms_prefetch_sites_release(&s);
}

static void binary_without_prefetches(void **state)
{
	struct ms_prefetch_sites s = { 0 };

	(void)state;
	if (access("/bin/true", R_OK))
		skip();
	assert_int_equal(ms_prefetch_scan_file("/bin/true", &s), 0);
	assert_int_equal(s.n, 0);
	ms_prefetch_sites_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(x86_modes),
		cmocka_unit_test(arm64_and_ppc64),
		cmocka_unit_test(own_binary),
		cmocka_unit_test(binary_without_prefetches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
