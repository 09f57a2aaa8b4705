/*
 * The per-region report, fed by the model driven by hand: samples and
 * distinct pages per region, the unmapped row, the time window (the
 * session's, the only one), the sort keys, the options (groups, children)
 * and runs of samples counted as one by one. Results are borrowed: the
 * tests free only the report (ASan finds a leak or a double free).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/report.h>
#include <mapscope/session.h>

#include "runs.h"
#include "synth.h"

#define P 4096ULL
#define PID 9

static struct ms_event map_ev(uint64_t t, uint64_t start, uint64_t end)
{
	struct ms_event e = { .kind = MS_EV_MAP, .time = t, .pid = PID, .tid = PID };

	e.map = (struct ms_event_map){ .start = start, .end = end, .vma_start = start, .vma_end = end,
				       .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE, .name = "//anon",
				       .via = MS_VIA_MMAP };
	return e;
}

static struct ms_event touch(uint64_t t, uint64_t addr)
{
	struct ms_event e = { .kind = MS_EV_SAMPLE, .time = t, .pid = PID, .tid = PID };

	e.sample.addr = addr;
	e.sample.has_addr = true;
	e.sample.fault = true;
	return e;
}

/*
 * The session's window [from, to], as the report hears it when a replay
 * starts: a session over a small synthetic recording, opened with that
 * window and not run. The report has no window of its own.
 */
static void window_of_session(struct ms_report *rep, uint64_t from, uint64_t to)
{
	struct ms_session_opts o = { .from_ns = from, .to_ns = to };
	struct ms_pdwriter *w;
	struct ms_session *s;
	int fd;

	w = synth_writer(&fd);
	assert_non_null(w);
	put_map(w, 1, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_sample(w, 2, 0x400010, 0x400000, LOAD);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	assert_non_null(s = ms_session_open(synth_path(fd), &o));
	ms_report_analysis.start(rep, s);
	ms_session_free(s);
	close(fd);
}

/*
 * Region a (16 pages at 1 MiB): 3 samples on 2 pages at 10-12 ns; region
 * b (4 pages at 2 MiB): 5 samples on its 4 pages (one twice) at 20-24 ns;
 * 2 samples where nothing is mapped, at 30 and 31 ns. runs: the samples go
 * to the model in one run.
 */
static struct ms_aspace *feed(struct ms_report *rep, bool runs)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_aspace_listener l = { .charge = ms_report_analysis.charge,
					.charge_run = ms_report_analysis.charge_run };
	struct ms_event maps[2] = { map_ev(1, 1 << 20, (1 << 20) + 16 * P), map_ev(2, 2 << 20, (2 << 20) + 4 * P) };
	struct ms_event s[10];
	size_t i, n = 0;

	assert_non_null(as);
	ms_aspace_set_listener(as, &l, rep);
	for (i = 0; i < 2; i++)
		assert_int_equal(ms_aspace_apply(as, &maps[i], NULL), 0);
	s[n++] = touch(10, (1 << 20) + 5);
	s[n++] = touch(11, (1 << 20) + 100);
	s[n++] = touch(12, (1 << 20) + 3 * P);
	for (i = 0; i < 5; i++)
		s[n++] = touch(20 + i, (2 << 20) + (i % 4) * P);
	s[n++] = touch(30, 5 << 20);
	s[n++] = touch(31, 6 << 20);
	if (runs)
		assert_int_equal(ms_aspace_apply_run(as, s, n), 0);
	else
		for (i = 0; i < n; i++)
			assert_int_equal(ms_aspace_apply(as, &s[i], NULL), 0);
	ms_aspace_finish(as);
	return as;
}

