/*
 * Hardware memory samples as PEBS, IBS and SPE write them (tests/tools/synth_rec.h),
 * decoded: per region, TLB misses, the level that served each access and the mean
 * weight; hugepage advice ranked by dTLB misses where samples say them; loads and
 * software prefetches to memory no mapping held reported as unmapped accesses
 * with what they were (the bad prefetch).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mapscope/aspace.h>
#include <mapscope/hugepages.h>
#include <mapscope/memlevel.h>
#include <mapscope/session.h>
#include <mapscope/unmapped.h>

#include "../tools/synth_rec.h"
#include "synth.h"

static int recording(enum sr_style st)
{
	int fd = memfd_create("hw", 0);

	assert_true(fd >= 0);
	assert_int_equal(sr_write_hw(fd, st, NULL), 0);
	return fd;
}

static struct ms_session *run(int fd, const struct ms_analysis *a, void *ctx, const struct ms_analysis *b,
			      void *bctx)
{
	struct ms_session *s = ms_session_open(synth_path(fd), NULL);

	assert_non_null(s);
	assert_int_equal(ms_session_add(s, a, ctx), 0);
	if (b)
		assert_int_equal(ms_session_add(s, b, bctx), 0);
	assert_int_equal(ms_session_run(s), 0);
	return s;
}

/* Each style's data sources give the same levels, misses and weights. */
static void levels_tlb_and_latency(void **state)
{
	const struct ms_memlevel_stat *st;
	const struct ms_region *r;
	struct ms_memlevel *m;
	struct ms_session *s;
	int style, fd;

	(void)state;
	for (style = SR_PEBS; style <= SR_SPE; style++) {
		fd = recording((enum sr_style)style);
		m = ms_memlevel_new();
		s = run(fd, &ms_memlevel_analysis, m, NULL, NULL);
		assert_true(ms_memlevel_applies(s));
		r = ms_aspace_lookup(ms_session_aspace(s), SR_PID, SR_HOT);
		assert_non_null(r);
		st = ms_memlevel_region(m, r->id);
		assert_non_null(st);
		assert_int_equal(st->samples, 180);
		assert_int_equal(st->tlb_misses, 50);
		assert_int_equal(st->levels[MS_MEM_LVL_L1], 110);    /* 100 loads, 10 stores */
		assert_int_equal(st->levels[MS_MEM_LVL_RAM], 50);
		assert_int_equal(st->levels[MS_MEM_LVL_L3], 20);
		assert_int_equal(ms_memlevel_top(st), MS_MEM_LVL_L1);
		assert_int_equal(st->weighted, 170);                   /* the stores carry none */
		assert_int_equal(st->weight_sum, 100 * 4 + 50 * 300 + 20 * 40);
		assert_true(ms_memlevel_latency(st) > 95.29 && ms_memlevel_latency(st) < 95.3);
		st = ms_memlevel_region(m, MS_MEMLEVEL_UNMAPPED);
		assert_non_null(st);
		assert_int_equal(st->samples, 2);
		assert_int_equal(st->tlb_misses, 1);
		ms_session_free(s);
		ms_memlevel_free(m);
		close(fd);
	}
}

/* A page-fault recording (with DATA_SRC, as perf record -d has it) has no such event: not added for it. */
static void faults_do_not_apply(void **state)
{
	struct ms_memlevel *m = ms_memlevel_new();
	struct ms_pdwriter *w;
	struct ms_session *s;
	int fd;

	(void)state;
	(void)synth_writer;              /* the hardware-event writer of synth.h: synth_rec.h's here */
	w = synth_writer_of(&fd, true);
	assert_non_null(w);
	put_map(w, 1 * MS, 0x10000000, 1 << 20, PROT_READ | PROT_WRITE, "//anon", 0);
	put_sample(w, 2 * MS, 0x400010, 0x10000000, LOAD_TLB_MISS);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	s = run(fd, &ms_memlevel_analysis, m, NULL, NULL);
	assert_false(ms_memlevel_applies(s));
	ms_session_free(s);
	ms_memlevel_free(m);
	close(fd);
}

