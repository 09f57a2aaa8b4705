/*
 * Sites named on the namer's thread: each as the caller's own pin names
 * it, whatever happened to the process since (its binaries gone by exec);
 * a binary the caller found unusable named raw there too, and not warned
 * of again; a binary the thread cannot read as the caller did handed back
 * (NULL), for the caller to name through its pin, and one gone from its
 * path read as the caller mapped it; one with compressed DWARF read from
 * its path, named with its lines by both; the chain waited for
 * named first, however many are queued before it; stopped with jobs
 * queued, then freed (ASan and TSan see the rest); none where one CPU is
 * all there is, descriptors are few or MAPSCOPE_NAMER=off; code addresses'
 * frames (a profile's) named as the caller names them; and every answer
 * of a second namer over the same binaries taken from the first's, kept
 * on disk. The frames are functions of this test and of its C library,
 * named from its own mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include <mapscope/event.h>
#include <mapscope/log.h>
#include <mapscope/symbols.h>

#include "own_maps.h"
#include "symbols/internal.h"
#include "symbols/namer.h"
#include "symbols/pin.h"

#define SITE_LEN 768
#define TEXT_LEN 1024

volatile int namer_sink;

__attribute__((noinline)) void namer_inner(void)
{
	namer_sink++;
	namer_sink++;
}

__attribute__((noinline)) void namer_outer(void)
{
	namer_inner();
	namer_sink++;
}

/* The site of a pinned chain as the caller names it, through its pin. */
static void pinned_site(struct ms_symbols *s, const struct ms_pin *pin, const uint64_t *chain, uint32_t len,
			char *site)
{
	ms_symbols_call_site_pinned(s, pin, (uint32_t)getpid(), chain, len, site, SITE_LEN, NULL, 0);
}

/* A namer of sites, and of chains as text where text. */
static struct ms_namer *new_namer(struct ms_symbols *s, bool text)
{
	struct ms_namer *n;

	unsetenv("MAPSCOPE_NAMER");
	n = ms_namer_new(s, SITE_LEN, text ? TEXT_LEN : 0);
	if (!n)
		skip();                       /* one CPU: there is no namer to test */
	return n;
}

/* The site the namer named for j (a namer of sites alone), or NULL where it handed j back. */
static char *wait_site(struct ms_namer *n, struct ms_name_job *j)
{
	char *site, *text;

	if (!ms_namer_wait(n, j, &site, &text))
		return NULL;
	assert_null(text);
	return site;
}

static bool exact_only;           /* the next symbols named with ms_symbols_exact_only() */

/* Of n's jobs, the answers the cache gave and those put in it, where want_hits is not -1. */
static void cache_counts(struct ms_namer *n, int want_hits, int want_put)
{
	size_t hits, put;

	ms_namer_cache_counts(n, &hits, &put);
	if (want_hits < 0)
		return;
	assert_int_equal(hits, want_hits);
	assert_int_equal(put, want_put);
}

/*
 * Chains through this test's functions and its C library's, each as the
 * pin names it, after an exec too; of them, want_hits answered by the
 * cache and want_put put in it (-1: whatever the user's cache holds).
 */
