/*
 * Hardware memory samples (PEBS/IBS/SPE style: address, weight, data
 * source), which this machine cannot take, on a synthetic recording: TLB
 * misses must reach the hugepage advice and the pprof profile, and loads
 * and software prefetches to unmapped memory must be reported as such.
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
#include <mapscope/pprof.h>
#include <mapscope/session.h>
#include <mapscope/unmapped.h>

#include <zlib.h>

#include "profile.pb-c.h"
#include "runs.h"
#include "synth.h"

static int path_fd;

/* Code at 0x400000; 4 MiB of data at 0x10000000, its first 2 MiB span loaded page by page with TLB misses. */
static void make_recording(void **state)
{
	struct ms_pdwriter *w = synth_writer(&path_fd);
	int i;

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

/* Replays the recording through a session with one analysis; *end: the last event's time. */
static struct ms_session *replay(const struct ms_analysis *a, void *analysis, uint64_t *end)
{
	struct ms_session_stats st;
	struct ms_session *s;

	s = ms_session_open(synth_path(path_fd), NULL);
	assert_non_null(s);
	assert_int_equal(ms_session_add(s, a, analysis), 0);
	assert_int_equal(ms_session_run(s), 0);
	ms_session_stats(s, &st);
	*end = st.last_time;
	return s;
}

static void tlb_misses_reach_hugepage_advice(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	const struct ms_huge_advice *v;
	struct ms_session *s;
	uint64_t end;
	size_t n;

	make_recording(state);
	s = replay(&ms_hugepages_analysis, hp, &end);
	assert_int_equal(ms_hugepages_advice(hp, ms_session_aspace(s), end, &v, &n), 0);
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
	ms_session_free(s);
	ms_hugepages_free(hp);
	close(path_fd);
}

/*
 * With TLB-miss samples, the advice ranks by them: region A (512 pages
 * loaded, 100 of them TLB misses: benefit 511 + 100) before B (300 pages,
 * all misses: 299 + 300) by benefit alone, but B first by TLB misses.
 */
static void tlb_misses_rank_the_advice(void **state)
{
	struct ms_pdwriter *w = synth_writer(&path_fd);
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	const struct ms_huge_advice *v;
	struct ms_session *s;
	uint64_t end;
	size_t n;
	int i;

	(void)state;
	assert_non_null(w);
	put_map(w, 1 * MS, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_map(w, 2 * MS, 0x10000000, 2 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	put_map(w, 2 * MS, 0x30000000, 2 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 512; i++)
		put_sample(w, 20 * MS + (uint64_t)i, 0x400010, 0x10000000 + (uint64_t)i * 4096, i < 100 ? LOAD_TLB_MISS : LOAD);
	for (i = 0; i < 300; i++)
		put_sample(w, 30 * MS + (uint64_t)i, 0x400020, 0x30000000 + (uint64_t)i * 4096, LOAD_TLB_MISS);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	s = replay(&ms_hugepages_analysis, hp, &end);
	assert_int_equal(ms_hugepages_advice(hp, ms_session_aspace(s), end, &v, &n), 0);
	assert_true(ms_hugepages_have_tlb(hp));
	assert_int_equal(n, 2);
	assert_true(v[0].advised && v[1].advised);
	assert_int_equal(v[0].start, 0x30000000);
	assert_int_equal(v[0].tlb_misses, 300);
	assert_int_equal(v[1].start, 0x10000000);
	assert_int_equal(v[1].tlb_misses, 100);
	assert_true(v[1].benefit > v[0].benefit);   /* so the order is the misses', not the benefit's */
	ms_session_free(s);
	ms_hugepages_free(hp);
	close(path_fd);
}

/* The profile ms_pprof_write wrote to fd, gunzipped and unpacked. */
static Perftools__Profiles__Profile *read_profile(int fd)
{
	static unsigned char gz[1 << 16], raw[1 << 18];
	z_stream z = { 0 };
	ssize_t n = pread(fd, gz, sizeof(gz), 0);

	assert_true(n > 0);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)n;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	inflateEnd(&z);
	return perftools__profiles__profile__unpack(NULL, sizeof(raw) - z.avail_out, raw);
}

/* Hardware samples: a tlb_misses sample type, and no faults; each sample's values by type. */
static void tlb_misses_in_pprof(void **state)
{
	struct ms_pprof *pp = ms_pprof_new();
	Perftools__Profiles__Profile *p;
	int64_t tot[4] = { 0 };
	struct ms_session *s;
	uint64_t end;
	size_t i, k;
	int fd = memfd_create("profile", 0);

	make_recording(state);
	assert_non_null(pp);
	assert_true(fd >= 0);
	s = replay(&ms_pprof_analysis, pp, &end);
	assert_int_equal(ms_pprof_write(pp, fd, 0, NULL, end), 0);
	p = read_profile(fd);
	assert_non_null(p);
	assert_int_equal(p->n_sample_type, 3);
	assert_string_equal(p->string_table[p->sample_type[0]->type], "samples");
	assert_string_equal(p->string_table[p->sample_type[1]->type], "pages");
	assert_string_equal(p->string_table[p->sample_type[2]->type], "tlb_misses");
	for (i = 0; i < p->n_sample; i++)
		for (k = 0; k < p->sample[i]->n_value; k++)
			tot[k] += p->sample[i]->value[k];
	assert_int_equal(tot[0], 514);   /* the 512 loads, the prefetch, the wild load */
	assert_int_equal(tot[1], 514);
	assert_int_equal(tot[2], 512);
	perftools__profiles__profile__free_unpacked(p, NULL);
	close(fd);
	ms_session_free(s);
	ms_pprof_free(pp);
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
	const struct ms_huge_advice *v;
	struct ms_event ev = { 0 };
	const uint64_t dense = 0x40000000, vast = 0x100000000000ULL, small = 0x200000000000ULL;
	size_t n, i, found = 0;
	uint64_t p;

	assert_non_null(hp);
	assert_non_null(as);
	/* The model driven by hand: the analysis hears its charges as a session would have it. */
	ms_aspace_set_listener(as, &(struct ms_aspace_listener){ .charge = ms_hugepages_analysis.charge }, hp);
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
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

static void bad_prefetch_and_wild_load(void **state)
{
	struct ms_unmapped *u = ms_unmapped_new();
	const struct ms_unmapped_access *acc;
	struct ms_session *s;
	uint64_t end;
	size_t n, i;
	int prefetch = 0, load = 0;

	make_recording(state);
	s = replay(&ms_unmapped_analysis, u, &end);
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
	ms_session_free(s);
	ms_unmapped_free(u);
	close(path_fd);
}

/*
 * Runs of page faults, read where they lie in the recording: every sample
 * counts as a fault, each page once, span by span. 3 MiB of anonymous
 * memory from 1 MiB into a 2 MiB span: 768 pages touched, the last 384
 * twice; runs cut by rounds.
 */
static void page_faults_in_runs_reach_hugepage_advice(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_pdwriter *w = synth_writer_of(&path_fd, true);
	const uint64_t base = 0x10100000;
	const struct ms_huge_advice *v;
	struct ms_session *s;
	uint64_t end, t = 20 * MS, faults = 0;
	size_t n, i;
	int pass;

	(void)state;
	assert_non_null(w);
	put_map(w, 2 * MS, base, 3 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (pass = 0; pass < 2; pass++)
		for (i = pass ? 384 : 0; i < 768; i++, faults++) {
			put_sample(w, t++, 0x400010, base + i * 4096 + 8, 0);
			if (i % 100 == 99)
				assert_int_equal(ms_pdwriter_finish_round(w), 0);
		}
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	s = replay(&ms_hugepages_analysis, hp, &end);
	assert_int_equal(ms_hugepages_advice(hp, ms_session_aspace(s), end + 100 * MS, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_false(ms_hugepages_have_tlb(hp));
	/*
	 * 256 pages of the first span and all 512 of the second are touched;
	 * only the second is whole inside the region, so only it is dense.
	 */
	assert_true(v[0].advised);
	assert_int_equal(v[0].start, 0x10200000);
	assert_int_equal(v[0].end, 0x10400000);
	assert_int_equal(v[0].spans, 1);
	assert_int_equal(v[0].aligned_spans, 1);
	assert_int_equal(v[0].faults_saved, 511);
	assert_int_equal(v[0].pages, 768);
	assert_int_equal(v[0].samples, faults);
	assert_int_equal(v[0].faults, 768 + 384);
	assert_int_equal(v[0].tlb_misses, 0);
	ms_session_free(s);
	ms_hugepages_free(hp);
	close(path_fd);
}

/*
 * Runs of events through ms_aspace_apply_run count what one sample at a
 * time does: faults and TLB misses of each sample, mixed within runs.
 */
static void hugepage_runs_as_one_by_one(void **state)
{
	static struct ms_event evs[3000];
	struct ms_hugepages *hp[2] = { ms_hugepages_new(NULL), ms_hugepages_new(NULL) };
	struct ms_aspace *as[2] = { ms_aspace_new(), ms_aspace_new() };
	struct ms_aspace_listener l[2] = { { .charge = ms_hugepages_analysis.charge },
					   { .charge = ms_hugepages_analysis.charge,
					     .charge_run = ms_hugepages_analysis.charge_run } };
	const struct ms_huge_advice *v[2];
	struct ms_event m = { .kind = MS_EV_MAP, .time = 1, .pid = 7, .tid = 7 };
	size_t n[2], i;
	int j;

	(void)state;
	m.map = (struct ms_event_map){ .start = 0x40100000, .end = 0x40700000, .vma_start = 0x40100000,
				       .vma_end = 0x40700000, .prot = PROT_READ | PROT_WRITE,
				       .flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	srand(3);
	for (i = 0; i < 3000; i++) {
		evs[i] = (struct ms_event){ .kind = MS_EV_SAMPLE, .time = 100000000 + i, .pid = 7, .tid = 7 };
		evs[i].sample.addr = 0x40100000 + (uint64_t)(rand() % 1536) * 4096;
		evs[i].sample.has_addr = true;
		evs[i].sample.fault = rand() % 3 == 0;
		evs[i].sample.data_src = rand() % 4 == 0 ? LOAD_TLB_MISS : LOAD;
	}
	for (j = 0; j < 2; j++) {
		ms_aspace_set_listener(as[j], &l[j], hp[j]);
		assert_int_equal(ms_aspace_apply(as[j], &m, NULL), 0);
		apply_in_runs(as[j], evs, 3000, j ? 200 : 0);
		assert_int_equal(ms_hugepages_advice(hp[j], as[j], 200000000, &v[j], &n[j]), 0);
	}
	assert_int_equal(n[1], n[0]);
	assert_true(n[0] > 0);
	for (i = 0; i < n[0]; i++) {
		assert_int_equal(v[1][i].pages, v[0][i].pages);
		assert_int_equal(v[1][i].samples, v[0][i].samples);
		assert_int_equal(v[1][i].faults, v[0][i].faults);
		assert_int_equal(v[1][i].tlb_misses, v[0][i].tlb_misses);
		assert_int_equal(v[1][i].start, v[0][i].start);
		assert_int_equal(v[1][i].benefit, v[0][i].benefit);
		assert_true(v[0][i].faults > 0 && v[0][i].faults < v[0][i].samples);
		assert_true(v[0][i].tlb_misses > 0 && v[0][i].tlb_misses < v[0][i].samples);
	}
	for (j = 0; j < 2; j++) {
		ms_aspace_free(as[j]);
		ms_hugepages_free(hp[j]);
	}
}

static int sees_nothing(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	(void)ctx;
	(void)s;
	(void)ev;
	return 0;
}

/*
 * Accesses to a PROT_NONE mapping that come as a run (the model looks the
 * protection up once a run) are counted as when each sample comes alone:
 * a session where another analysis sees every sample one by one is the
 * reference. 64 KiB of PROT_NONE between two read-write mappings; 20
 * loads from one function land in it in a row, among loads to the
 * mappings around it and to where nothing was ever mapped.
 */
static void guard_hits_in_runs(void **state)
{
	const struct ms_analysis one_by_one = { .name = "one-by-one", .event = sees_nothing,
						.flags = MS_ANALYSIS_SEES_SAMPLES };
	struct ms_pdwriter *w = synth_writer(&path_fd);
	const struct ms_unmapped_access *acc[2];
	struct ms_unmapped *u[2];
	struct ms_session *s[2];
	uint64_t t = 20 * MS, i;
	size_t n[2], k;
	int pass;

	(void)state;
	assert_non_null(w);
	put_map(w, 1 * MS, 0x10000000, 1 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	put_map(w, 1 * MS, 0x10100000, 64 << 10, PROT_NONE, "//anon", 0);
	put_map(w, 1 * MS, 0x10110000, 1 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 50; i++)
		put_sample(w, t++, 0x400010, 0x10000000 + i * 4096, LOAD);
	for (i = 0; i < 20; i++)                              /* the guard, 20 in a row */
		put_sample(w, t++, 0x400200, 0x10100000 + i * 64, LOAD);
	for (i = 0; i < 30; i++)
		put_sample(w, t++, 0x400010, 0x10110000 + i * 4096, LOAD);
	for (i = 0; i < 5; i++)                               /* never mapped */
		put_sample(w, t++, 0x400300, 0x30000000 + i * 4096, LOAD);
	for (i = 0; i < 7; i++)                               /* the guard again */
		put_sample(w, t++, 0x400200, 0x10108000 + i * 8, LOAD);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	for (pass = 0; pass < 2; pass++) {
		u[pass] = ms_unmapped_new();
		s[pass] = ms_session_open(synth_path(path_fd), NULL);
		assert_non_null(s[pass]);
		assert_int_equal(ms_session_add(s[pass], &ms_unmapped_analysis, u[pass]), 0);
		if (pass)
			assert_int_equal(ms_session_add(s[pass], &one_by_one, NULL), 0);
		assert_int_equal(ms_session_run(s[pass]), 0);
		assert_int_equal(ms_unmapped_results(u[pass], &acc[pass], &n[pass]), 0);
	}
	assert_int_equal(n[0], 2);
	assert_int_equal(n[1], n[0]);
	for (k = 0; k < n[0]; k++) {
		assert_int_equal(acc[0][k].cls, acc[1][k].cls);
		assert_int_equal(acc[0][k].ip, acc[1][k].ip);
		assert_int_equal(acc[0][k].count, acc[1][k].count);
		assert_int_equal(acc[0][k].address, acc[1][k].address);
		assert_int_equal(acc[0][k].first_ns, acc[1][k].first_ns);
		assert_int_equal(acc[0][k].last_ns, acc[1][k].last_ns);
		if (acc[0][k].cls == MS_UNMAPPED_GUARD) {
			assert_int_equal(acc[0][k].ip, 0x400200);
			assert_int_equal(acc[0][k].count, 27);
		} else {
			assert_int_equal(acc[0][k].cls, MS_UNMAPPED_NEVER);
			assert_int_equal(acc[0][k].count, 5);
		}
	}
	for (pass = 0; pass < 2; pass++) {
		ms_session_free(s[pass]);
		ms_unmapped_free(u[pass]);
	}
	close(path_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tlb_misses_reach_hugepage_advice),
		cmocka_unit_test(tlb_misses_in_pprof),
		cmocka_unit_test(tlb_misses_rank_the_advice),
		cmocka_unit_test(hugepage_advice_over_many_regions),
		cmocka_unit_test(bad_prefetch_and_wild_load),
		cmocka_unit_test(page_faults_in_runs_reach_hugepage_advice),
		cmocka_unit_test(hugepage_runs_as_one_by_one),
		cmocka_unit_test(guard_hits_in_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
