/*
 * The hugepage advisor, fed by the model driven by hand: a 4 MiB region
 * with 300 pages touched in its first 2 MiB span and 100 in its second.
 * The options decide what is dense, what benefit is worth advising and
 * what lives too short; the reason says which. Spans are whole 2 MiB
 * spans inside the region, so the counts never exceed them, and the
 * benefit is of the advised spans only. A sampled recording's faults
 * stand for their period's pages; other samples' pages cannot be scaled,
 * and too few of them cannot tell sparse. The advice is borrowed:
 * asked again it is made anew from what was counted since, and the test
 * frees only the advisor.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/hugepages.h>

#define P 4096ULL
#define BASE 0x40000000ULL          /* 2 MiB-aligned */
#define SPAN (2ULL << 20)
#define END_NS 200000000ULL         /* 0.2 s: the recording's end */

static void apply(struct ms_aspace *as, struct ms_event *ev)
{
	assert_int_equal(ms_aspace_apply(as, ev, NULL), 0);
}

/* Touches pages [first, first + n) of the region at time 0.1 s. */
static void touch(struct ms_aspace *as, uint64_t first, uint64_t n)
{
	struct ms_event ev = { .kind = MS_EV_SAMPLE, .time = 100000000, .pid = 7, .tid = 7 };
	uint64_t i;

	ev.sample.addr = 0;
	ev.sample.has_addr = true;
	ev.sample.fault = true;
	for (i = first; i < first + n; i++) {
		ev.sample.addr = BASE + i * P;
		apply(as, &ev);
	}
}

/* Samples, one every step pages of [first, first + n * step), each standing for period events. */
static void sample(struct ms_aspace *as, uint64_t base, uint64_t first, uint64_t n, uint64_t step, uint64_t period,
		   bool fault)
{
	struct ms_event ev = { .kind = MS_EV_SAMPLE, .time = 100000000, .pid = 7, .tid = 7 };
	uint64_t i;

	ev.sample.has_addr = true;
	ev.sample.fault = fault;
	ev.sample.period = period;
	for (i = 0; i < n; i++) {
		ev.sample.addr = base + (first + i * step) * P;
		apply(as, &ev);
	}
}

/* A model of one anonymous region [start, end), mapped at 1 ns, hp listening. */
static struct ms_aspace *region(struct ms_hugepages *hp, uint64_t start, uint64_t end)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event ev = { .kind = MS_EV_MAP, .time = 1, .pid = 7, .tid = 7 };

	assert_non_null(hp);
	assert_non_null(as);
	ms_aspace_set_listener(as, &(struct ms_aspace_listener){ .charge = ms_hugepages_analysis.charge }, hp);
	ev.map = (struct ms_event_map){ .start = start, .end = end, .vma_start = start, .vma_end = end,
					.prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon",
					.via = MS_VIA_MMAP };
	apply(as, &ev);
	return as;
}

static const struct ms_huge_advice *only(struct ms_hugepages *hp, struct ms_aspace *as)
{
	const struct ms_huge_advice *v;
	size_t n;

	assert_int_equal(ms_hugepages_advice(hp, as, END_NS, &v, &n), 0);
	assert_int_equal(n, 1);
	return v;
}

/* The model with the region mapped at 1 ns (and a shared file mapping, never a candidate), hp listening. */
static struct ms_aspace *model(struct ms_hugepages *hp)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event ev = { .kind = MS_EV_MAP, .time = 1, .pid = 7, .tid = 7 };

	assert_non_null(hp);
	assert_non_null(as);
	ms_aspace_set_listener(as, &(struct ms_aspace_listener){ .charge = ms_hugepages_analysis.charge }, hp);
	ev.map = (struct ms_event_map){ .start = BASE, .end = BASE + 2 * SPAN, .vma_start = BASE,
					.vma_end = BASE + 2 * SPAN, .prot = PROT_READ | PROT_WRITE,
					.flags = MAP_PRIVATE, .name = "//anon", .via = MS_VIA_MMAP };
	apply(as, &ev);
	ev.map = (struct ms_event_map){ .start = BASE + 4 * SPAN, .end = BASE + 5 * SPAN, .vma_start = BASE + 4 * SPAN,
					.vma_end = BASE + 5 * SPAN, .prot = PROT_READ, .flags = MAP_SHARED,
					.name = "/data/file", .ino = 9, .maj = 8, .via = MS_VIA_MMAP };
	apply(as, &ev);
	touch(as, 0, 300);
	touch(as, 512, 100);
	touch(as, 4 * 512, 512);      /* the file: not counted */
	return as;
}