static void named_as_the_pin_names(bool with_text, int want_hits, int want_put)
{
	uint32_t pid = (uint32_t)getpid();
	const uint64_t in = (uint64_t)(uintptr_t)namer_inner + 1, out = (uint64_t)(uintptr_t)namer_outer + 1,
		       libc = (uint64_t)(uintptr_t)getpid + 1, raw = 0x1000;
	const uint64_t chains[][3] = { { in, out, out }, { libc, in, out }, { out, libc, libc }, { raw, in, libc },
				       { libc, libc, raw } };
	enum { N = sizeof(chains) / sizeof(chains[0]) };
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *jobs[N];
	struct ms_pin pins[N];
	char want[N][SITE_LEN], want_text[N][TEXT_LEN];
	struct ms_namer *n;
	struct ms_event e;
	struct text t[32];
	char *got, *text;
	size_t i;

	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	ms_symbols_exact_only(s, exact_only);
	n = new_namer(s, with_text);
	for (i = 0; i < N; i++) {
		assert_int_equal(ms_symbols_pin(s, pid, chains[i], 3, &pins[i]), 0);
		assert_non_null(jobs[i] = ms_namer_submit(n, s, &pins[i], pid, chains[i], 3));
	}
	e = task_ev(MS_EV_EXEC, pid);                       /* its binaries go */
	ms_symbols_track(s, &e);
	for (i = 0; i < N; i++) {
		ms_symbols_call_site_pinned(s, &pins[i], pid, chains[i], 3, want[i], SITE_LEN, want_text[i], TEXT_LEN);
		assert_true(ms_namer_wait(n, jobs[i], &got, &text));
		assert_string_equal(got, want[i]);
		if (with_text)
			assert_string_equal(text, want_text[i]);
		else
			assert_null(text);
		free(got);
		free(text);
	}
	assert_non_null(strstr(want[0], "namer_inner"));   /* named, not raw: the test tests something */
	assert_non_null(strstr(want[1], "namer_inner"));
	assert_non_null(strstr(want_text[2], "namer_outer"));
	cache_counts(n, want_hits, want_put);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void sites_as_the_pin_names(void **state)
{
	(void)state;
	named_as_the_pin_names(false, -1, -1);
}

static void sites_and_chains_as_the_pin_names(void **state)
{
	(void)state;
	named_as_the_pin_names(true, -1, -1);
}

static int warnings;

static void count_warnings(enum ms_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == MS_LOG_WARN && strstr(msg, "is not the binary that was recorded"))
		warnings++;
}

/* This binary is not the one recorded: the caller warned once and names it raw; so does the thread, quietly. */
static void unusable_binary_raw_and_quiet(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[2] = { (uint64_t)(uintptr_t)namer_inner + 1, (uint64_t)(uintptr_t)namer_outer + 1 };
	const unsigned char other_id[20] = { 1, 2, 3 };
	char site[SITE_LEN], text[1024], want[SITE_LEN], self[4096];
	struct ms_symbols *s = ms_symbols_new();
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct ms_name_job *j;
	struct ms_namer *n;
	struct ms_pin pin;
	struct text t[32];
	char *got;

	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	ms_symbols_expect_build_id(s, self, other_id, sizeof(other_id));
	map_own_code(s, t, 32);
	ms_log_set(count_warnings, NULL);
	warnings = 0;
	ms_symbols_call_site(s, pid, chain, 2, site, sizeof(site), text, sizeof(text));
	assert_int_equal(warnings, 1);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 2, &pin), 0);   /* unusable, said: nothing more to read */
	n = new_namer(s, false);
	assert_non_null(j = ms_namer_submit(n, s, &pin, pid, chain, 2));
	assert_non_null(got = wait_site(n, j));
	pinned_site(s, &pin, chain, 2, want);
	assert_string_equal(got, want);
	assert_null(strstr(got, "namer_inner"));            /* raw */
	assert_int_equal(warnings, 1);
	free(got);
	ms_namer_free(n);
	ms_log_set(NULL, NULL);
	ms_symbols_free(s);
}

/* Maps the copy at path of this process's executable where the executable is mapped, as pid's. */
static void map_copy(struct ms_symbols *s, const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], perms[8], name[4096], self[4096];
	unsigned long long from, to, pgoff, ino;
	unsigned int maj, min;
	struct ms_event e = task_ev(MS_EV_MAP, (uint32_t)getpid());
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat st;

	assert_true(len > 0);
	self[len] = '\0';
	assert_int_equal(stat(path, &st), 0);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &from, &to, perms, &pgoff, &maj, &min, &ino,
			   name) == 8 && !strcmp(name, self)) {
			e.map = (struct ms_event_map){ .start = from, .end = to, .vma_start = from, .vma_end = to,
						       .pgoff = pgoff, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
						       .maj = 1, .min = 1, .ino = st.st_ino, .name = path };
			ms_symbols_track(s, &e);
		}
	fclose(f);
}

