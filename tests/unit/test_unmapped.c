/*
 * Accesses to memory not mapped at that instant, from a synthetic
 * recording replayed by a session: each class (never mapped, beyond the
 * heap, below the stack, a PROT_NONE guard, a NULL pointer's page: address
 * 0 from a memory event is an access, not "no address") and each kind of access is a
 * group of its own per code address, counted, timed and ordered most
 * frequent first; ordinary accesses are not counted. The results are
 * borrowed: asked twice, the same; the test frees only the analysis.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/session.h>
#include <mapscope/unmapped.h>

#include "synth.h"

#define HEAP 0x01000000ULL
#define STACK 0x7ffff0000000ULL
#define GUARD 0x20000000ULL
#define DATA 0x30000000ULL
#define WILD 0x90000000000ULL

static int fd;

static int make_recording(void **state)
{
	struct ms_pdwriter *w = synth_writer(&fd);
	int i;

	(void)state;
	assert_non_null(w);
	put_map(w, 1 * MS, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_map(w, 1 * MS, HEAP, 0x21000, PROT_READ | PROT_WRITE, "[heap]", 0);
	put_map(w, 1 * MS, STACK, 0x21000, PROT_READ | PROT_WRITE, "[stack]", 0);
	put_map(w, 1 * MS, GUARD, 0x1000, PROT_NONE, "//anon", 0);
	put_map(w, 1 * MS, DATA, 0x10000, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 5; i++)                              /* ordinary loads: not counted */
		put_sample(w, 5 * MS + (uint64_t)i, 0x400010, DATA + (uint64_t)i * 4096, LOAD);
	for (i = 0; i < 3; i++)
		put_sample(w, 10 * MS + (uint64_t)i, 0x400100, HEAP + 0x21000 + 0x10, LOAD);
	for (i = 0; i < 2; i++)
		put_sample(w, 20 * MS + (uint64_t)i, 0x400200, STACK - (16 << 20), LOAD);
	put_sample(w, 30 * MS, 0x400300, GUARD + 8, LOAD);
	for (i = 0; i < 4; i++)
		put_sample(w, 35 * MS + (uint64_t)i, 0x400400, WILD + (uint64_t)i * 8, LOAD);
	put_sample(w, 40 * MS, 0x400400, WILD, PREFETCH);
	put_sample(w, 45 * MS, 0x400600, 0, LOAD);           /* *NULL */
	put_sample(w, 45 * MS + 1, 0x400600, 0, LOAD);
	put_sample(w, 45 * MS + 2, 0x400600, 0x10, LOAD);    /* NULL->field */
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	return 0;
}

static int drop_recording(void **state)
{
	(void)state;
	close(fd);
	return 0;
}

static void check(const struct ms_unmapped_access *a, enum ms_unmapped_class cls, enum ms_access_kind kind,
		  uint64_t ip, uint64_t address, uint64_t count, uint64_t first_ns, uint64_t last_ns)
{
	assert_int_equal(a->cls, cls);
	assert_int_equal(a->kind, kind);
	assert_int_equal(a->ip, ip);
	assert_int_equal(a->address, address);
	assert_int_equal(a->count, count);
	assert_int_equal(a->first_ns, first_ns);
	assert_int_equal(a->last_ns, last_ns);
	assert_int_equal(a->pid, 7);
}

