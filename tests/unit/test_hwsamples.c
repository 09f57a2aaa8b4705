/*
 * Hardware memory samples (PEBS/IBS/SPE style: address, weight, data
 * source), which this machine cannot take, on a synthetic recording: TLB
 * misses must reach the hugepage advice, and loads and software prefetches
 * to unmapped memory must be reported as such.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/aspace.h>
#include <mapscope/hugepages.h>
#include <mapscope/pdreader.h>
#include <mapscope/pdwriter.h>
#include <mapscope/stream.h>
#include <mapscope/unmapped.h>

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
	    PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)
#define ID 5
#define MS 1000000ULL
#define LOAD_TLB_MISS ((uint64_t)PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT | \
		       (uint64_t)(PERF_MEM_TLB_MISS | PERF_MEM_TLB_L1) << PERF_MEM_TLB_SHIFT)
#define PREFETCH ((uint64_t)PERF_MEM_OP_PFETCH << PERF_MEM_OP_SHIFT)
#define LOAD ((uint64_t)PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT)

struct sample {
	struct perf_event_header h;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id;
	uint32_t cpu, res;
	uint64_t period, weight, data_src;
};

struct mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, gen;
	uint32_t prot, flags;
	char name[8];
	uint32_t spid, stid;
	uint64_t time, id;
	uint32_t cpu, res;
	uint64_t identifier;
};

static void put_map(struct ms_pdwriter *w, uint64_t t, uint64_t addr, uint64_t len, uint32_t prot,
		    const char *name, uint64_t ino)
{
	struct mmap2 m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, 7, 7, addr, len, 0,
			   ino ? 8 : 0, 0, ino, 0, prot, MAP_PRIVATE, "", 7, 7, t, ID, 0, 0, ID };

	snprintf(m.name, sizeof(m.name), "%s", name);
	assert_int_equal(ms_pdwriter_write(w, &m.h), 0);
}

static void put_sample(struct ms_pdwriter *w, uint64_t t, uint64_t ip, uint64_t addr, uint64_t src)
{
	struct sample s = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(s) }, ID, ip, 7, 7, t, addr,
			    ID, 0, 0, 1, 30, src };

	assert_int_equal(ms_pdwriter_write(w, &s.h), 0);
}

static int path_fd;

/* Code at 0x400000; 4 MiB of data at 0x10000000, its first 2 MiB span loaded page by page with TLB misses. */
static void make_recording(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_RAW, .config = 0x1cd,
				     .sample_type = ST, .sample_id_all = 1, .mmap2 = 1, .mmap_data = 1,
				     .precise_ip = 2 };
	uint64_t id = ID;
	struct ms_pdwriter_evsel e = { &a, "cpu/mem-loads/", &id, 1 };
	char *argv[] = { "synthetic" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false };
	struct ms_pdwriter *w;
	int i;

	path_fd = memfd_create("hw", 0);
	w = ms_pdwriter_new(path_fd, &o);
	assert_non_null(w);
	put_map(w, 1 * MS, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_map(w, 2 * MS, 0x10000000, 4 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 512; i++)
		put_sample(w, 20 * MS + (uint64_t)i, 0x400010, 0x10000000 + (uint64_t)i * 4096 + 64, LOAD_TLB_MISS);
	put_sample(w, 30 * MS, 0x400100, 0x20000000, PREFETCH);  /* a bad prefetch */
	put_sample(w, 31 * MS, 0x400200, 0x20001000, LOAD);      /* a wild load */
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
}

struct run {
	struct ms_aspace *as;
	struct ms_hugepages *hp;
};

static int apply(const struct ms_event *ev, void *ctx)
{
	return ms_aspace_apply(ctx, ev, NULL);
}

/* Replays the recording with a listener installed by attach. */
static void replay(void (*attach)(void *, struct ms_aspace *), void *analysis, struct ms_aspace **as,
		   uint64_t *end)
{
	char path[64];
	struct ms_pdreader *r;
	struct ms_stream *s;
	struct ms_stream_stats st;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", path_fd);
	r = ms_pdreader_open(path);
	assert_non_null(r);
	s = ms_stream_new(r);
	assert_non_null(s);
	*as = ms_aspace_new();
	attach(analysis, *as);
	assert_int_equal(ms_stream_run(s, apply, *as), 0);
	ms_aspace_finish(*as);
	ms_stream_stats(s, &st);
	*end = st.last_time;
	ms_stream_free(s);
	ms_pdreader_free(r);
}

static void attach_hp(void *hp, struct ms_aspace *as) { ms_hugepages_attach(hp, as); }
static void attach_un(void *u, struct ms_aspace *as) { ms_unmapped_attach(u, as); }