/*
 * A copy of this process's executable, its DWARF compressed as compress
 * says where not NULL (objcopy's --compress-debug-sections), mapped as
 * pid's in s, its build-id known: path filled in. False, and nothing
 * left, where objcopy cannot compress it.
 */
static bool map_exe_copy(struct ms_symbols *s, char *path, const char *compress)
{
	int fd = mkstemp(path), self = open("/proc/self/exe", O_RDONLY), len;
	unsigned char id[64];
	char cmd[128];
	struct stat st;

	assert_true(fd >= 0 && self >= 0);
	assert_int_equal(fstat(self, &st), 0);
	assert_int_equal(sendfile(fd, self, NULL, (size_t)st.st_size), st.st_size);
	close(fd);
	close(self);
	if (compress && (snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=%s %s 2>/dev/null", compress,
				  path) < 0 || system(cmd))) {
		unlink(path);
		return false;
	}
	assert_true((len = ms_elf_build_id(path, id, sizeof(id))) > 0);
	ms_symbols_expect_build_id(s, path, id, (size_t)len);
	map_copy(s, path);
	return true;
}

/*
 * The binary is gone from its path when the thread comes to read it: the
 * thread reads the caller's mapping of it, and names the chain as the
 * caller's pin does.
 */
static void gone_binary_read_as_the_caller_mapped_it(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[2] = { (uint64_t)(uintptr_t)namer_inner + 1, (uint64_t)(uintptr_t)namer_outer + 1 };
	char path[] = "/tmp/mapscope-namer-XXXXXX", site[SITE_LEN];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *j;
	struct ms_namer *n;
	struct ms_pin pin;
	char *got;

	(void)state;
	map_exe_copy(s, path, NULL);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 2, &pin), 0);   /* the caller reads it now */
	n = new_namer(s, false);
	assert_non_null(j = ms_namer_submit(n, s, &pin, pid, chain, 2));
	unlink(path);                                       /* before the job is handed over: at the wait */
	assert_non_null(got = wait_site(n, j));
	pinned_site(s, &pin, chain, 2, site);
	assert_string_equal(got, site);
	assert_non_null(strstr(got, "namer_inner"));
	free(got);
	ms_namer_free(n);
	ms_symbols_free(s);
}

/*
 * Where the caller holds no mapping of the binary (its symbols read
 * through a descriptor of libdwfl's own), the thread reads it from its
 * path (ELF_C_READ): there, as the pin names it; gone, the job comes back
 * NULL, and the caller's pin names it.
 */
static void no_mapping_read_from_the_path(bool gone)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chain[2] = { (uint64_t)(uintptr_t)namer_inner + 1, (uint64_t)(uintptr_t)namer_outer + 1 };
	char path[] = "/tmp/mapscope-namer-XXXXXX", site[SITE_LEN];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *j;
	struct ms_namer *n;
	struct ms_pin pin;
	char *got;
	ssize_t i;

	map_exe_copy(s, path, NULL);
	assert_int_equal(ms_symbols_pin(s, pid, chain, 2, &pin), 0);
	assert_true((i = ms_bin_index(s, path, false)) >= 0);
	ms_bin_elf_release(&s->bins[i]);                   /* libdwfl's module keeps its own reference */
	n = new_namer(s, false);
	assert_non_null(j = ms_namer_submit(n, s, &pin, pid, chain, 2));
	if (gone)
		unlink(path);
	got = wait_site(n, j);
	pinned_site(s, &pin, chain, 2, site);
	assert_non_null(strstr(site, "namer_inner"));
	if (gone) {
		assert_null(got);
	} else {
		assert_non_null(got);
		assert_string_equal(got, site);
		unlink(path);
	}
	free(got);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void no_mapping_read_from_the_path_there(void **state)
{
	(void)state;
	no_mapping_read_from_the_path(false);
}

static void unreadable_binary_handed_back(void **state)
{
	(void)state;
	no_mapping_read_from_the_path(true);
}

