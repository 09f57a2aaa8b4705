/*
 * ms_record on this very process: attach, read our maps from /proc, map
 * and touch three pages, and find in the file what we know we did: the
 * synthesised map of our own binary with its build-id, the kernel's MMAP2
 * of the three pages and a fault sample at each. Needs what record needs
 * (perf events with tracepoints): skipped, with the reason, without it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/log.h>
#include <mapscope/pdreader.h>
#include <mapscope/record.h>
#include <mapscope/symbols.h>

#include "perfdata/format.h"

#define PAGES 3

static char *argv0[] = { "test_record", NULL };

static const struct ms_record_opts opts = {
	.fault_period = 1, .mmap_pages = 64, .argc = 1, .argv = argv0,
};

/* What a page-fault sample of record's first event holds: IDENTIFIER, IP, TID, TIME, ADDR. */
struct fault_sample {
	struct perf_record_sample_head head;
	uint64_t time, addr;
};

struct found {
	char self[4096];
	uint64_t base;
	bool self_map, pages_map;
	int faults[PAGES];
};

static void look_at(struct ms_pdreader *pd, const struct perf_event_header *h, struct found *f)
{
	const struct perf_record_mmap2 *m = (const void *)h;
	const struct fault_sample *s = (const void *)h;
	uint64_t page;

	if (h->type == PERF_RECORD_MMAP2 && m->pid == (uint32_t)getpid()) {
		f->self_map |= (m->prot & PROT_EXEC) && !strcmp(m->filename, f->self);
		/* The kernel's MMAP2 covers the VMA, merged with a neighbour where it was. */
		f->pages_map |= m->start <= f->base && m->start + m->len >= f->base + PAGES * 4096;
	}
	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*s) ||
	    ms_pdreader_evsel_by_id(pd, s->head.identifier) != 0 || s->head.tid != (uint32_t)gettid())
		return;
	page = (s->addr - f->base) / 4096;
	if (s->addr >= f->base && page < PAGES)
		f->faults[page]++;
}

static void records_what_this_process_does(void **state)
{
	struct ms_record *r = *state;
	int fd = memfd_create("test_record", MFD_CLOEXEC), i, n;
	const struct perf_event_header *h;
	unsigned char id[64], *p;
	const unsigned char *fid;
	const char *path;
	struct ms_record_stats st;
	struct ms_pdreader *pd;
	struct found f = { 0 };
	char name[64];
	size_t len;
	bool have_id = false;

	assert_true(fd >= 0);
	assert_true(readlink("/proc/self/exe", f.self, sizeof(f.self) - 1) > 0);
	assert_int_equal(ms_record_attach(r, getpid()), 0);
	assert_int_equal(ms_record_start(r, fd), 0);
	assert_int_equal(ms_record_enable(r), 0);
	assert_int_equal(ms_record_synthesize(r, getpid()), 0);
	p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	f.base = (uint64_t)(uintptr_t)p;
	for (i = 0; i < PAGES; i++)
		p[i * 4096] = 1;
	munmap(p, PAGES * 4096);
	assert_int_equal(ms_record_stop(r), 0);
	assert_int_equal(ms_record_drain(r), 0);
	assert_int_equal(ms_record_close(r), 0);
	ms_record_stats(r, &st);
	assert_true(st.data_samples >= PAGES);
	assert_int_equal(st.lost, 0);
	assert_int_equal((off_t)st.bytes, lseek(fd, 0, SEEK_END));

	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	pd = ms_pdreader_open(name);
	assert_non_null(pd);
	assert_false(ms_pdreader_unfinished(pd));
	while ((n = ms_pdreader_next(pd, &h)) == 1)
		look_at(pd, h, &f);
	assert_int_equal(n, 0);
	assert_true(f.self_map);
	assert_true(f.pages_map);
	for (i = 0; i < PAGES; i++)
		assert_int_equal(f.faults[i], 1);
	/* Our binary's build-id, read when its (synthesised) map went by. */
	n = ms_elf_build_id(f.self, id, sizeof(id));
	for (i = 0; ms_pdreader_build_id(pd, (size_t)i, &path, &fid, &len); i++)
		have_id |= !strcmp(path, f.self) && n > 0 && len == (size_t)n && !memcmp(fid, id, len);
	assert_true(n <= 0 || have_id);
	ms_pdreader_free(pd);
	close(fd);
}

static int new_record(void **state)
{
	*state = ms_record_new(&opts);
	return *state ? 0 : -1;
}

static int free_record(void **state)
{
	ms_record_free(*state);
	ms_record_free(NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(records_what_this_process_does, new_record, free_record),
	};
	struct ms_record *probe;

	ms_log_set(NULL, NULL);
	probe = ms_record_new(&opts);
	if (!probe) {
		printf("SKIP: cannot open record's events here (%s): needs root or CAP_PERFMON, and tracefs\n",
		       strerror(errno));
		return 77;
	}
	ms_record_free(probe);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