static void regions_pages_and_unmapped(void **state)
{
	static const enum ms_report_key by_region[] = { MS_SORT_REGION };
	const struct ms_report_row *rows, *un;
	struct ms_report *rep;
	struct ms_aspace *as;
	size_t n;
	int runs;

	(void)state;
	for (runs = 0; runs < 2; runs++) {
		rep = ms_report_new(NULL);
		as = feed(rep, runs);
		assert_int_equal(ms_report_rows(rep, as, by_region, 1, &rows, &n, &un), 0);
		assert_int_equal(n, 2);
		assert_int_equal(rows[0].region->start, 1 << 20);
		assert_int_equal(rows[0].samples, 3);
		assert_int_equal(rows[0].pages, 2);
		assert_int_equal(rows[0].first_ns, 10);
		assert_int_equal(rows[0].last_ns, 12);
		assert_int_equal(rows[1].samples, 5);
		assert_int_equal(rows[1].pages, 4);
		assert_int_equal(un->samples, 2);
		assert_int_equal(un->first_ns, 30);
		assert_int_equal(ms_report_total(rep), 10);
		ms_report_free(rep);
		ms_aspace_free(as);
	}
}


/*
 * The same rows one at a time: sorted without being made, each made as it
 * is read, in the order and with the figures of the array of every row;
 * none past the end; sorted again by other keys, in their order.
 */
static void rows_one_at_a_time(void **state)
{
	static const enum ms_report_key by_samples[] = { MS_SORT_SAMPLES }, by_region[] = { MS_SORT_REGION };
	const struct ms_report_row *rows, *un, *r;
	struct ms_report *rep = ms_report_new(NULL);
	struct ms_aspace *as = feed(rep, true);
	size_t n, i;

	(void)state;
	assert_int_equal(ms_report_sort(rep, as, by_samples, 1, &n), 0);
	assert_int_equal(n, 2);
	r = ms_report_row(rep, 0);
	assert_int_equal(r->region->start, 2 << 20);
	assert_int_equal(r->samples, 5);
	assert_int_equal(r->pages, 4);
	r = ms_report_row(rep, 1);
	assert_int_equal(r->region->start, 1 << 20);
	assert_int_equal(r->samples, 3);
	assert_int_equal(r->first_ns, 10);
	assert_int_equal(r->last_ns, 12);
	assert_null(ms_report_row(rep, 2));
	r = ms_report_row_counts(rep, 1);         /* the counts alone, of the same row */
	assert_int_equal(r->region->start, 1 << 20);
	assert_int_equal(r->samples, 3);
	assert_int_equal(r->last_ns, 12);
	assert_int_equal(r->nr_children, 0);
	assert_null(ms_report_row_counts(rep, 2));
	assert_int_equal(ms_report_unmapped(rep)->samples, 2);
	assert_int_equal(ms_report_sort(rep, as, by_region, 1, &n), 0);
	assert_int_equal(ms_report_row(rep, 0)->region->start, 1 << 20);
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	for (i = 0; i < n; i++) {                 /* the rows' array, and the order it leaves */
		r = ms_report_row(rep, i);
		assert_ptr_equal(r->region, rows[i].region);
		assert_int_equal(r->samples, rows[i].samples);
		assert_int_equal(r->pages, rows[i].pages);
	}
	assert_ptr_equal(un, ms_report_unmapped(rep));
	ms_report_free(rep);
	ms_aspace_free(as);
}

/*
 * A region's first sample keeps its page in the region's slot, with no
 * bitmap, until a second comes: a region touched once has one page; twice
 * on one page, one; four on three pages in two 2 MiB chunks (the first
 * page put in a bitmap when the second sample comes), three.
 */