/*
 * A binary with compressed DWARF (SHF_COMPRESSED, or GNU's .zdebug_*):
 * libelf inflates a section by rewriting its header in the mapping it
 * reads, so that what one thread inflated in the caller's mapping the
 * other would read as DWARF, and find none. The thread reads such a
 * binary from its path: the namer names a chain first, then the caller's
 * pin, then the namer another; each with its lines, as this executable's
 * own symbols name it.
 */
static void compressed_binary_read_from_the_path(const char *compress)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t chains[2][2] = { { (uint64_t)(uintptr_t)namer_inner + 1, (uint64_t)(uintptr_t)namer_outer + 1 },
				  { (uint64_t)(uintptr_t)namer_outer + 1, (uint64_t)(uintptr_t)namer_outer + 1 } };
	char path[] = "/tmp/mapscope-namer-XXXXXX", want[2][SITE_LEN], site[SITE_LEN];
	struct ms_symbols *own = ms_symbols_new(), *s = ms_symbols_new();
	struct ms_name_job *j;
	struct ms_namer *n;
	struct ms_pin pin;
	struct text t[32];
	char *got;
	ssize_t i;
	int c;

	expect_own_build_ids(own);
	map_own_code(own, t, 32);
	for (c = 0; c < 2; c++)
		ms_symbols_call_site(own, pid, chains[c], 2, want[c], SITE_LEN, NULL, 0);
	ms_symbols_free(own);
	n = new_namer(s, false);
	if (!strstr(want[0], "test_namer.c:") || !map_exe_copy(s, path, compress)) {
		ms_namer_free(n);
		ms_symbols_free(s);
		skip();                       /* no DWARF to compress, or no objcopy to compress it */
	}
	for (c = 0; c < 2; c++) {
		assert_int_equal(ms_symbols_pin(s, pid, chains[c], 2, &pin), 0);
		assert_non_null(j = ms_namer_submit(n, s, &pin, pid, chains[c], 2));
		assert_non_null(got = wait_site(n, j));
		assert_string_equal(got, want[c]);
		pinned_site(s, &pin, chains[c], 2, site);
		assert_string_equal(site, want[c]);
		free(got);
	}
	unlink(path);
	assert_true((i = ms_bin_index(s, path, false)) >= 0);
	assert_true(s->bins[i].elf_written);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void compressed_binary_read_from_the_path_gabi(void **state)
{
	(void)state;
	compressed_binary_read_from_the_path("zlib");
}

static void compressed_binary_read_from_the_path_gnu(void **state)
{
	(void)state;
	compressed_binary_read_from_the_path("zlib-gnu");
}

enum { CODE_IPS = 4 };

/* The code addresses asked for: this test's functions, its C library's, one no binary holds. */
static void code_ips(uint64_t *ips)
{
	ips[0] = (uint64_t)(uintptr_t)namer_inner + 4;
	ips[1] = (uint64_t)(uintptr_t)namer_outer + 4;
	ips[2] = (uint64_t)(uintptr_t)getpid + 2;
	ips[3] = 0x1000;
}

/* A namer for s (its binaries' build-ids known, this process's code mapped), each of ips pinned and handed to it. */
static struct ms_namer *code_jobs(struct ms_symbols *s, struct text *t, const uint64_t *ips, struct ms_pin *pins,
				  struct ms_name_job **jobs, bool symbols)
{
	uint32_t pid = (uint32_t)getpid();
	struct ms_namer *n;
	int i;

	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	n = new_namer(s, false);
	for (i = 0; i < CODE_IPS; i++) {
		assert_int_equal(ms_symbols_pin(s, pid, &ips[i], 1, &pins[i]), 0);
		jobs[i] = symbols ? ms_namer_submit_symbol(n, s, &pins[i], pid, ips[i]) :
				    ms_namer_submit_frames(n, s, &pins[i], pid, ips[i]);
		assert_non_null(jobs[i]);
	}
	return n;
}

/*
 * Code addresses' frames (a profile's code) named by the namer as the
 * caller names them now, and through the pin after the process's binaries
 * went by exec: this test's functions (with their lines where it has
 * DWARF), its C library's, an address no binary holds (no frame).
 */