static void classes_grouped_by_code(void **state)
{
	struct ms_session *s = ms_session_open(synth_path(fd), NULL);
	struct ms_unmapped *u = ms_unmapped_new();
	const struct ms_unmapped_access *acc, *again;
	size_t n, n2;

	(void)state;
	assert_non_null(s);
	assert_non_null(u);
	assert_int_equal(ms_session_add(s, &ms_unmapped_analysis, u), 0);
	assert_int_equal(ms_session_run(s), 0);
	assert_int_equal(ms_unmapped_results(u, &acc, &n), 0);
	assert_int_equal(n, 6);
	check(&acc[0], MS_UNMAPPED_NEVER, MS_ACCESS_LOAD, 0x400400, WILD, 4, 35 * MS, 35 * MS + 3);
	/* Three each: the earlier first. */
	check(&acc[1], MS_UNMAPPED_BEYOND_HEAP, MS_ACCESS_LOAD, 0x400100, HEAP + 0x21010, 3, 10 * MS, 10 * MS + 2);
	check(&acc[2], MS_UNMAPPED_NULL, MS_ACCESS_LOAD, 0x400600, 0, 3, 45 * MS, 45 * MS + 2);
	check(&acc[3], MS_UNMAPPED_BELOW_STACK, MS_ACCESS_LOAD, 0x400200, STACK - (16 << 20), 2, 20 * MS,
	      20 * MS + 1);
	/* One each: the earlier first. */
	check(&acc[4], MS_UNMAPPED_GUARD, MS_ACCESS_LOAD, 0x400300, GUARD + 8, 1, 30 * MS, 30 * MS);
	check(&acc[5], MS_UNMAPPED_NEVER, MS_ACCESS_PREFETCH, 0x400400, WILD, 1, 40 * MS, 40 * MS);
	assert_null(acc[0].freed_call);
	assert_string_equal(ms_unmapped_class_name(acc[1].cls), "beyond-heap");
	assert_string_equal(ms_unmapped_class_name(acc[2].cls), "null-page");
	assert_string_equal(ms_access_kind_name(acc[5].kind), "prefetch");
	/* Borrowed: asked again, the same accesses, still the analysis's. */
	assert_int_equal(ms_unmapped_results(u, &again, &n2), 0);
	assert_int_equal(n2, n);
	assert_memory_equal(again, acc, n * sizeof(*acc));
	ms_unmapped_free(u);
	ms_session_free(s);
}

static void nothing_before_a_run(void **state)
{
	struct ms_unmapped *u = ms_unmapped_new();
	const struct ms_unmapped_access *acc = (const void *)1;
	size_t n = 9;

	(void)state;
	assert_non_null(u);
	assert_int_equal(ms_unmapped_results(u, &acc, &n), 0);
	assert_int_equal(n, 0);
	ms_unmapped_free(u);
	ms_unmapped_free(NULL);
}

/*
 * Hardware prefetch samples (PEBS, SPE style): three into the data, two a
 * cache line past its end, one far from anything. The two are past-end of
 * the data's mapping, 0x40 bytes from it; the far one is never-mapped; the
 * site counts all six, three of them bad.
 */
static void prefetches_past_the_end(void **state)
{
	int pfd;
	struct ms_pdwriter *w = synth_writer(&pfd);
	const struct ms_unmapped_prefetch_site *site;
	const struct ms_unmapped_access *a;
	struct ms_unmapped *u;
	struct ms_session *s;
	size_t n, i;

	(void)state;
	assert_non_null(w);
	put_map(w, 1 * MS, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_map(w, 1 * MS, DATA, 0x10000, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 3; i++)
		put_sample(w, 5 * MS + i, 0x400700, DATA + i * 64, PREFETCH);
	for (i = 0; i < 2; i++)
		put_sample(w, 6 * MS + i, 0x400700, DATA + 0x10000 + 0x40 + i * 64, PREFETCH);
	put_sample(w, 7 * MS, 0x400700, WILD, PREFETCH);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	s = ms_session_open(synth_path(pfd), NULL);
	assert_non_null(s);
	u = ms_unmapped_new();
	assert_int_equal(ms_session_add(s, &ms_unmapped_analysis, u), 0);
	assert_int_equal(ms_session_run(s), 0);
	assert_int_equal(ms_unmapped_results(u, &a, &n), 0);
	assert_int_equal(n, 2);
	check(&a[0], MS_UNMAPPED_PAST_END, MS_ACCESS_PREFETCH, 0x400700, DATA + 0x10040, 2, 6 * MS, 6 * MS + 1);
	assert_string_equal(a[0].near_name, "");
	assert_int_equal(a[0].near_start, DATA);
	assert_int_equal(a[0].near_end, DATA + 0x10000);
	assert_int_equal(a[0].near_distance, 0x40);
	check(&a[1], MS_UNMAPPED_NEVER, MS_ACCESS_PREFETCH, 0x400700, WILD, 1, 7 * MS, 7 * MS);
	assert_string_equal(ms_unmapped_class_name(MS_UNMAPPED_PAST_END), "past-end");
	assert_int_equal(ms_unmapped_prefetch_sites(u, &site, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(site[0].ip, 0x400700);
	assert_int_equal(site[0].prefetches, 6);
	assert_int_equal(site[0].bad, 3);
	ms_unmapped_free(u);
	ms_session_free(s);
	close(pfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classes_grouped_by_code),
		cmocka_unit_test(nothing_before_a_run),
		cmocka_unit_test(prefetches_past_the_end),
	};
	return cmocka_run_group_tests(tests, make_recording, drop_recording);
}
