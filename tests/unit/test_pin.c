/*
 * Pinned call chains: named later exactly as they would have been named
 * when pinned, after the process has exec'd (its binaries gone) and its
 * pid been reused; a binary's symbols read by the pin where that says
 * nothing. Refused where naming later could answer otherwise: a binary
 * whose symbols would warn when read (naming reads them, and warns, once),
 * two instances that overlap (the lookup hint would decide), an address a
 * JIT's tables could name (they change with time). The frames are
 * functions of this test, named from its own binary's mappings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
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
#include <mapscope/log.h>
#include <mapscope/symbols.h>

#include "own_maps.h"
#include "symbols/pin.h"

volatile int pin_sink;

__attribute__((noinline)) void pin_inner(void)
{
	pin_sink++;
	pin_sink++;
}

__attribute__((noinline)) void pin_outer(void)
{
	pin_inner();
	pin_sink++;
}

static void name_now(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, char *site,
		     char *text)
{
	ms_symbols_call_site(s, pid, chain, len, site, 512, text, 1024);
}

static void named_later_as_then(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[3] = { PERF_CONTEXT_USER, (uint64_t)(uintptr_t)pin_inner + 1,
			      (uint64_t)(uintptr_t)pin_outer + 1 };
	char site[512], text[1024], later_site[512], later_text[1024];
	struct ms_symbols *s = ms_symbols_new(), *fresh = ms_symbols_new();
	struct ms_pin pin, again;
	struct ms_event e;
	struct text t[32];

	(void)state;
	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	map_own_code(fresh, t, 32);
	name_now(fresh, pid, chain, 3, site, text);        /* at once, as a chain was named before pins */
	assert_non_null(strstr(text, "pin_inner"));
	assert_non_null(strstr(site, "pin_inner"));
	ms_symbols_free(fresh);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 3, &pin), 0);   /* its symbols read on the way */
	e = task_ev(MS_EV_EXEC, pid);                       /* its binaries go */
	ms_symbols_track(s, &e);
	name_now(s, pid, chain, 3, later_site, later_text);
	assert_null(strstr(later_text, "pin_inner"));      /* named now: nothing holds them */
	ms_symbols_call_site_pinned(s, &pin, pid, chain, 3, later_site, sizeof(later_site), later_text,
				    sizeof(later_text));
	assert_string_equal(later_site, site);
	assert_string_equal(later_text, text);
	map_own_code(s, t, 32);                           /* mapped again, pinned again, emptied again */
	assert_int_equal(ms_symbols_pin(s, pid, chain, 3, &again), 0);
	e = task_ev(MS_EV_FORK, 1);                         /* the pid reused by another's fork */
	e.fork.child_pid = e.fork.child_tid = pid;
	ms_symbols_track(s, &e);
	ms_symbols_call_site_pinned(s, &again, pid, chain, 3, later_site, sizeof(later_site), later_text,
				    sizeof(later_text));
	assert_string_equal(later_text, text);
	ms_symbols_call_site_pinned(s, &pin, pid, chain, 3, later_site, sizeof(later_site), later_text,
				    sizeof(later_text));
	assert_string_equal(later_text, text);            /* the first list is still kept */
	ms_symbols_free(s);
}

/* Maps the file mapped at start in this process again, shifted by shift, as a map event of this pid. */
static void map_own_first_again(struct ms_symbols *s, uint64_t start, uint64_t shift)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], perms[8], path[4096];
	unsigned long long from, to, pgoff, ino;
	unsigned int maj, min;
	struct ms_event e = task_ev(MS_EV_MAP, (uint32_t)getpid());

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &from, &to, perms, &pgoff, &maj, &min, &ino,
			   path) == 8 && from == start) {
			e.map = (struct ms_event_map){ .start = from + shift, .end = to + shift, .vma_start = from + shift,
						       .vma_end = to + shift, .pgoff = pgoff, .prot = PROT_READ | PROT_EXEC,
						       .flags = MAP_PRIVATE, .maj = maj, .min = min, .ino = ino,
						       .name = path };
			ms_symbols_track(s, &e);
		}
	fclose(f);
}

static int warnings;

static void count_warnings(enum ms_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == MS_LOG_WARN && strstr(msg, "is not the binary that was recorded"))
		warnings++;
}

