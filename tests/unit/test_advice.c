/*
 * Profile-guided hugepage advice: the keys (match, compact form), the
 * advice file (read, written, read back the same; damaged files refused
 * with the line), and advised regions without a key counted, not saved.
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
#include <cmocka.h>

#include <mapscope/advice.h>

#include "analysis/advice-key.h"

static const char *const file =
	"{\"format\": \"mapscope-hugepage-advice\", \"version\": 1, \"future\": [1, {\"x\": null}],\n"
	" \"rules\": [\n"
	"  {\"kind\": \"anon\", \"size_class\": 26, \"site\": \"make_table\", \"frames\": [\n"
	"    {\"build_id\": \"00112233445566778899aabbccddeeff00112233\", \"vaddr\": \"0x134a\"},\n"
	"    {\"build_id\": \"00112233445566778899aabbccddeeff00112233\", \"vaddr\": \"0x15d4\"}]},\n"
	"  {\"kind\": \"heap\", \"size_class\": 17, \"site\": null, \"frames\": [\n"
	"    {\"build_id\": \"\", \"vaddr\": \"0xfff\"}]}]}\n";

static struct ms_advice_key key(char kind, unsigned cls, uint64_t v0, uint64_t v1)
{
	struct ms_advice_key k = { .kind = kind, .size_class = (uint8_t)cls, .nr = 2 };

	k.f[0].vaddr = v0;
	k.f[1].vaddr = v1;
	k.f[0].id_len = k.f[1].id_len = 2;
	k.f[0].id[0] = k.f[1].id[0] = 0xab;
	return k;
}

static void keys_match_by_code_kind_and_size(void **state)
{
	struct ms_advice_key rule = key('a', 26, 0x134a, 0x15d4), k = rule;

	assert_true(ms_advice_key_match(&rule, &k));
	k.size_class = 27;                         /* malloc's request and its mapping differ by a page */
	assert_true(ms_advice_key_match(&rule, &k));
	k.size_class = 28;
	assert_false(ms_advice_key_match(&rule, &k));
	k = rule;
	k.kind = 'h';
	assert_false(ms_advice_key_match(&rule, &k));
	k = rule;
	k.f[1].vaddr++;                            /* another caller of the same function */
	assert_false(ms_advice_key_match(&rule, &k));
	k = rule;
	k.f[0].id[1] = 1;                          /* another build of the binary */
	assert_false(ms_advice_key_match(&rule, &k));
	k = rule;
	k.nr = 3;                                  /* a longer chain with the rule's frames first */
	assert_true(ms_advice_key_match(&rule, &k));
	k.nr = 1;                                  /* a shorter one: not known to be the same */
	assert_false(ms_advice_key_match(&rule, &k));
	assert_true(ms_advice_runtime_object("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_true(ms_advice_runtime_object("/lib64/ld-linux-x86-64.so.2"));
	assert_true(ms_advice_runtime_object("/opt/mapscope/lib/mapscope/mapscope-hugepages.so"));
	assert_false(ms_advice_runtime_object("/usr/bin/python3.11"));
	assert_false(ms_advice_runtime_object("/usr/lib/libcrypto.so.3"));
	assert_int_equal(ms_advice_size_class(64ULL << 20), 26);
	assert_int_equal(ms_advice_size_class((64ULL << 20) + 4096), 26);
}

static void compact_form_round_trips(void **state)
{
	struct ms_advice_key k = key('s', 21, 0x1, 0xdeadbeef), back;
	char buf[256];
	const char *end;

	size_t n = ms_advice_key_encode(&k, buf, sizeof(buf));

	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf, "s 21 ab00+1/ab00+deadbeef");
	end = ms_advice_key_decode(buf, &back);
	assert_non_null(end);
	assert_int_equal(*end, '\0');
	assert_true(ms_advice_keys_equal(&k, &back));
	assert_null(ms_advice_key_decode("x 21 ab+1", &back));
	assert_null(ms_advice_key_decode("a 21 a+1", &back));       /* half a byte of build-id */
	assert_null(ms_advice_key_decode("a 21 ab+", &back));
	assert_null(ms_advice_key_decode("a 99 ab+1", &back));
	assert_null(ms_advice_key_decode("a 1 +1/+2/+3/+4/+5", &back));   /* more frames than a key holds */
}

