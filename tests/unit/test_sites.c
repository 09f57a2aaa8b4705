/*
 * Allocation sites: a region's site is the first frame of its creating
 * call chain that the symbols name, and its chain is every frame as text;
 * both are the table's, kept per region id as the table grows, replaced
 * when a region is named again, and freed by ms_sites_release (ASan finds
 * a leak). The frames are functions of this test, named from its own
 * binary's mappings.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
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

#include "analysis/sites.h"
#include "symbols/internal.h"

#include "own_maps.h"

/* Two functions of this test, to stand as frames (never called), each more than a few bytes long. */
volatile int sites_sink;

__attribute__((noinline)) void sites_alloc_here(void)
{
	sites_sink++;
	sites_sink++;
}

__attribute__((noinline)) void sites_caller(void)
{
	sites_alloc_here();
	sites_sink++;
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static void nothing_without_symbols_or_chain(void **state)
{
	uint64_t chain[2] = { (uint64_t)(uintptr_t)sites_alloc_here + 1, (uint64_t)(uintptr_t)sites_caller + 1 };
	struct ms_region r = { .id = 2, .pid = (uint32_t)getpid(), .alloc_chain = chain, .alloc_chain_len = 2 };
	struct ms_symbols *syms = ms_symbols_new();
	struct ms_sites t = { 0 };

	(void)state;
	assert_non_null(syms);
	assert_int_equal(ms_sites_note(&t, NULL, &r, NULL), 0);     /* no symbols: nothing to name with */
	assert_int_equal(t.cap, 0);
	r.alloc_chain_len = 0;
	assert_int_equal(ms_sites_note(&t, syms, &r, NULL), 0);     /* no chain, no stack to unwind */
	assert_int_equal(t.cap, 0);
	assert_null(ms_sites_site(&t, &r));
	assert_null(ms_sites_chain(&t, &r));
	assert_null(ms_sites_site(&t, NULL));
	ms_sites_release(&t);
	ms_symbols_free(syms);
}

static void named_kept_grown_and_replaced(void **state)
{
	uint64_t chain[4] = { PERF_CONTEXT_USER, 0x10, (uint64_t)(uintptr_t)sites_alloc_here + 1,
			      (uint64_t)(uintptr_t)sites_caller + 1 };
	struct ms_region r = { .id = 3, .pid = (uint32_t)getpid(), .alloc_chain = chain, .alloc_chain_len = 4 };
	struct ms_region other = r, none = { .id = 4 };
	struct ms_symbols *syms = ms_symbols_new();
	struct ms_sites t = { 0 };
	struct text text[32];

	(void)state;
	assert_non_null(syms);
	assert_true(map_own_code(syms, text, 32) >= 1);      /* this test, at least */
	assert_int_equal(ms_sites_note(&t, syms, &r, NULL), 0);
	/* 0x10 names nothing: the site is the first frame named; the context marker is no frame. */
	assert_true(starts_with(ms_sites_site(&t, &r), "sites_alloc_here"));
	assert_non_null(strstr(ms_sites_site(&t, &r), " \u2190 sites_caller"));
	assert_string_equal(ms_sites_chain(&t, &r), "0x10 <- sites_alloc_here+0x1 <- sites_caller+0x1");
	assert_null(ms_sites_site(&t, &none));
	{
		const uint64_t *ips = chain;

		/* The addresses as they were, innermost first, without the context marker. */
		assert_int_equal(ms_sites_ips(&t, &r, &ips), 3);
		assert_memory_equal(ips, chain + 1, 3 * sizeof(uint64_t));
		assert_int_equal(ms_sites_ips(&t, &none, &ips), 0);
		assert_null(ips);
	}
	/* A region far past the table's first size: it grows, and what it held stays. */
	other.id = 5000;
	other.alloc_chain = chain + 3;
	other.alloc_chain_len = 1;
	assert_int_equal(ms_sites_note(&t, syms, &other, NULL), 0);
	assert_true(t.cap > 5000);
	assert_true(starts_with(ms_sites_site(&t, &other), "sites_caller"));
	assert_true(starts_with(ms_sites_site(&t, &r), "sites_alloc_here"));
	assert_null(ms_sites_chain(&t, &none));
	/* Named again (a region id reused by a new table's owner): replaced, the old strings freed. */
	r.alloc_chain = chain + 3;
	r.alloc_chain_len = 1;
	assert_int_equal(ms_sites_note(&t, syms, &r, NULL), 0);
	assert_string_equal(ms_sites_chain(&t, &r), "sites_caller+0x1");
	ms_sites_release(&t);
	assert_int_equal(t.cap, 0);
	assert_null(ms_sites_site(&t, &r));
	ms_symbols_free(syms);
}

/*
 * Symbols of this process with its binaries' build-ids known, and chain
 * (two addresses of this test) named at once by other symbols into site
 * and chain_text: what naming through a pin must give.
 */
static struct ms_symbols *own_symbols(struct text *text, const uint64_t *chain, uint32_t pid, char *site,
				      char *chain_text)
{
	struct ms_symbols *syms = ms_symbols_new(), *fresh = ms_symbols_new();

	expect_own_build_ids(syms);
	map_own_code(syms, text, 32);
	map_own_code(fresh, text, 32);
	ms_symbols_call_site(fresh, pid, chain, 2, site, 768, chain_text, 1024);
	ms_symbols_free(fresh);
	assert_true(starts_with(site, "sites_alloc_here"));
	return syms;
}

/*
 * A site is pinned, not named (its binaries' symbols read on the way):
 * named when first asked for, after its process exec'd, as it would
 * have been at once; its site and its chain each only when asked for
 * (a text report prints no chain); noted either way.
 */
static void pinned_then_named_as_at_once(void **state)
{
	uint64_t chain[2] = { (uint64_t)(uintptr_t)sites_alloc_here + 1, (uint64_t)(uintptr_t)sites_caller + 1 };
	struct ms_region first = { .id = 1, .pid = (uint32_t)getpid(), .alloc_chain = chain, .alloc_chain_len = 2 };
	struct ms_region later = first;
	struct ms_sites t = { 0 };
	struct text text[32];
	struct ms_event e;
	char site[768], chain_text[1024];
	struct ms_symbols *syms = own_symbols(text, chain, first.pid, site, chain_text);

	(void)state;
	assert_false(ms_sites_noted(&t, &first));
	assert_int_equal(ms_sites_note(&t, syms, &first, NULL), 0);
	assert_true(t.by_region[1].pinned);
	later.id = 2;
	assert_int_equal(ms_sites_note(&t, syms, &later, NULL), 0);
	assert_true(t.by_region[2].pinned);
	assert_true(ms_sites_noted(&t, &later));
	memset(&e, 0, sizeof(e));
	e.kind = MS_EV_EXEC;
	e.pid = e.tid = later.pid;
	ms_symbols_track(syms, &e);
	assert_string_equal(ms_sites_chain(&t, &later), chain_text);
	assert_true(t.by_region[2].chain_named);
	assert_false(t.by_region[2].site_named);
	assert_null(t.by_region[2].site);
	assert_string_equal(ms_sites_site(&t, &later), site);
	assert_string_equal(ms_sites_site(&t, &first), site);
	assert_false(t.by_region[1].chain_named);            /* asked for its site alone */
	assert_null(t.by_region[1].chain);
	assert_string_equal(ms_sites_chain(&t, &first), chain_text);
	ms_sites_release(&t);
	ms_symbols_free(syms);
}

/* Whether any binary's symbol table was built by syms: none is where no name was asked of it. */
static bool any_table(const struct ms_symbols *syms)
{
	size_t i;

	for (i = 0; i < syms->nr_bins; i++)
		if (syms->bins[i].table)
			return true;
	return false;
}

/*
 * Named aside (ms_sites_aside()): the sites, and with chains the chains
 * too, named by the namer's thread as at once, with none of the caller's
 * symbols read for it; a region noted again names its new chain; the
 * thread stopped, then released. Skipped where one CPU is all there is.
 */
static void aside_named_as_at_once(bool chains)
{
	uint64_t chain[2] = { (uint64_t)(uintptr_t)sites_alloc_here + 1, (uint64_t)(uintptr_t)sites_caller + 1 };
	uint64_t other[2] = { (uint64_t)(uintptr_t)sites_caller + 1, (uint64_t)(uintptr_t)sites_caller + 1 };
	struct ms_region first = { .id = 1, .pid = (uint32_t)getpid(), .alloc_chain = chain, .alloc_chain_len = 2 };
	struct ms_region later = first;
	struct ms_symbols *syms = ms_symbols_new(), *fresh = ms_symbols_new();
	struct ms_sites t = { 0 };
	struct text text[32];
	struct ms_event e;
	char site[768], chain_text[1024], other_site[768];

	expect_own_build_ids(syms);
	map_own_code(syms, text, 32);
	map_own_code(fresh, text, 32);
	ms_symbols_call_site(fresh, first.pid, chain, 2, site, sizeof(site), chain_text, sizeof(chain_text));
	ms_symbols_call_site(fresh, first.pid, other, 2, other_site, sizeof(other_site), NULL, 0);
	ms_symbols_free(fresh);
	assert_true(starts_with(site, "sites_alloc_here"));
	assert_true(starts_with(other_site, "sites_caller"));
	unsetenv("MAPSCOPE_NAMER");
	ms_sites_aside(&t, chains);
	assert_int_equal(ms_sites_note(&t, syms, &first, NULL), 0);
	if (!t.namer) {
		ms_sites_release(&t);
		ms_symbols_free(syms);
		skip();                       /* one CPU: no namer */
	}
	assert_non_null(t.by_region[1].job);
	later.id = 2;
	assert_int_equal(ms_sites_note(&t, syms, &later, NULL), 0);
	first.alloc_chain = other;             /* region 1 made again, by another chain: its first job dropped */
	assert_int_equal(ms_sites_note(&t, syms, &first, NULL), 0);
	e = task_ev(MS_EV_EXEC, later.pid);                  /* its binaries go */
	ms_symbols_track(syms, &e);
	assert_string_equal(ms_sites_site(&t, &later), site);
	assert_null(t.by_region[2].job);
	assert_false(any_table(syms));                      /* named by the thread: the caller read no symbols */
	assert_int_equal(t.by_region[2].chain_named, chains);   /* named with the site, where chains */
	assert_string_equal(ms_sites_site(&t, &first), other_site);
	assert_false(any_table(syms));
	assert_string_equal(ms_sites_chain(&t, &later), chain_text);
	assert_int_equal(any_table(syms), !chains);          /* the caller reads symbols for a chain it names */
	ms_sites_stop(&t);
	ms_sites_release(&t);
	ms_symbols_free(syms);
}

static void aside_sites(void **state)
{
	(void)state;
	aside_named_as_at_once(false);
}

static void aside_sites_and_chains(void **state)
{
	(void)state;
	aside_named_as_at_once(true);
}

/*
 * Asked after the replay (ms_sites_ask(), as hugepages does for the
 * regions it prints): sites noted, not aside, the process gone by exec
 * (its pinned list kept), then handed to a namer made now: named by its
 * thread as at once, sites and chains, with none of the caller's symbol
 * tables built. Skipped where one CPU is all there is.
 */
static void asked_after_exec_named_as_at_once(void **state)
{
	uint64_t chain[2] = { (uint64_t)(uintptr_t)sites_alloc_here + 1, (uint64_t)(uintptr_t)sites_caller + 1 };
	struct ms_region r = { .id = 1, .pid = (uint32_t)getpid(), .alloc_chain = chain, .alloc_chain_len = 2 };
	struct ms_sites t = { 0 };
	struct text text[32];
	struct ms_event e;
	char site[768], chain_text[1024];
	struct ms_symbols *syms = own_symbols(text, chain, r.pid, site, chain_text);

	(void)state;
	assert_int_equal(ms_sites_note(&t, syms, &r, NULL), 0);
	assert_true(t.by_region[1].pinned && !t.by_region[1].job);     /* not aside: no namer yet */
	e = task_ev(MS_EV_EXEC, r.pid);                       /* its binaries go: the pin's list is kept */
	ms_symbols_track(syms, &e);
	unsetenv("MAPSCOPE_NAMER");
	ms_sites_ask(&t, &r);
	if (!t.namer) {
		ms_sites_release(&t);
		ms_symbols_free(syms);
		skip();                       /* one CPU: no namer */
	}
	assert_non_null(t.by_region[1].job);
	assert_string_equal(ms_sites_site(&t, &r), site);
	assert_true(t.by_region[1].chain_named);             /* the namer named its chain with it */
	assert_string_equal(ms_sites_chain(&t, &r), chain_text);
	assert_false(any_table(syms));                      /* named by the thread: the caller built no table */
	ms_sites_ask(&t, &r);                               /* named: nothing more to ask */
	assert_null(t.by_region[1].job);
	ms_sites_release(&t);
	ms_symbols_free(syms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_without_symbols_or_chain),
		cmocka_unit_test(named_kept_grown_and_replaced),
		cmocka_unit_test(pinned_then_named_as_at_once),
		cmocka_unit_test(aside_sites),
		cmocka_unit_test(aside_sites_and_chains),
		cmocka_unit_test(asked_after_exec_named_as_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