static void one_sample_no_bitmap(void **state)
{
	static const enum ms_report_key by_region[] = { MS_SORT_REGION };
	const uint64_t base[3] = { 16ULL << 20, 32ULL << 20, 64ULL << 20 };
	const struct ms_report_row *rows, *un;
	struct ms_aspace_listener l = { .charge = ms_report_analysis.charge,
					.charge_run = ms_report_analysis.charge_run };
	struct ms_report *rep = ms_report_new(NULL);
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event e;
	size_t i, n;

	(void)state;
	ms_aspace_set_listener(as, &l, rep);
	for (i = 0; i < 3; i++) {
		e = map_ev(1 + i, base[i], base[i] + (4ULL << 20));
		assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
	}
	const struct ms_event s[] = { touch(10, base[0] + 8), touch(11, base[1] + P), touch(12, base[1] + P + 8),
				      touch(13, base[2] + P), touch(14, base[2] + (2ULL << 20)),
				      touch(15, base[2] + 2 * P), touch(16, base[2] + 2 * P + 4) };
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		assert_int_equal(ms_aspace_apply(as, &s[i], NULL), 0);
	assert_int_equal(ms_report_rows(rep, as, by_region, 1, &rows, &n, &un), 0);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].samples, 1);
	assert_int_equal(rows[0].pages, 1);
	assert_int_equal(rows[1].samples, 2);
	assert_int_equal(rows[1].pages, 1);
	assert_int_equal(rows[2].samples, 4);
	assert_int_equal(rows[2].pages, 3);
	assert_int_equal(rows[2].first_ns, 13);
	assert_int_equal(rows[2].last_ns, 16);
	ms_report_free(rep);
	ms_aspace_free(as);
}
static void window_and_keys(void **state)
{
	static const enum ms_report_key by_samples[] = { MS_SORT_SAMPLES }, by_pages[] = { MS_SORT_PAGES };
	const struct ms_report_row *rows, *un;
	struct ms_report *rep = ms_report_new(NULL);
	struct ms_aspace *as;
	size_t n;

	(void)state;
	window_of_session(rep, 11, 21);
	as = feed(rep, true);
	/* 11..21 ns: a's samples at 11 and 12, b's at 20 and 21; none unmapped. */
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	assert_int_equal(ms_report_total(rep), 4);
	assert_int_equal(un->samples, 0);
	assert_int_equal(rows[0].samples, 2);
	assert_int_equal(rows[1].samples, 2);
	ms_report_free(rep);
	ms_aspace_free(as);

	/* A session without a window: every sample. */
	rep = ms_report_new(NULL);
	window_of_session(rep, 0, UINT64_MAX);
	as = feed(rep, false);
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	assert_int_equal(ms_report_total(rep), 10);
	assert_int_equal(rows[0].region->start, 2 << 20);   /* 5 samples first */
	/* Asked again: new rows in place of the old, which the report frees. */
	assert_int_equal(ms_report_rows(rep, as, by_pages, 1, &rows, &n, &un), 0);
	assert_int_equal(rows[0].pages, 4);
	assert_int_equal(rows[1].pages, 2);
	ms_report_free(rep);
	ms_aspace_free(as);
}