static void file_reads_writes_and_reads_back(void **state)
{
	struct ms_advice *a = ms_advice_new(), *b = ms_advice_new();
	char *text = NULL, *ea, *eb;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int line = 0;

	assert_int_equal(ms_advice_read(a, file, strlen(file), &line), 0);
	assert_int_equal(ms_advice_nr_rules(a), 2);
	assert_string_equal(ms_advice_rule_site(a, 0), "make_table");
	assert_null(ms_advice_rule_site(a, 1));
	assert_true(ms_advice_wants_malloc_hugetlb(a));
	ea = ms_advice_encode(a);
	assert_string_equal(ea, "a 26 00112233445566778899aabbccddeeff00112233+134a/"
			    "00112233445566778899aabbccddeeff00112233+15d4;h 17 +fff");
	assert_int_equal(ms_advice_write(a, f), 0);
	fclose(f);
	assert_int_equal(ms_advice_read(b, text, len, &line), 0);
	eb = ms_advice_encode(b);
	assert_string_equal(ea, eb);
	/* Read twice, the same rules are not kept twice. */
	assert_int_equal(ms_advice_read(b, text, len, &line), 0);
	assert_int_equal(ms_advice_nr_rules(b), 2);
	free(ea);
	free(eb);
	free(text);
	ms_advice_free(a);
	ms_advice_free(b);
}

static void damaged_files_refused_with_their_line(void **state)
{
	static const char *const bad[] = {
		"",
		"{\"format\": \"mapscope-hugepage-advice\", \"version\": 2, \"rules\": []}",
		"{\"format\": \"something else\", \"version\": 1, \"rules\": []}",
		"{\"format\": \"mapscope-hugepage-advice\", \"version\": 1,\n\"rules\": [{\"kind\": \"anon\"}]}",
		"{\"format\": \"mapscope-hugepage-advice\", \"version\": 1,\n\n\"rules\": [{\"kind\": \"anon\", "
		"\"size_class\": 3, \"frames\": [{\"build_id\": \"zz\", \"vaddr\": \"0x1\"}]}]}",
		"{\"format\": \"mapscope-hugepage-advice\", \"version\": 1, \"rules\": [",
	};
	static const int lines[] = { 1, 1, 1, 2, 3, 1 };
	struct ms_advice *a;
	size_t i;
	int line;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = ms_advice_new();
		line = 0;
		assert_int_equal(ms_advice_read(a, bad[i], strlen(bad[i]), &line), -EINVAL);
		assert_int_equal(line, lines[i]);
		ms_advice_free(a);
	}
	a = ms_advice_new();
	assert_int_equal(ms_advice_read(a, "{\"format\": \"mapscope-hugepage-advice\", \"version\": 1, "
				       "\"rules\": []}", 66, &line), 0);
	assert_int_equal(ms_advice_nr_rules(a), 0);
	ms_advice_free(a);
}

static void advised_regions_without_a_key_are_counted(void **state)
{
	struct ms_region r = { .id = 3 };
	struct ms_huge_advice v[2] = { { .region = &r, .advised = true }, { .region = &r, .advised = false } };
	struct ms_advice *a = ms_advice_new();

	assert_int_equal(ms_advice_add(a, NULL, v, 2), 0);
	assert_int_equal(ms_advice_unkeyed(a), 1);
	assert_int_equal(ms_advice_nr_rules(a), 0);
	ms_advice_free(a);
	ms_advice_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys_match_by_code_kind_and_size),
		cmocka_unit_test(compact_form_round_trips),
		cmocka_unit_test(file_reads_writes_and_reads_back),
		cmocka_unit_test(damaged_files_refused_with_their_line),
		cmocka_unit_test(advised_regions_without_a_key_are_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
