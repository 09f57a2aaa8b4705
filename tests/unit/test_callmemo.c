/*
 * Call sites named once for every process that names them alike: the
 * memo's table gives back what was put, by whole keys; naming through it
 * answers as naming without it does (a fresh ms_symbols, whose memo is
 * empty, names each chain anew), in a forked copy of a process and in
 * another process with the same binary at another address; and keeps
 * nothing where the answer could depend on more than the binaries (memory
 * a JIT may name). The frames are functions of this test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "own_maps.h"
#include "symbols/callmemo.h"
#include "symbols/internal.h"

volatile int callmemo_sink;

__attribute__((noinline)) void callmemo_inner(void) { callmemo_sink += 1; callmemo_sink += 2; }
__attribute__((noinline)) void callmemo_outer(void) { callmemo_sink += 3; callmemo_sink += 4; }

#define ADDR(f) ((uint64_t)(uintptr_t)(f) + 1)

/* Key i: 1 + i % 5 words, each telling i and its place. */
static size_t key_for(uint64_t i, uint64_t *key)
{
	size_t n = 1 + i % 5, k;

	for (k = 0; k < n; k++)
		key[k] = i * 0x10001 + k;
	return n;
}

static void texts_by_key(void **state)
{
	struct ms_callmemo *m = ms_callmemo_new();
	uint64_t key[8], i, hits, misses;
	char text[32];
	size_t n;

	(void)state;
	assert_non_null(m);
	for (i = 0; i < 3000; i++) {
		n = key_for(i, key);
		assert_null(ms_callmemo_get(m, key, n));
		snprintf(text, sizeof(text), "text %llu", (unsigned long long)i);
		assert_int_equal(ms_callmemo_put(m, key, n, text), 0);
	}
	for (i = 0; i < 3000; i++) {
		n = key_for(i, key);
		snprintf(text, sizeof(text), "text %llu", (unsigned long long)i);
		assert_string_equal(ms_callmemo_get(m, key, n), text);
		assert_null(ms_callmemo_get(m, key, n - 1 ? n - 1 : 2));   /* a key's prefix, or longer: another */
		key[n - 1] ^= 1ULL << 40;
		assert_null(ms_callmemo_get(m, key, n));
	}
	n = key_for(7, key);
	assert_int_equal(ms_callmemo_put(m, key, n, "other"), 0);          /* kept already: stays */
	assert_string_equal(ms_callmemo_get(m, key, n), "text 7");
	ms_callmemo_counts(m, &hits, &misses);
	assert_int_equal(hits, 3001);
	assert_int_equal(misses, 3000 + 2 * 3000);
	ms_callmemo_free(m);
	ms_callmemo_free(NULL);
}

/* Feeds s the maps of this test's own executable as process pid's, shift bytes on. */
static void map_exe_as(struct ms_symbols *s, uint32_t pid, uint64_t shift)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], perms[8], path[4096], self[4096];
	unsigned long long from, to, pgoff, ino;
	unsigned int maj, min;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct ms_event e = task_ev(MS_EV_MAP, pid);

	assert_non_null(f);
	assert_true(len > 0);
	self[len] = '\0';
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &from, &to, perms, &pgoff, &maj, &min, &ino,
			   path) == 8 && !strcmp(path, self)) {
			e.map = (struct ms_event_map){ .start = from + shift, .end = to + shift, .vma_start = from + shift,
						       .vma_end = to + shift, .pgoff = pgoff,
						       .prot = perms[2] == 'x' ? PROT_READ | PROT_EXEC : PROT_READ,
						       .flags = MAP_PRIVATE, .maj = maj, .min = min, .ino = ino,
						       .name = path };
			ms_symbols_track(s, &e);
		}
	fclose(f);
}

/* This process's code as itself; another's as this test's executable, shift bytes on. */
static void map_code(struct ms_symbols *s, uint32_t pid, uint64_t shift)
{
	struct text t[64];

	if (pid == (uint32_t)getpid())
		map_own_code(s, t, 64);
	else
		map_exe_as(s, pid, shift);
}

/* The chain named by an ms_symbols of its own, with an empty memo: named as without one. */
static void name_fresh(uint32_t pid, uint64_t shift, const uint64_t *chain, uint32_t len, char *site, char *text)
{
	struct ms_symbols *s = ms_symbols_new();

	assert_non_null(s);
	map_code(s, pid, shift);
	ms_symbols_call_site(s, pid, chain, len, site, 512, text, 1024);
	ms_symbols_free(s);
}