/* The order the sort keys ask for, then the region id: -1, 0 or 1, as the test knows it. */
static int want_order(const struct ms_report_row *a, const struct ms_report_row *b, const enum ms_report_key *keys,
		      size_t nr)
{
	const struct ms_region *x = a->region, *y = b->region;
	uint64_t u[2], v[2];
	size_t k;
	int c;

	for (k = 0; k < nr; k++) {
		u[0] = v[0] = u[1] = v[1] = 0;
		switch (keys[k]) {
		case MS_SORT_SAMPLES: u[0] = b->samples; v[0] = a->samples; break;
		case MS_SORT_PAGES: u[0] = b->pages; v[0] = a->pages; break;
		case MS_SORT_PID: u[0] = x->pid; v[0] = y->pid; break;
		case MS_SORT_KIND: u[0] = x->kind; v[0] = y->kind; break;
		case MS_SORT_REGION: u[0] = x->pid; v[0] = y->pid; u[1] = x->start; v[1] = y->start; break;
		case MS_SORT_NAME:
			if ((c = strcmp(x->name, y->name)))
				return c < 0 ? -1 : 1;
			continue;
		}
		if (u[0] != v[0] || u[1] != v[1])
			return u[0] < v[0] || (u[0] == v[0] && u[1] < v[1]) ? -1 : 1;
	}
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * 3,000 regions of five processes and three kinds (anon, heap, stack),
 * mapped at random places, each with 0-3 samples on 0-3 pages (ties by
 * the thousand): rows sorted by every numeric key and mixes of them (each
 * row's keys sorted as words), with a name among them (compared through
 * the regions), with a key the library does not know (a caller's newer
 * header: it orders nothing), and with no key (the region ids alone: the
 * regions with no samples among the others, not put last as where every
 * key is a count), come in the order the test knows, every region once.
 */
static void sort_keys_order_every_row(void **state)
{
	static const enum ms_report_key keys[][3] = {
		{ MS_SORT_SAMPLES }, { MS_SORT_PAGES }, { MS_SORT_PID }, { MS_SORT_KIND }, { MS_SORT_REGION },
		{ MS_SORT_SAMPLES, MS_SORT_PID }, { MS_SORT_KIND, MS_SORT_PAGES, MS_SORT_REGION },
		{ MS_SORT_PID, MS_SORT_KIND, MS_SORT_SAMPLES }, { MS_SORT_SAMPLES, MS_SORT_NAME, MS_SORT_PID },
		{ (enum ms_report_key)99, MS_SORT_SAMPLES }, { MS_SORT_SAMPLES },
	};
	static const size_t nr[] = { 1, 1, 1, 1, 1, 2, 3, 3, 3, 2, 0 };
	static const char *const names[] = { "//anon", "[heap]", "[stack]" };
	struct ms_aspace_listener l = { .charge = ms_report_analysis.charge };
	struct ms_report *rep = ms_report_new(NULL);
	struct ms_aspace *as = ms_aspace_new();
	const struct ms_report_row *rows, *un;
	unsigned char seen[3000];
	struct ms_event e;
	uint64_t base;
	size_t i, k, n, t = 1;
	int j;

	(void)state;
	srand(11);
	ms_aspace_set_listener(as, &l, rep);
	for (i = 0; i < 3000; i++) {
		base = ((uint64_t)(rand() % 1000000) * 8 + 1) * P * 8 + i * 4 * P;
		e = map_ev(t++, base, base + 4 * P);
		e.pid = e.tid = 100 + (uint32_t)(i % 5);
		e.map.name = names[rand() % 3];
		assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
		for (j = rand() % 4; j > 0; j--) {
			e = touch(t++, base + (uint64_t)(rand() % 3) * P);
			e.pid = e.tid = 100 + (uint32_t)(i % 5);
			assert_int_equal(ms_aspace_apply(as, &e, NULL), 0);
		}
	}
	ms_aspace_finish(as);
	for (k = 0; k < sizeof(nr) / sizeof(nr[0]); k++) {
		assert_int_equal(ms_report_rows(rep, as, keys[k], nr[k], &rows, &n, &un), 0);
		assert_int_equal(n, 3000);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < n; i++) {
			assert_true(rows[i].region->id < 3000 && !seen[rows[i].region->id]);
			seen[rows[i].region->id] = 1;
			if (i)
				assert_int_equal(want_order(&rows[i - 1], &rows[i], keys[k], nr[k]), -1);
		}
	}
	ms_report_free(rep);
	ms_aspace_free(as);
}

/*
 * Runs of random length over two regions and unmapped space, against
 * counts the test keeps itself: samples, distinct pages, first and last
 * times per region, whole and within a window that cuts runs at both ends.
 * Region a spans five 2 MiB chunks, starting inside one, and its samples
 * come in clusters that wander across chunk edges.
 */
#define NR_TOUCH 20000