/* The bad prefetch, in each style: a software prefetch to memory nothing maps, said as such. */
static void bad_prefetch_is_unmapped(void **state)
{
	const struct ms_unmapped_access *v;
	struct ms_unmapped *u;
	struct ms_session *s;
	size_t n, i, prefetch, load;
	int style, fd;

	(void)state;
	for (style = SR_PEBS; style <= SR_SPE; style++) {
		fd = recording((enum sr_style)style);
		u = ms_unmapped_new();
		s = run(fd, &ms_unmapped_analysis, u, NULL, NULL);
		assert_int_equal(ms_unmapped_results(u, &v, &n), 0);
		for (i = prefetch = load = 0; i < n; i++) {
			assert_int_equal(v[i].cls, MS_UNMAPPED_NEVER);
			prefetch += v[i].kind == MS_ACCESS_PREFETCH && v[i].address == SR_UNMAPPED && v[i].ip == 0x400100;
			load += v[i].kind == MS_ACCESS_LOAD && v[i].address == SR_UNMAPPED + 0x1000;
		}
		assert_int_equal(prefetch, 1);
		assert_int_equal(load, 1);
		ms_session_free(s);
		ms_unmapped_free(u);
		close(fd);
	}
}

/*
 * Two regions: 8 MiB read in full with no TLB miss (more faults saved by
 * hugepages), and 2 MiB whose every page missed the dTLB. Where samples
 * say TLB misses, the second is advised first.
 */
static void hugepages_rank_by_tlb_misses(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	const struct ms_huge_advice *v;
	struct ms_session_stats sst;
	struct ms_session *s;
	uint64_t t = 200 * SR_MS, i;
	int fd = memfd_create("rank", 0);
	struct sr w;

	(void)state;
	assert_true(fd >= 0);
	sr_hw_period = 1;                /* a sample per event: misses and faults weigh alike */
	assert_non_null(sr_open(&w, fd, SR_IBS, 0, 0));
	sr_hw_period = 10007;
	assert_int_equal(sr_comm(&w, 1 * SR_MS, SR_PID, "synth"), 0);
	assert_int_equal(sr_map(&w, 2 * SR_MS, SR_PID, SR_HOT, 8 << 20, PROT_READ | PROT_WRITE, "//anon"), 0);
	assert_int_equal(sr_map(&w, 2 * SR_MS, SR_PID, SR_COLD, 2 << 20, PROT_READ | PROT_WRITE, "//anon"), 0);
	for (i = 0; i < 2048; i++)
		assert_int_equal(sr_hw(&w, t++, 0x400010, SR_HOT + i * 4096, 4, sr_src(SR_IBS, 0)), 0);
	for (i = 0; i < 512; i++)
		assert_int_equal(sr_hw(&w, t++, 0x400020, SR_COLD + i * 4096, 300, sr_src(SR_IBS, 1)), 0);
	assert_int_equal(sr_close(&w), 0);
	s = run(fd, &ms_hugepages_analysis, hp, NULL, NULL);
	ms_session_stats(s, &sst);
	assert_int_equal(ms_hugepages_advice(hp, ms_session_aspace(s), sst.last_time + 1000 * SR_MS, &v, &i), 0);
	assert_true(ms_hugepages_have_tlb(hp));
	assert_true(i >= 2);
	assert_true(v[0].advised && v[1].advised);
	assert_int_equal(v[0].region->start, SR_COLD);
	assert_int_equal(v[0].tlb_misses, 512);
	assert_int_equal(v[1].region->start, SR_HOT);
	assert_true(v[1].benefit > v[0].benefit);    /* by faults saved alone, the other would lead */
	ms_session_free(s);
	ms_hugepages_free(hp);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(levels_tlb_and_latency),
		cmocka_unit_test(faults_do_not_apply),
		cmocka_unit_test(bad_prefetch_is_unmapped),
		cmocka_unit_test(hugepages_rank_by_tlb_misses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
