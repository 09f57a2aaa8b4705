/*
 * smaps, as the kernel writes it: each VMA's Referenced, Rss, Anonymous and
 * AnonHugePages in bytes; names with spaces, fields in any order, a last
 * VMA cut short, text with no NUL; and clear_refs written "1".
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/smaps.h"
#include "fake_tracefs.h"

static const char smaps[] =
	"55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:                132 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:                  12 kB\n"
	"Pss:                  12 kB\n"
	"Referenced:            8 kB\n"
	"Anonymous:            12 kB\n"
	"AnonHugePages:         0 kB\n"
	"VmFlags: rd wr mr mw me ac sd\n"
	"7f0000000000-7f0004000000 rw-p 00000000 00:00 0                          /tmp/a file with spaces\n"
	"Size:              65536 kB\n"
	"Rss:               65536 kB\n"
	"Referenced:        16384 kB\n"
	"Anonymous:         65536 kB\n"
	"LazyFree:              0 kB\n"
	"AnonHugePages:     63488 kB\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
	"Size:                  4 kB\n"
	"Rss:                   0 kB\n";

struct got {
	struct ms_smaps_vma v[8];
	int n, stop_at;
};

static int take(const struct ms_smaps_vma *v, void *ctx)
{
	struct got *g = ctx;

	g->v[g->n++] = *v;
	return g->n == g->stop_at ? 42 : 0;
}

static void parses_each_vma(void **state)
{
	struct got g = { .stop_at = -1 };

	(void)state;
	assert_int_equal(ms_smaps_parse(smaps, sizeof(smaps) - 1, take, &g), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.v[0].start, 0x55d0c0a00000ULL);
	assert_int_equal(g.v[0].end, 0x55d0c0a21000ULL);
	assert_int_equal(g.v[0].rss, 12 << 10);
	assert_int_equal(g.v[0].referenced, 8 << 10);
	assert_int_equal(g.v[0].anon, 12 << 10);
	assert_int_equal(g.v[0].anon_huge, 0);
	assert_int_equal(g.v[1].start, 0x7f0000000000ULL);
	assert_int_equal(g.v[1].referenced, 16384ULL << 10);
	assert_int_equal(g.v[1].anon_huge, 63488ULL << 10);
	/* The last, cut short: what it has, the rest 0. */
	assert_int_equal(g.v[2].start, 0xffffffffff600000ULL);
	assert_int_equal(g.v[2].rss, 0);
	assert_int_equal(g.v[2].referenced, 0);
}

/* The text need not end in NUL, nor in a newline; a non-zero return stops the walk. */
static void bounded_and_stoppable(void **state)
{
	char *copy = malloc(sizeof(smaps) - 1);
	struct got g = { .stop_at = 1 };
	size_t cut;

	(void)state;
	memcpy(copy, smaps, sizeof(smaps) - 1);
	assert_int_equal(ms_smaps_parse(copy, sizeof(smaps) - 1, take, &g), 42);
	assert_int_equal(g.n, 1);
	/* Cut inside the second VMA's "Referenced:        16384 kB": its number is read as far as it goes. */
	cut = (size_t)(strstr(smaps, "16384") - smaps) + 3;
	g = (struct got){ .stop_at = -1 };
	assert_int_equal(ms_smaps_parse(copy, cut, take, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.v[1].referenced, 163ULL << 10);
	free(copy);
}

/* Lines that are not a VMA's header nor a size are skipped, and a size before any header is no VMA. */
static void skips_what_is_not_a_vma(void **state)
{
	static const char odd[] = "Rss: 4 kB\nnot-a-header\n1000-0fff rw-p 0 0:0 0\n2000-3000 rw-p 0 00:00 0\n"
				  "Referenced: x kB\nRss: 4 kB\n";
	struct got g = { .stop_at = -1 };

	(void)state;
	assert_int_equal(ms_smaps_parse(odd, sizeof(odd) - 1, take, &g), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.v[0].start, 0x2000);
	assert_int_equal(g.v[0].rss, 4096);
	assert_int_equal(g.v[0].referenced, 0);
}

/* Through a fake /proc: the read walks the file, the clear writes "1"; a process gone is -ENOENT. */
static void reads_and_clears_a_process(void **state)
{
	char root[] = "/tmp/ms-smaps-XXXXXX", path[256], buf[8] = "";
	struct got g = { .stop_at = -1 };
	struct ms_buf b;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_put(root, "42/smaps", smaps);
	fake_put(root, "42/clear_refs", "");
	ms_buf_init(&b);
	assert_int_equal(ms_smaps_read(root, 42, &b, take, &g), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(ms_smaps_read(root, 43, &b, take, &g), -ENOENT);
	assert_int_equal(ms_smaps_clear_refs(root, 42, false), 0);
	snprintf(path, sizeof(path), "%s/42/clear_refs", root);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "1");
	/* With the TLB flush, "4" follows the "1" (the fake file keeps both writes). */
	assert_int_equal(ms_smaps_clear_refs(root, 42, true), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "14");
	assert_int_equal(ms_smaps_clear_refs(root, 43, false), -ENOENT);
	ms_buf_release(&b);
	assert_int_equal(fake_remove(root), 0);
}

/* The "sd" flag is read from the VmFlags of the VMA that holds the address, and only as a whole word. */
static void reads_the_soft_dirty_flag(void **state)
{
	static const char text[] =
		"1000-2000 rw-p 00000000 00:00 0 \n"
		"Rss:                   4 kB\n"
		"VmFlags: rd wr mr mw me sd \n"
		"3000-5000 rw-p 00000000 00:00 0 \n"
		"VmFlags: rd wr mr mw me ac sdx\n";
	FILE *f;
	char line[256];
	bool found = false, off = false;

	(void)state;
	assert_true(ms_smaps_vmflags_soft_dirty(text, sizeof(text) - 1, 0x1800));
	assert_false(ms_smaps_vmflags_soft_dirty(text, sizeof(text) - 1, 0x3000));
	assert_false(ms_smaps_vmflags_soft_dirty(text, sizeof(text) - 1, 0x2000));
	/* This kernel's own answer agrees with its configuration, where that can be read. */
	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "CONFIG_MEM_SOFT_DIRTY")) {
			found = true;
			off = strstr(line, "is not set") != NULL;
		}
	if (pclose(f) == 0 && found)
		assert_int_equal(ms_smaps_kernel_has_soft_dirty(), !off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_each_vma),
		cmocka_unit_test(bounded_and_stoppable),
		cmocka_unit_test(skips_what_is_not_a_vma),
		cmocka_unit_test(reads_and_clears_a_process),
		cmocka_unit_test(reads_the_soft_dirty_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