/* A binary that is not the one recorded: the pin says nothing and refuses; naming at once warns, once. */
static void refused_where_reading_would_warn(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[1] = { (uint64_t)(uintptr_t)pin_inner + 1 };
	const unsigned char other_id[20] = { 1, 2, 3 };
	char site[512], text[1024], self[4096];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_pin pin;
	struct text t[32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = '\0';
	ms_symbols_expect_build_id(s, self, other_id, sizeof(other_id));
	map_own_code(s, t, 32);
	ms_log_set(count_warnings, NULL);
	warnings = 0;
	assert_int_equal(ms_symbols_pin(s, pid, chain, 1, &pin), -EAGAIN);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 1, &pin), -EAGAIN);   /* not tried again */
	assert_int_equal(warnings, 0);
	name_now(s, pid, chain, 1, site, text);
	assert_int_equal(warnings, 1);
	assert_null(strstr(text, "pin_inner"));           /* its addresses shown raw */
	ms_log_set(NULL, NULL);
	ms_symbols_free(s);
}

static void refused_where_later_could_differ(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[2] = { (uint64_t)(uintptr_t)pin_inner + 1, 0x7000 };
	char site[512], text[1024];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_pin pin;
	struct ms_event e;
	struct text t[32];
	size_t n;

	(void)state;
	n = map_own_code(s, t, 32);
	assert_true(n > 0);
	name_now(s, pid, chain, 2, site, text);            /* reads the symbols */
	assert_int_equal(ms_symbols_pin(s, pid, chain, 2, &pin), 0);
	assert_int_equal(ms_symbols_pin(s, pid + 1, chain, 2, &pin), -EAGAIN);   /* no such process */
	e = task_ev(MS_EV_MAP, pid);                         /* memory a JIT's code may be named in */
	e.map = (struct ms_event_map){ .start = 0x7000, .end = 0x8000, .vma_start = 0x7000, .vma_end = 0x8000,
				       .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE | MAP_ANONYMOUS,
				       .name = "//anon" };
	ms_symbols_track(s, &e);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 2, &pin), -EAGAIN);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 1, &pin), 0);     /* the binary's address alone */
	map_own_first_again(s, t[0].start, 4096);     /* the same binary again, a page on: they overlap */
	assert_int_equal(ms_symbols_pin(s, pid, chain, 1, &pin), -EAGAIN);
	ms_symbols_free(s);
}

/* The path, as the symbols name it, of the file mapped at addr in this process; false where none is. */
static bool own_file_at(uint64_t addr, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], name[4096];
	unsigned long long from, to;
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %*s %*x %*x:%*x %*u %4095s", &from, &to, name) == 3 && addr >= from &&
			addr < to && name[0] == '/' && realpath(name, path) && strlen(path) < len;
	fclose(f);
	return found;
}

/*
 * A pipe's build-ids come as records: a binary's may come after a chain
 * through it was pinned, and before naming first reads it. Read by the
 * pin while its build-id was not known yet, a binary rebuilt since would
 * be named by the wrong symbols, and not warned of, where naming at once
 * (which reads only the frames it shows: the first twelve, and the site)
 * leaves it for later, when its build-id is known.
 */
static void no_build_id_yet_leaves_the_read_to_naming(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[14], libc_addr = (uint64_t)(uintptr_t)getpid;
	const unsigned char other_id[20] = { 1, 2, 3 };
	char site[512], text[1024], libc[4096];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_pin pin;
	struct ms_sym sym;
	struct text t[32];
	size_t i;

	(void)state;
	assert_true(own_file_at(libc_addr, libc, sizeof(libc)));
	map_own_code(s, t, 32);
	chain[0] = (uint64_t)(uintptr_t)pin_inner + 1;
	name_now(s, pid, chain, 1, site, text);             /* this binary's symbols read */
	for (i = 1; i < 13; i++)
		chain[i] = (uint64_t)(uintptr_t)pin_outer + 1;
	chain[13] = libc_addr + 1;                          /* past what naming shows */
	if (ms_symbols_pin(s, pid, chain, 14, &pin))
		name_now(s, pid, chain, 14, site, text);     /* as sites.c does */
	assert_non_null(strstr(site, "pin_inner"));
	ms_symbols_expect_build_id(s, libc, other_id, sizeof(other_id));   /* the pipe's record, late */
	ms_log_set(count_warnings, NULL);
	warnings = 0;
	assert_int_equal(ms_symbols_resolve(s, pid, libc_addr, false, &sym), 0);
	assert_int_equal(warnings, 1);
	assert_null(sym.name);                              /* its addresses shown raw */
	ms_log_set(NULL, NULL);
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_later_as_then),
		cmocka_unit_test(refused_where_later_could_differ),
		cmocka_unit_test(refused_where_reading_would_warn),
		cmocka_unit_test(no_build_id_yet_leaves_the_read_to_naming),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