static void tlb_misses_reach_hugepage_advice(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_huge_advice *v;
	struct ms_aspace *as;
	uint64_t end;
	size_t n;

	make_recording(state);
	replay(attach_hp, hp, &as, &end);
	assert_int_equal(ms_hugepages_advice(hp, as, end, &v, &n), 0);
	assert_true(ms_hugepages_have_tlb(hp));
	assert_int_equal(n, 1);
	assert_true(v[0].advised);
	assert_int_equal(v[0].start, 0x10000000);
	assert_int_equal(v[0].end, 0x10200000);
	assert_int_equal(v[0].spans, 1);
	assert_int_equal(v[0].aligned_spans, 2);
	assert_int_equal(v[0].pages, 512);
	assert_int_equal(v[0].faults, 0);            /* hardware samples, not faults */
	assert_int_equal(v[0].tlb_misses, 512);
	assert_int_equal(v[0].benefit, 511 + 512);   /* faults saved plus TLB misses */
	free(v);
	ms_aspace_free(as);
	ms_hugepages_free(hp);
	close(path_fd);
}

/*
 * Advice visits only the spans that were touched: 20,000 small regions
 * (each once), one dense 4 MiB region and one of 64 TiB with one page
 * touched. Each gets its own numbers; the large one is not walked span by
 * span (2^25 of them), nor the table once per region.
 */
static void hugepage_advice_over_many_regions(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = ms_aspace_new();
	struct ms_huge_advice *v;
	struct ms_event ev = { 0 };
	const uint64_t dense = 0x40000000, vast = 0x100000000000ULL, small = 0x200000000000ULL;
	size_t n, i, found = 0;
	uint64_t p;

	assert_non_null(hp);
	assert_non_null(as);
	ms_hugepages_attach(hp, as);
	ev.pid = ev.tid = 7;
	ev.kind = MS_EV_MAP;
	ev.map = (struct ms_event_map){ .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon",
					.via = MS_VIA_MMAP };
#define MAP(a, len) do { ev.kind = MS_EV_MAP; ev.map.start = ev.map.vma_start = (a); \
			 ev.map.end = ev.map.vma_end = (a) + (len); assert_int_equal(ms_aspace_apply(as, &ev, NULL), 0); } while (0)
#define TOUCH(a) do { ev.kind = MS_EV_SAMPLE; ev.sample.addr = (a); ev.sample.has_addr = true; \
		      ev.sample.fault = true; assert_int_equal(ms_aspace_apply(as, &ev, NULL), 0); } while (0)
	ev.time = 1;
	MAP(dense, 4 << 20);
	MAP(vast, 1ULL << 46);
	for (i = 0; i < 20000; i++)
		MAP(small + i * 0x10000, 0x4000);
	ev.time = 100000000;                      /* 0.1 s later: old enough to advise */
	for (p = dense; p < dense + (4 << 20); p += 4096)
		TOUCH(p);
	TOUCH(vast + (1ULL << 45));
	for (i = 0; i < 20000; i++)
		TOUCH(small + i * 0x10000);
#undef MAP
#undef TOUCH
	assert_int_equal(ms_hugepages_advice(hp, as, 200000000, &v, &n), 0);
	assert_int_equal(n, 20002);
	assert_true(v[0].advised);
	assert_int_equal(v[0].start, dense);
	assert_int_equal(v[0].end, dense + (4 << 20));
	assert_int_equal(v[0].spans, 2);
	assert_int_equal(v[0].pages, 1024);
	assert_int_equal(v[0].faults, 1024);
	for (i = 1; i < n; i++) {
		assert_false(v[i].advised);
		if (v[i].region->start == vast) {
			assert_int_equal(v[i].aligned_spans, 1u << 25);
			assert_int_equal(v[i].pages, 1);
			assert_non_null(strstr(v[i].reason, "too sparse"));
			found++;
		} else {
			assert_int_equal(v[i].pages, 1);
			assert_int_equal(v[i].aligned_spans, 0);
		}
	}
	assert_int_equal(found, 1);
	free(v);
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

static void bad_prefetch_and_wild_load(void **state)
{
	struct ms_unmapped *u = ms_unmapped_new();
	const struct ms_unmapped_access *acc;
	struct ms_aspace *as;
	uint64_t end;
	size_t n, i;
	int prefetch = 0, load = 0;

	make_recording(state);
	replay(attach_un, u, &as, &end);
	assert_int_equal(ms_unmapped_results(u, &acc, &n), 0);
	assert_int_equal(n, 2);                      /* the 512 mapped loads are not reported */
	for (i = 0; i < n; i++) {
		assert_int_equal(acc[i].cls, MS_UNMAPPED_NEVER);
		if (acc[i].kind == MS_ACCESS_PREFETCH) {
			prefetch++;
			assert_int_equal(acc[i].ip, 0x400100);
			assert_int_equal(acc[i].address, 0x20000000);
		}
		if (acc[i].kind == MS_ACCESS_LOAD) {
			load++;
			assert_int_equal(acc[i].ip, 0x400200);
		}
	}
	assert_int_equal(prefetch, 1);
	assert_int_equal(load, 1);
	ms_aspace_free(as);
	ms_unmapped_free(u);
	close(path_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tlb_misses_reach_hugepage_advice),
		cmocka_unit_test(hugepage_advice_over_many_regions),
		cmocka_unit_test(bad_prefetch_and_wild_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