static void runs_counted_exactly(void **state)
{
	static const enum ms_report_key by_region[] = { MS_SORT_REGION };
	static struct ms_event s[NR_TOUCH];
	static uint8_t seen[2][2048];
	const uint64_t a0 = (64 << 20) + (1 << 20), a_pages = 2048, b0 = 256 << 20, b_pages = 16;
	const uint64_t windows[2][2] = { { 0, UINT64_MAX }, { 5000, 15000 } };
	uint64_t want[3], pages[2], first[3], last[3], page = 0, t;
	struct ms_event maps[2] = { map_ev(1, a0, a0 + a_pages * P), map_ev(2, b0, b0 + b_pages * P) };
	struct ms_aspace_listener l = { .charge = ms_report_analysis.charge,
					.charge_run = ms_report_analysis.charge_run };
	const struct ms_report_row *rows, *un;
	struct ms_report *rep;
	struct ms_aspace *as;
	size_t i, k, n, w;
	int which = 0, c;

	(void)state;
	srand(11);
	for (i = 0; i < NR_TOUCH; i++) {
		if (i % 40 == 0)                 /* a new cluster */
			which = (c = rand() % 10) < 6 ? 0 : c < 9 ? 1 : 2;
		if (which == 0)                  /* wanders: sometimes over a chunk's edge */
			page = (i % 40 ? page + (uint64_t)(rand() % 5) : (uint64_t)rand()) % a_pages;
		s[i] = touch(100 + i, which == 0 ? a0 + page * P + 8 :
				      which == 1 ? b0 + (uint64_t)(rand() % (int)b_pages) * P : (128 << 20) + i % 1000 * P);
	}
	for (w = 0; w < 2; w++) {
		memset(seen, 0, sizeof(seen));
		memset(want, 0, sizeof(want));
		memset(pages, 0, sizeof(pages));
		for (i = 0; i < NR_TOUCH; i++) {
			t = s[i].time;
			if (t < windows[w][0] || t > windows[w][1])
				continue;
			which = s[i].sample.addr - b0 < b_pages * P ? 1 : s[i].sample.addr - a0 < a_pages * P ? 0 : 2;
			if (!want[which]++)
				first[which] = t;
			last[which] = t;
			if (which < 2) {
				page = (s[i].sample.addr - (which ? b0 : a0)) / P;
				pages[which] += !seen[which][page];
				seen[which][page] = 1;
			}
		}
		rep = ms_report_new(NULL);
		window_of_session(rep, windows[w][0], windows[w][1]);
		as = ms_aspace_new();
		ms_aspace_set_listener(as, &l, rep);
		for (k = 0; k < 2; k++)
			assert_int_equal(ms_aspace_apply(as, &maps[k], NULL), 0);
		apply_in_runs(as, s, NR_TOUCH, 300);
		ms_aspace_finish(as);
		assert_int_equal(ms_report_rows(rep, as, by_region, 1, &rows, &n, &un), 0);
		assert_int_equal(n, 2);
		for (k = 0; k < 2; k++) {
			assert_int_equal(rows[k].region->start, k ? b0 : a0);
			assert_int_equal(rows[k].samples, want[k]);
			assert_int_equal(rows[k].pages, pages[k]);
			assert_int_equal(rows[k].first_ns, first[k]);
			assert_int_equal(rows[k].last_ns, last[k]);
		}
		assert_int_equal(un->samples, want[2]);
		assert_int_equal(ms_report_total(rep), want[0] + want[1] + want[2]);
		assert_true(want[0] > 1000 && want[1] > 1000 && pages[0] > 1000);
		ms_report_free(rep);
		ms_aspace_free(as);
	}
}

/*
 * Options: rows grouped by region and code binary, then by binary alone.
 * Without a session there are no symbols, so every binary is [unknown]:
 * one row per region, one for the samples of no region, or one in all.
 */
static void groups_from_options(void **state)
{
	static const enum ms_report_key by_samples[] = { MS_SORT_SAMPLES };
	const struct ms_report_row *rows, *un;
	struct ms_report *rep;
	struct ms_aspace *as;
	size_t n;

	(void)state;
	rep = ms_report_new(&(struct ms_report_opts){ .group = MS_GROUP_REGION | MS_GROUP_DSO });
	as = feed(rep, true);
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].samples, 5);
	assert_int_equal(rows[0].region->start, 2 << 20);
	assert_string_equal(rows[0].dso, "[unknown]");
	assert_int_equal(rows[1].samples, 3);
	assert_int_equal(rows[2].samples, 2);
	assert_null(rows[2].region);                      /* the unmapped samples, a row of their own */
	assert_null(rows[0].children);
	assert_int_equal(un->samples, 2);                 /* the unmapped row counts them too, as by region */
	assert_int_equal(un->pages, 2);
	assert_int_equal(ms_report_total(rep), 10);       /* once in the total */
	ms_report_free(rep);
	ms_aspace_free(as);

	rep = ms_report_new(&(struct ms_report_opts){ .group = MS_GROUP_DSO });
	as = feed(rep, false);
	assert_int_equal(ms_report_rows(rep, as, by_samples, 1, &rows, &n, &un), 0);
	assert_int_equal(n, 1);
	assert_null(rows[0].region);
	assert_int_equal(rows[0].samples, 10);
	assert_int_equal(rows[0].pages, 8);               /* 2 + 4 + the 2 unmapped */
	assert_int_equal(un->samples, 2);
	ms_report_free(rep);
	ms_aspace_free(as);
}