static void code_frames_named(int want_hits, int want_put)
{
	enum { N = CODE_IPS };
	uint32_t pid = (uint32_t)getpid();
	struct ms_frame want[N][MS_NAMER_FRAMES], pinned[MS_NAMER_FRAMES], got[MS_NAMER_FRAMES];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *jobs[N];
	struct ms_pin pins[N];
	int nwant[N], k, i, f;
	struct ms_namer *n;
	struct ms_event e;
	struct text t[32];
	uint64_t ips[N];

	code_ips(ips);
	n = code_jobs(s, t, ips, pins, jobs, false);
	for (i = 0; i < (int)N; i++)
		nwant[i] = ms_symbols_code_frames(s, pid, ips[i], want[i], MS_NAMER_FRAMES);
	assert_true(nwant[0] >= 1 && nwant[1] >= 1 && nwant[2] >= 1);
	assert_string_equal(want[0][nwant[0] - 1].name, "namer_inner");   /* named: the test tests something */
	assert_string_equal(want[1][nwant[1] - 1].name, "namer_outer");
	assert_true(want[0][nwant[0] - 1].line > 0);                    /* with its line: the DWARF read */
	assert_non_null(want[2][nwant[2] - 1].file);                    /* its source, or the C library itself */
	assert_int_equal(nwant[3], 0);
	e = task_ev(MS_EV_EXEC, pid);                       /* its binaries go */
	ms_symbols_track(s, &e);
	assert_int_equal(ms_symbols_code_frames(s, pid, ips[0], got, MS_NAMER_FRAMES), 0);   /* now: none */
	for (i = (int)N - 1; i >= 0; i--) {                 /* the last waited for first */
		k = ms_namer_wait_frames(n, jobs[i], got, MS_NAMER_FRAMES);
		assert_int_equal(k, nwant[i]);
		assert_int_equal(ms_symbols_code_frames_pinned(s, &pins[i], pid, ips[i], pinned, MS_NAMER_FRAMES),
				 nwant[i]);
		for (f = 0; f < k; f++) {
			assert_string_equal(got[f].name ? got[f].name : "-", want[i][f].name ? want[i][f].name : "-");
			assert_string_equal(got[f].file ? got[f].file : "-", want[i][f].file ? want[i][f].file : "-");
			assert_int_equal(got[f].line, want[i][f].line);
			assert_string_equal(pinned[f].name ? pinned[f].name : "-", want[i][f].name ? want[i][f].name : "-");
			assert_int_equal(pinned[f].line, want[i][f].line);
		}
	}
	assert_int_equal(ms_namer_wait_frames(n, jobs[0], got, MS_NAMER_FRAMES), -1);   /* asked once */
	cache_counts(n, want_hits, want_put);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void code_frames_as_the_caller_names(void **state)
{
	(void)state;
	code_frames_named(-1, -1);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Code addresses' symbols (a report's children) named by the namer as
 * the caller names them now, and through the pin after the binaries went
 * by exec: the same addresses; the one no binary holds has none.
 */
static void code_symbols_named(int want_hits, int want_put)
{
	enum { N = CODE_IPS };
	uint32_t pid = (uint32_t)getpid();
	struct ms_code_sym want[N], got, pinned;
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *jobs[N];
	struct ms_pin pins[N];
	int held[N], i;
	struct ms_namer *n;
	struct ms_event e;
	struct text t[32];
	uint64_t ips[N];

	code_ips(ips);
	n = code_jobs(s, t, ips, pins, jobs, true);
	for (i = 0; i < (int)N; i++)
		held[i] = ms_symbols_code_symbol(s, pid, ips[i], &want[i]);
	assert_true(held[0] == 1 && held[1] == 1 && held[2] == 1 && held[3] == 0);
	assert_string_equal(want[0].name, "namer_inner");   /* named: the test tests something */
	assert_string_equal(want[1].raw, "namer_outer");
	assert_non_null(want[2].name);
	assert_non_null(strstr(want[2].dso, "libc"));
	e = task_ev(MS_EV_EXEC, pid);                       /* its binaries go */
	ms_symbols_track(s, &e);
	assert_int_equal(ms_symbols_code_symbol(s, pid, ips[0], &got), 0);   /* now: none */
	for (i = (int)N - 1; i >= 0; i--) {                 /* the last waited for first */
		assert_int_equal(ms_namer_wait_symbol(n, jobs[i], &got), held[i]);
		assert_int_equal(ms_symbols_code_symbol_pinned(s, &pins[i], pid, ips[i], &pinned), held[i]);
		assert_true(same_str(got.name, want[i].name) && same_str(got.raw, want[i].raw) &&
			    same_str(got.dso, want[i].dso));
		assert_true(same_str(pinned.name, want[i].name) && same_str(pinned.raw, want[i].raw) &&
			    same_str(pinned.dso, want[i].dso));
	}
	assert_int_equal(ms_namer_wait_symbol(n, jobs[0], &got), -1);   /* asked once */
	cache_counts(n, want_hits, want_put);
	ms_namer_free(n);
	ms_symbols_free(s);
}

static void code_symbols_as_the_caller_names(void **state)
{
	(void)state;
	code_symbols_named(-1, -1);
}

/*
 * The namer's answers kept on disk (namecache.h): a second namer over the
 * same binaries takes every one from the first's, and they are the
 * answers the pin gives (the checks above); a namer of sites with their
 * chains as text answers otherwise, so keeps answers of its own.
 */
static char cache_dir[] = "/tmp/ms-namer-cache.XXXXXX", *cache_was;

static int cache_setup(void **state)
{
	(void)state;
	cache_was = getenv("MAPSCOPE_NAME_CACHE") ? strdup(getenv("MAPSCOPE_NAME_CACHE")) : NULL;
	if (!mkdtemp(cache_dir))
		return -1;
	setenv("MAPSCOPE_NAME_CACHE", cache_dir, 1);
	return 0;
}

/* The setting as it was, whatever the test did; its folder gone. */
static int cache_teardown(void **state)
{
	char cmd[64];

	(void)state;
	exact_only = false;
	if (cache_was)
		setenv("MAPSCOPE_NAME_CACHE", cache_was, 1);
	else
		unsetenv("MAPSCOPE_NAME_CACHE");
	free(cache_was);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
	return system(cmd) ? -1 : 0;
}

static void answers_kept_for_the_next_run(void **state)
{
	int run;

	(void)state;
	for (run = 0; run < 2; run++) {
		named_as_the_pin_names(false, run ? 5 : 0, run ? 0 : 5);
		code_frames_named(run ? 4 : 0, run ? 0 : 4);
		code_symbols_named(run ? 4 : 0, run ? 0 : 4);
	}
	named_as_the_pin_names(true, 0, 5);
	named_as_the_pin_names(true, 5, 0);
	exact_only = true;                  /* symbols named otherwise: answers of their own */
	named_as_the_pin_names(false, 0, 5);
	named_as_the_pin_names(false, 5, 0);
	exact_only = false;
}

/* Pins each of chains[0, count) (two addresses each, this process's) and hands it to n; each job into jobs. */
static void pin_and_submit(struct ms_namer *n, struct ms_symbols *s, uint64_t (*chains)[2], int count,
			   struct ms_name_job **jobs)
{
	uint32_t pid = (uint32_t)getpid();
	struct ms_pin pin;
	int i;

	for (i = 0; i < count; i++) {
		assert_int_equal(ms_symbols_pin(s, pid, chains[i], 2, &pin), 0);
		assert_non_null(jobs[i] = ms_namer_submit(n, s, &pin, pid, chains[i], 2));
	}
}

/* Many queued, the last waited for first; some dropped; the namer freed with jobs never asked for. */
static void waited_for_first(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	enum { N = 300 };
	uint64_t chain[N][2];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *jobs[N];
	char want[SITE_LEN], *got;
	struct ms_namer *n;
	struct text t[32];
	int i;

	(void)state;
	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	n = new_namer(s, false);
	for (i = 0; i < N; i++) {
		chain[i][0] = (uint64_t)(uintptr_t)(i % 2 ? namer_inner : namer_outer) + 1 + (uint64_t)(i % 7);
		chain[i][1] = (uint64_t)(uintptr_t)getpid + 1;
	}
	pin_and_submit(n, s, chain, N, jobs);
	for (i = N - 1; i >= N - 10; i--) {
		assert_non_null(got = wait_site(n, jobs[i]));
		ms_symbols_call_site(s, pid, chain[i], 2, want, sizeof(want), NULL, 0);
		assert_string_equal(got, want);
		assert_non_null(strstr(got, i % 2 ? "namer_inner" : "namer_outer"));
		free(got);
	}
	for (i = 0; i < 100; i++)
		ms_namer_drop(n, jobs[i]);
	assert_null(wait_site(n, jobs[N - 1]));       /* asked once: the caller names it again */
	ms_namer_free(n);                                   /* jobs 100..289 never asked: freed with it */
	ms_symbols_free(s);
}

/* Stopped with jobs queued and one likely being named: it returns once that one is named; then freed whole. */
static void stopped_then_freed(void **state)
{
	enum { N = 200 };
	uint64_t chain[N][2];
	struct ms_symbols *s = ms_symbols_new();
	struct ms_name_job *jobs[N];
	struct ms_namer *n;
	struct text t[32];
	int i;

	(void)state;
	ms_namer_stop(NULL);
	expect_own_build_ids(s);
	map_own_code(s, t, 32);
	n = new_namer(s, true);
	for (i = 0; i < N; i++) {
		chain[i][0] = (uint64_t)(uintptr_t)namer_inner + 1 + (uint64_t)(i % 5);
		chain[i][1] = (uint64_t)(uintptr_t)getpid + 1 + (uint64_t)i;
	}
	pin_and_submit(n, s, chain, N, jobs);
	ms_namer_stop(n);                                   /* 192 handed over, 8 still the caller's */
	ms_namer_free(n);
	ms_symbols_free(s);
}

/* No namer where MAPSCOPE_NAMER=off, nor where the process may run on one CPU alone or hold few descriptors. */
static void none_where_it_cannot_pay(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	struct rlimit rl, low;
	cpu_set_t all, one;

	(void)state;
	setenv("MAPSCOPE_NAMER", "off", 1);
	assert_null(ms_namer_new(s, SITE_LEN, 0));
	unsetenv("MAPSCOPE_NAMER");
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	if (CPU_COUNT(&all) < 2) {
		ms_symbols_free(s);
		skip();
	}
	ms_namer_free(ms_namer_new(s, SITE_LEN, 0));           /* two CPUs: one is made (freed at once) */
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_null(ms_namer_new(s, SITE_LEN, 0));
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);     /* few descriptors: none either */
	if (rl.rlim_cur >= 4096) {
		low = rl;
		low.rlim_cur = 1024;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
		assert_null(ms_namer_new(s, SITE_LEN, 0));
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sites_as_the_pin_names),
		cmocka_unit_test(sites_and_chains_as_the_pin_names),
		cmocka_unit_test(unusable_binary_raw_and_quiet),
		cmocka_unit_test(gone_binary_read_as_the_caller_mapped_it),
		cmocka_unit_test(no_mapping_read_from_the_path_there),
		cmocka_unit_test(unreadable_binary_handed_back),
		cmocka_unit_test(compressed_binary_read_from_the_path_gabi),
		cmocka_unit_test(compressed_binary_read_from_the_path_gnu),
		cmocka_unit_test(code_frames_as_the_caller_names),
		cmocka_unit_test(code_symbols_as_the_caller_names),
		cmocka_unit_test_setup_teardown(answers_kept_for_the_next_run, cache_setup, cache_teardown),
		cmocka_unit_test(waited_for_first),
		cmocka_unit_test(stopped_then_freed),
		cmocka_unit_test(none_where_it_cannot_pay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