static const struct ms_huge_advice *advice(struct ms_hugepages *hp, struct ms_aspace *as)
{
	const struct ms_huge_advice *v;
	size_t n;

	assert_int_equal(ms_hugepages_advice(hp, as, END_NS, &v, &n), 0);
	assert_int_equal(n, 1);                       /* the anonymous region alone */
	assert_int_equal(v[0].region->start, BASE);
	assert_int_equal(v[0].aligned_spans, 2);
	assert_non_null(v[0].reason);
	return v;
}

static void defaults_advise_the_dense_span(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = model(hp);
	const struct ms_huge_advice *v = advice(hp, as);

	(void)state;
	/* 256 pages make a span dense: the first only. */
	assert_true(v->advised);
	assert_int_equal(v->spans, 1);
	assert_int_equal(v->start, BASE);
	assert_int_equal(v->end, BASE + SPAN);
	assert_int_equal(v->pages, 400);
	assert_int_equal(v->faults, 400);
	assert_int_equal(v->faults_saved, 299);
	assert_int_equal(v->benefit, 299);
	assert_string_equal(v->reason, "dense: 1 of 2 spans with 300 pages touched on average; "
			    "saves 299 faults and 299 TLB entries");
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

static void options_decide(void **state)
{
	struct ms_hugepages_opts o = { .min_pages = 64 };
	struct ms_hugepages *hp = ms_hugepages_new(&o);
	struct ms_aspace *as = model(hp);
	const struct ms_huge_advice *v = advice(hp, as);

	(void)state;
	/* 64 pages make a span dense: both, the whole region. */
	assert_true(v->advised);
	assert_int_equal(v->spans, 2);
	assert_int_equal(v->end, BASE + 2 * SPAN);
	assert_int_equal(v->faults_saved, 398);
	ms_aspace_free(as);
	ms_hugepages_free(hp);

	o = (struct ms_hugepages_opts){ .min_benefit = 1000 };
	hp = ms_hugepages_new(&o);
	as = model(hp);
	v = advice(hp, as);
	assert_false(v->advised);
	assert_int_equal(v->start, 0);
	assert_int_equal(v->end, 0);
	assert_string_equal(v->reason, "benefit too small: 299 (minimum 1000)");
	ms_aspace_free(as);
	ms_hugepages_free(hp);

	o = (struct ms_hugepages_opts){ .min_life_ns = 1000000000 };
	hp = ms_hugepages_new(&o);
	as = model(hp);
	v = advice(hp, as);
	assert_false(v->advised);
	assert_string_equal(v->reason, "too short-lived: it lived 200.000 ms");
	ms_aspace_free(as);
	ms_hugepages_free(hp);

	o = (struct ms_hugepages_opts){ .min_pages = 400 };
	hp = ms_hugepages_new(&o);
	as = model(hp);
	v = advice(hp, as);
	assert_false(v->advised);
	assert_string_equal(v->reason, "too sparse: at most 300 of 512 pages touched in any 2 MiB span "
			    "(400 needed)");
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

/* Asked again after more samples: made anew, the first advice released by the advisor. */
static void advice_made_anew(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = model(hp);
	const struct ms_huge_advice *v = advice(hp, as);

	(void)state;
	assert_int_equal(v->spans, 1);
	assert_false(ms_hugepages_have_tlb(hp));
	touch(as, 512 + 100, 200);        /* the second span now dense too */
	v = advice(hp, as);
	assert_int_equal(v->spans, 2);
	assert_int_equal(v->pages, 600);
	assert_int_equal(v->end, BASE + 2 * SPAN);
	assert_non_null(strstr(v->reason, "dense: 2 of 2 spans"));
	ms_aspace_free(as);
	ms_hugepages_free(hp);
	ms_hugepages_free(NULL);
}

/*
 * A region from 4 KiB past a span's start to 4 KiB short of the third's
 * end, every page touched: only the middle span lies whole inside it. The
 * partial ones are counted in its pages but are never dense: 1 of 1, not
 * 3 of 1, and the faults saved are the whole span's 511.
 */
static void only_whole_spans_count(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = region(hp, BASE + P, BASE + 3 * SPAN - P);
	const struct ms_huge_advice *v;

	(void)state;
	sample(as, BASE, 1, 3 * 512 - 2, 1, 1, true);
	v = only(hp, as);
	assert_int_equal(v->aligned_spans, 1);
	assert_true(v->advised);
	assert_int_equal(v->spans, 1);
	assert_int_equal(v->start, BASE + SPAN);
	assert_int_equal(v->end, BASE + 2 * SPAN);
	assert_int_equal(v->pages, 3 * 512 - 2);
	assert_int_equal(v->faults_saved, 511);
	assert_int_equal(v->benefit, 511);
	assert_false(v->estimated);
	assert_int_equal(v->period, 1);
	assert_string_equal(v->reason, "dense: 1 of 1 spans with 512 pages touched on average; "
			    "saves 511 faults and 511 TLB entries");
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

/*
 * Four spans: dense, dense, sparse, dense. The advice covers the longest
 * run held, the first two; its benefit is theirs alone, not the third
 * dense span's, and the reason says so.
 */
static void benefit_of_advised_spans_only(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = region(hp, BASE, BASE + 4 * SPAN);
	const struct ms_huge_advice *v;

	(void)state;
	sample(as, BASE, 0, 2 * 512, 1, 1, true);
	sample(as, BASE, 2 * 512, 10, 1, 1, true);
	sample(as, BASE, 3 * 512, 300, 1, 1, true);
	v = only(hp, as);
	assert_true(v->advised);
	assert_int_equal(v->start, BASE);
	assert_int_equal(v->end, BASE + 2 * SPAN);
	assert_int_equal(v->spans, 2);
	assert_int_equal(v->pages, 2 * 512 + 10 + 300);
	assert_int_equal(v->faults_saved, 2 * 511);
	assert_int_equal(v->tlb_entries_now, 2 * 512);
	assert_int_equal(v->tlb_entries_huge, 2);
	assert_int_equal(v->benefit, 2 * 511);
	assert_non_null(strstr(v->reason, "dense: 3 of 4 spans"));
	assert_non_null(strstr(v->reason, "advised: the longest run of them it still holds, 2 spans"));
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

/*
 * record -c 16 of two spans touched whole: 32 faults a span, each standing
 * for 16 pages. Dense, as the full recording is, with 512 pages a span
 * and 16 faults a sample; said to be an estimate, from 1 in 16.
 */
static void sampled_faults_scale(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = region(hp, BASE, BASE + 2 * SPAN);
	const struct ms_huge_advice *v;

	(void)state;
	sample(as, BASE, 0, 64, 16, 16, true);
	v = only(hp, as);
	assert_true(v->advised);
	assert_int_equal(v->spans, 2);
	assert_int_equal(v->pages, 1024);
	assert_int_equal(v->faults, 1024);
	assert_int_equal(v->samples, 64);
	assert_int_equal(v->faults_saved, 2 * 511);
	assert_true(v->estimated);
	assert_int_equal(v->period, 16);
	assert_non_null(strstr(v->reason, "~ estimated from 1 in 16 faults"));
	ms_aspace_free(as);
	ms_hugepages_free(hp);

	/* Sparse stays sparse: 1 page a span, sampled 1 in 16, is 16 pages at most. */
	hp = ms_hugepages_new(NULL);
	as = region(hp, BASE, BASE + 2 * SPAN);
	sample(as, BASE, 0, 1, 512, 16, true);
	v = only(hp, as);
	assert_false(v->advised);
	assert_int_equal(v->pages, 16);
	assert_string_equal(v->reason, "too sparse: at most 16 of 512 pages touched in any 2 MiB span (256 needed); "
			    "~ estimated from 1 in 16 faults");
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

/*
 * Loads sampled 1 in 100: 20 pages seen in a span could be 2,000 loads on
 * every page of it, or on 20. Not "too sparse": cannot tell.
 */
static void sampled_loads_cannot_tell(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(NULL);
	struct ms_aspace *as = region(hp, BASE, BASE + SPAN);
	const struct ms_huge_advice *v;

	(void)state;
	sample(as, BASE, 0, 20, 25, 100, false);
	v = only(hp, as);
	assert_false(v->advised);
	assert_int_equal(v->pages, 20);
	assert_true(v->estimated);
	assert_non_null(strstr(v->reason, "cannot tell: at most 20 of 512 pages seen"));
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

/* Maps one more anonymous region [start, end) of process 7 at 1 ns. */
static void map_more(struct ms_aspace *as, uint64_t start, uint64_t end)
{
	struct ms_event ev = { .kind = MS_EV_MAP, .time = 1, .pid = 7, .tid = 7 };

	ev.map = (struct ms_event_map){ .start = start, .end = end, .vma_start = start, .vma_end = end,
					.prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon",
					.via = MS_VIA_MMAP };
	apply(as, &ev);
}

/*
 * Advice one at a time: five regions, two dense (400 and 300 pages), two
 * sparse (100 and 10), one too small to align (1 page); a budget of one
 * hugepage keeps the denser and leaves the other out. The order is the
 * array's: advised and left out first, by benefit, then the rest by
 * pages; each entry, reason and all, is the array's.
 */
static void one_at_a_time(void **state)
{
	struct ms_hugepages *hp = ms_hugepages_new(&(struct ms_hugepages_opts){ .budget = SPAN });
	const uint64_t at[5] = { BASE, BASE + 4 * SPAN, BASE + 8 * SPAN, BASE + 12 * SPAN, BASE + 16 * SPAN };
	const uint64_t pages[5] = { 300, 100, 400, 10, 1 }, want[5] = { 2, 0, 1, 3, 4 };
	struct ms_aspace *as = region(hp, at[0], at[0] + 2 * SPAN);
	const struct ms_huge_advice *a, *v;
	char *reasons[5];
	size_t n, i;

	(void)state;
	for (i = 1; i < 5; i++)
		map_more(as, at[i], i == 4 ? at[i] + 2 * P : at[i] + 2 * SPAN);
	for (i = 0; i < 5; i++)
		sample(as, at[i], 0, pages[i], 1, 1, true);
	assert_int_equal(ms_hugepages_sort(hp, as, END_NS, &n), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		a = ms_hugepages_advice_at(hp, i);
		assert_non_null(a);
		assert_int_equal(a->region->start, at[want[i]]);
		assert_int_equal(a->pages, pages[want[i]]);
		assert_int_equal(a->advised, i == 0);
		assert_int_equal(a->no_room, i == 1);
		reasons[i] = strdup(a->reason);
	}
	assert_null(ms_hugepages_advice_at(hp, n));
	assert_non_null(strstr(reasons[1], "no room"));
	assert_non_null(strstr(reasons[2], "too sparse: at most 100 of 512"));
	assert_non_null(strstr(reasons[4], "not 2 MiB-alignable"));
	assert_int_equal(ms_hugepages_advice(hp, as, END_NS, &v, &n), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(v[i].region->start, at[want[i]]);
		assert_string_equal(v[i].reason, reasons[i]);
		free(reasons[i]);
	}
	ms_aspace_free(as);
	ms_hugepages_free(hp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(only_whole_spans_count),
		cmocka_unit_test(benefit_of_advised_spans_only),
		cmocka_unit_test(sampled_faults_scale),
		cmocka_unit_test(sampled_loads_cannot_tell),
		cmocka_unit_test(defaults_advise_the_dense_span),
		cmocka_unit_test(options_decide),
		cmocka_unit_test(advice_made_anew),
		cmocka_unit_test(one_at_a_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
