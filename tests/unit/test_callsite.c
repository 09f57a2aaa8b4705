/*
 * Allocation sites from call chains of this very process: its own
 * functions stand for the program, the C library's malloc and mmap for
 * the mechanism, and functions named as python's allocator for an
 * allocator linked into the program. The site is the first frame past the
 * mechanism and two callers, "f (file:line) ← g (file:line) ← h".
 */
#include <dlfcn.h>
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

volatile int callsite_sink;

/* Frames of the program (never called: only their addresses are used). */
__attribute__((noinline)) void callsite_make_table(void) { callsite_sink += 1; callsite_sink += 2; }
__attribute__((noinline)) void callsite_main(void) { callsite_sink += 3; callsite_sink += 4; }
__attribute__((noinline)) void callsite_start(void) { callsite_sink += 5; callsite_sink += 6; }
__attribute__((noinline)) void callsite_outer(void) { callsite_sink += 7; callsite_sink += 8; }
/* An allocator linked into the program, by its name (python's obmalloc). */
__attribute__((noinline)) void PyMem_RawMalloc(void) { callsite_sink += 9; callsite_sink += 10; }

#define ADDR(f) ((uint64_t)(uintptr_t)(f) + 1)

/*
 * The C library's own function, never a sanitizer's interceptor of the
 * same name (in an ASan build, mmap and malloc here are those).
 */
static uint64_t libc_fn(const char *name)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f = libc ? dlsym(libc, name) : NULL;

	assert_non_null(f);
	dlclose(libc);
	return (uint64_t)(uintptr_t)f;
}

#define LIBC(name) libc_fn(#name)

static struct ms_symbols *syms;

static const char *site_of(const uint64_t *chain, uint32_t len)
{
	static char site[512];
	char text[1024];

	ms_symbols_call_site(syms, (uint32_t)getpid(), chain, len, site, sizeof(site), text, sizeof(text));
	return site;
}

/* "name (test_callsite.c:N)" where the test has debuginfo, else "name". */
static void assert_frame(const char *got, const char *name)
{
	size_t n = strlen(name);

	assert_memory_equal(got, name, n);
	assert_true(got[n] == '\0' || !strncmp(got + n, " (test_callsite.c:", 18) || !strncmp(got + n, " \u2190", 4));
}

static void past_malloc_and_mmap_to_the_program(void **state)
{
	/* mmap in the C library, called by its malloc, called by the program. */
	uint64_t chain[] = { PERF_CONTEXT_USER, LIBC(mmap) + 4, LIBC(malloc) + 8,
			     ADDR(callsite_make_table), ADDR(callsite_main), ADDR(callsite_start), ADDR(callsite_outer) };
	const char *site = site_of(chain, 7), *arrow;

	(void)state;
	assert_frame(site, "callsite_make_table");
	arrow = strstr(site, " \u2190 ");
	assert_non_null(arrow);
	assert_frame(arrow + 5, "callsite_main");
	arrow = strstr(arrow + 5, " \u2190 ");
	assert_non_null(arrow);
	assert_frame(arrow + 5, "callsite_start");
	assert_null(strstr(arrow + 5, " \u2190 "));               /* the site and two callers, no more */
	assert_null(strstr(site, "callsite_outer"));
}

static void past_an_allocator_linked_in(void **state)
{
	uint64_t chain[] = { LIBC(mmap) + 4, ADDR(PyMem_RawMalloc), ADDR(callsite_main) };
	const char *site = site_of(chain, 3);

	(void)state;
	assert_frame(site, "callsite_main");
	assert_null(strstr(site, "\u2190"));                      /* nothing called it, as far as the chain says */
}

static void mechanism_only(void **state)
{
	/* The C library's own call (qsort stands for setlocale): the first frame past the allocator. */
	uint64_t own[] = { LIBC(mmap) + 4, LIBC(malloc) + 8, LIBC(qsort) + 8 };
	uint64_t alloc_only[] = { LIBC(mmap) + 4, LIBC(malloc) + 8 };
	uint64_t unknown[] = { 0x10, 0x20 };
	char site[64], text[256];

	(void)state;
	assert_memory_equal(site_of(own, 3), "qsort", 5);          /* with msort.c's line where libc's debuginfo is */
	assert_null(strstr(site_of(own, 3), "malloc"));
	assert_string_equal(site_of(alloc_only, 2), "");
	assert_string_equal(site_of(unknown, 2), "");
	ms_symbols_call_site(syms, (uint32_t)getpid(), unknown, 2, site, sizeof(site), text, sizeof(text));
	assert_string_equal(text, "0x10 <- 0x20");
}

static void chain_text_and_unnamed_callers(void **state)
{
	uint64_t chain[3] = { PERF_CONTEXT_USER, ADDR(callsite_make_table), 0x10 };
	char site[256], text[256];

	(void)state;
	ms_symbols_call_site(syms, (uint32_t)getpid(), chain, 3, site, sizeof(site), text, sizeof(text));
	assert_frame(site, "callsite_make_table");
	assert_non_null(strstr(site, " \u2190 0x10"));            /* a caller no binary holds: its address */
	assert_string_equal(text, "callsite_make_table+0x1 <- 0x10");
	/* A site cut to the buffer stays a string. */
	ms_symbols_call_site(syms, (uint32_t)getpid(), chain, 3, site, 8, text, sizeof(text));
	assert_int_equal(strlen(site), 7);
}

/* C++ names demangled, without their parameters; a stripped library's frame still says where. */
static void cxx_names_read_as_people_write_them(void **state)
{
	void *dtor = dlsym(*state, "_ZNSt9exceptionD1Ev");       /* std::exception::~exception() */
	uint64_t chain[2] = { LIBC(mmap) + 4, 0 };

	if (!dtor)
		skip();
	chain[1] = (uint64_t)(uintptr_t)dtor + 1;
	assert_string_equal(site_of(chain, 2), "std::exception::~exception");
}

static int setup(void **state)
{
	struct text t[64];

	/* Loaded before this process's maps are read, so that they hold it. */
	*state = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	syms = ms_symbols_new();
	return syms && map_own_code(syms, t, 64) >= 2 ? 0 : -1;
}

static int teardown(void **state)
{
	if (*state)
		dlclose(*state);
	ms_symbols_free(syms);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(past_malloc_and_mmap_to_the_program),
		cmocka_unit_test(past_an_allocator_linked_in),
		cmocka_unit_test(mechanism_only),
		cmocka_unit_test(chain_text_and_unnamed_callers),
		cmocka_unit_test(cxx_names_read_as_people_write_them),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