static void named_alike_once(void **state)
{
	const uint32_t pid = (uint32_t)getpid(), child = pid + 1, other = pid + 2;
	const uint64_t shift = 1ULL << 32;
	uint64_t chain[4] = { PERF_CONTEXT_USER, ADDR(callmemo_inner), ADDR(callmemo_outer), 0x10 };
	uint64_t moved[4] = { PERF_CONTEXT_USER, ADDR(callmemo_inner) + shift, ADDR(callmemo_outer) + shift, 0x10 };
	uint64_t raw[3] = { ADDR(callmemo_inner), ADDR(callmemo_outer), 0x20 };
	char site[512], text[1024], want_site[512], want_text[1024];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_event e = task_ev(MS_EV_FORK, pid);
	uint64_t hits, misses;

	(void)state;
	map_code(s, pid, 0);
	ms_symbols_call_site(s, pid, chain, 4, site, 512, text, 1024);   /* reads the symbols: no key before */
	name_fresh(pid, 0, chain, 4, want_site, want_text);
	assert_non_null(strstr(want_text, "callmemo_inner"));
	assert_string_equal(site, want_site);
	assert_string_equal(text, want_text);
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits, 0);
	ms_symbols_call_site(s, pid, chain + 1, 3, site, 512, text, 1024);   /* no marker: the same key */
	assert_string_equal(site, want_site);
	assert_string_equal(text, want_text);
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits, 2);                            /* site and text */
	e.fork.child_pid = e.fork.child_tid = child;          /* a forked copy names it alike */
	ms_symbols_track(s, &e);
	ms_symbols_call_site(s, child, chain, 4, site, 512, text, 1024);
	assert_string_equal(site, want_site);
	assert_string_equal(text, want_text);
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits, 4);
	map_code(s, other, shift);                            /* another process, the binary elsewhere */
	ms_symbols_call_site(s, other, moved, 4, site, 512, text, 1024);
	name_fresh(other, shift, moved, 4, want_site, want_text);
	assert_string_equal(site, want_site);
	assert_string_equal(text, want_text);
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits, 6);
	ms_symbols_call_site(s, pid, raw, 3, site, 512, text, 1024);   /* an address no binary holds: itself */
	name_fresh(pid, 0, raw, 3, want_site, want_text);
	assert_string_equal(text, want_text);
	assert_string_equal(site, want_site);
	assert_non_null(strstr(text, "0x20"));
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits, 6);
	ms_symbols_free(s);
}

/*
 * Chains through the same binaries are told apart by their addresses in
 * them: each named as without the memo, however many are kept before it.
 */
static void told_apart_by_address(void **state)
{
	const uint32_t pid = (uint32_t)getpid();
	const uint64_t chains[4][2] = {
		{ ADDR(callmemo_inner), ADDR(callmemo_outer) }, { ADDR(callmemo_outer), ADDR(callmemo_inner) },
		{ ADDR(callmemo_inner), ADDR(callmemo_inner) }, { ADDR(callmemo_outer), ADDR(callmemo_outer) },
	};
	char site[512], text[1024], want_site[512], want_text[1024];
	struct ms_symbols *s = ms_symbols_new();
	uint64_t hits, misses;
	size_t i;

	(void)state;
	map_code(s, pid, 0);
	ms_symbols_call_site(s, pid, chains[0], 2, site, 512, text, 1024);   /* reads the symbols */
	for (i = 0; i < 4; i++) {
		ms_symbols_call_site(s, pid, chains[i], 2, site, 512, text, 1024);
		name_fresh(pid, 0, chains[i], 2, want_site, want_text);
		assert_string_equal(site, want_site);
		assert_string_equal(text, want_text);
	}
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits, 2);                            /* the first chain's second naming alone */
	ms_symbols_free(s);
}

static void nothing_kept_where_a_jit_may_name(void **state)
{
	const uint32_t pid = 200;
	uint64_t chain[2] = { ADDR(callmemo_inner), 0x7010 };
	char site[512], text[1024], again[1024];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_event e = task_ev(MS_EV_MAP, pid);
	uint64_t hits, misses;

	(void)state;
	map_exe_as(s, pid, 0);
	e.map = (struct ms_event_map){ .start = 0x7000, .end = 0x8000, .vma_start = 0x7000, .vma_end = 0x8000,
				       .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE | MAP_ANONYMOUS,
				       .name = "//anon" };
	ms_symbols_track(s, &e);
	ms_symbols_call_site(s, pid, chain, 2, site, 512, text, 1024);
	ms_symbols_call_site(s, pid, chain, 2, site, 512, again, 1024);
	assert_string_equal(again, text);
	ms_callmemo_counts(s->memo, &hits, &misses);
	assert_int_equal(hits + misses, 0);                   /* never asked: no key */
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(texts_by_key),
		cmocka_unit_test(named_alike_once),
		cmocka_unit_test(told_apart_by_address),
		cmocka_unit_test(nothing_kept_where_a_jit_may_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