/*
 * Children come from the session's symbols: 6 samples of user code (which
 * cannot be named: [unknown]) and 3 of kernel code in one data region.
 * children 1 keeps the top one, 3 keeps both, most samples first; without
 * symbols in the session none are kept, whatever the options ask.
 */
static void children_from_session_symbols(void **state)
{
	static const enum ms_report_key by_region[] = { MS_SORT_REGION };
	const struct ms_report_row *rows, *un;
	struct ms_report *rep;
	struct ms_session *s;
	struct ms_pdwriter *w;
	unsigned int want;
	size_t n, i, data;
	int fd, k, pass;

	(void)state;
	w = synth_writer(&fd);
	assert_non_null(w);
	put_map(w, 1 * MS, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/x", 42);
	put_map(w, 2 * MS, 0x10000000, 64 << 10, PROT_READ | PROT_WRITE, "//anon", 0);
	for (i = 0; i < 9; i++)
		put_sample(w, 3 * MS + i, i % 3 == 2 ? 0xffffffff81000000ULL : 0x400010, 0x10000000 + i * 4096, LOAD);
	assert_int_equal(ms_pdwriter_close(w), 0);
	ms_pdwriter_free(w);
	for (pass = 0; pass < 3; pass++) {
		want = pass == 0 ? 1 : 3;
		s = ms_session_open(synth_path(fd), &(struct ms_session_opts){ .symbols = pass < 2,
									     .to_ns = UINT64_MAX });
		rep = ms_report_new(&(struct ms_report_opts){ .children = want });
		assert_non_null(s);
		assert_int_equal(ms_session_add(s, &ms_report_analysis, rep), 0);
		assert_int_equal(ms_session_run(s), 0);
		assert_int_equal(ms_report_rows(rep, ms_session_aspace(s), by_region, 1, &rows, &n, &un), 0);
		for (data = n, i = 0; i < n; i++)
			if (rows[i].region->start == 0x10000000)
				data = i;
		assert_true(data < n);
		assert_int_equal(rows[data].samples, 9);
		if (pass == 2) {
			assert_int_equal(rows[data].nr_children, 0);
		} else {
			assert_int_equal(rows[data].nr_children, pass == 0 ? 1 : 2);
			assert_string_equal(rows[data].children[0].symbol, "[unknown]");
			assert_int_equal(rows[data].children[0].samples, 6);
			if (pass == 1) {
				assert_string_equal(rows[data].children[1].symbol, "[kernel]");
				assert_int_equal(rows[data].children[1].samples, 3);
			}
		}
		for (i = 0; i < n; i++)             /* the code region: no samples, no children */
			for (k = 0; k < rows[i].nr_children; k++)
				assert_int_equal(i, data);
		ms_report_free(rep);
		ms_session_free(s);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(regions_pages_and_unmapped),
		cmocka_unit_test(rows_one_at_a_time),
		cmocka_unit_test(one_sample_no_bitmap),
		cmocka_unit_test(window_and_keys),
		cmocka_unit_test(sort_keys_order_every_row),
		cmocka_unit_test(runs_counted_exactly),
		cmocka_unit_test(groups_from_options),
		cmocka_unit_test(children_from_session_symbols),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
