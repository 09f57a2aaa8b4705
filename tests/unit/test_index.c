/*
 * The index's builder and its answers, without a recording: lists written
 * as deltas and whole lists come back as they were at each instant; exits,
 * execs and first appearances say what `maps` says; a thread's id and an
 * instant before the statistics settle are left to a replay; the changes
 * of a window come back in order, and not at all where they are unsorted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "session/index.h"

static const struct ms_index_stamp stamp = { 1000, 2000, 3000 };

struct got {
	struct ms_vma v[256];
	char names[256][32];
	size_t n;
};

static void keep(const struct ms_vma *v, void *ctx)
{
	struct got *g = ctx;

	assert_true(g->n < 256);
	g->v[g->n] = *v;
	snprintf(g->names[g->n], sizeof(g->names[0]), "%s", v->name);
	g->v[g->n].name = g->names[g->n];
	g->n++;
}

/* Version k of a process's list: k + 1 VMAs, the one at k / 2 named by k. */
static size_t version(size_t k, struct ms_vma *v, char names[][32])
{
	size_t i;

	for (i = 0; i <= k; i++) {
		snprintf(names[i], 32, i == k / 2 ? "v%zu" : "/lib/x%zu", i == k / 2 ? k : i);
		v[i] = (struct ms_vma){ .start = 0x1000 * (i + 1), .end = 0x1000 * (i + 2), .prot = 3,
					.ino = i, .name = names[i] };
	}
	return k + 1;
}

static struct ms_index *build(struct ms_buf *b, bool unsorted)
{
	struct ms_indexer *x = ms_indexer_new();
	struct ms_stream_stats st = { .samples = 5 };
	struct ms_vma v[128];
	char names[128][32];
	struct ms_index *ix;
	size_t k;

	assert_non_null(x);
	for (k = 0; k < 100; k++) {
		assert_int_equal(ms_indexer_seen(x, 10, 100), 0);
		assert_int_equal(ms_indexer_listing(x, 10, 100 + 10 * k, v, version(k, v, names)), 0);
	}
	assert_int_equal(ms_indexer_exit(x, 10, 1500, 1495, 7000), 0);
	assert_int_equal(ms_indexer_exec(x, 10, 1600), 0);
	assert_int_equal(ms_indexer_listing(x, 10, 1600, v, version(3, v, names)), 0);
	assert_int_equal(ms_indexer_seen(x, 20, 500), 0);
	assert_int_equal(ms_indexer_thread(x, 11), 0);
	for (k = 0; k < 50; k++) {
		struct ms_change c = { .op = MS_OP_MAP, .time_ns = unsorted && k == 20 ? 1 : 100 + k * 10,
				       .pid = k % 2 ? 10 : 20, .start = k, .name = k % 3 ? "a" : "", .prot = 1,
				       .advice = -1, .lock = -1 };
		assert_int_equal(ms_indexer_change(x, &c), 0);
	}
	ms_indexer_facts(x, 50, 90, 3, &st, NULL, 0);
	ms_buf_init(b);
	assert_int_equal(ms_indexer_serialize(x, &stamp, b), 0);
	ms_indexer_free(x);
	assert_int_equal(ms_index_parse(b->data, b->len, &stamp, &ix), 0);
	return ix;
}

static void lists_at_each_instant(void **state)
{
	struct ms_index_maps a;
	struct ms_vma want[128];
	char names[128][32];
	struct ms_buf b;
	struct ms_index *ix = build(&b, false);
	struct got *g = calloc(1, sizeof(*g));
	size_t k, i, n;

	(void)state;
	for (k = 0; k < 100; k++) {
		g->n = 0;
		/* Between two versions' keys: the earlier one. */
		assert_int_equal(ms_index_maps(ix, 10, 100 + 10 * k + (k % 10), false, &a, keep, g), 0);
		n = version(k, want, names);
		assert_int_equal(g->n, n);
		for (i = 0; i < n; i++) {
			assert_int_equal(g->v[i].start, want[i].start);
			assert_int_equal(g->v[i].ino, want[i].ino);
			assert_string_equal(g->v[i].name, want[i].name);
		}
		assert_true(a.seen);
		assert_int_equal(a.exited, 0);
	}
	assert_int_equal(ms_index_first_time(ix), 50);
	ms_index_free(ix);
	ms_buf_release(&b);
	free(g);
}

static void exits_execs_and_seen(void **state)
{
	struct ms_index_maps a;
	struct ms_buf b;
	struct ms_index *ix = build(&b, false);
	struct got *g = calloc(1, sizeof(*g));

	(void)state;
	assert_int_equal(ms_index_maps(ix, 10, 1550, false, &a, keep, g), 0);
	assert_int_equal(a.exited, 1495);
	assert_int_equal(ms_index_maps(ix, 10, 1600, false, &a, NULL, NULL), 0);
	assert_int_equal(a.exited, 0);                  /* an exec goes on */
	g->n = 0;
	assert_int_equal(ms_index_maps(ix, 10, 0, true, &a, keep, g), 0);
	assert_int_equal(g->n, 100);                    /* last: the list before the exit */
	assert_int_equal(ms_index_maps(ix, 20, 499, false, &a, NULL, NULL), 0);
	assert_false(a.seen);
	assert_int_equal(ms_index_maps(ix, 20, 500, false, &a, NULL, NULL), 0);
	assert_true(a.seen);
	assert_int_equal(ms_index_maps(ix, 30, 500, false, &a, NULL, NULL), 0);
	assert_false(a.seen);                           /* never there */
	assert_int_equal(ms_index_maps(ix, 11, 500, false, &a, NULL, NULL), 1);   /* a thread's id */
	assert_int_equal(ms_index_maps(ix, 10, 89, false, &a, NULL, NULL), 1);    /* before the stats settle */
	ms_index_free(ix);
	ms_buf_release(&b);
	free(g);
}

struct window {
	uint64_t times[64];
	char names[64][8];
	size_t n;
};

static void note(const struct ms_change *c, void *ctx)
{
	struct window *w = ctx;

	w->times[w->n] = c->time_ns;
	snprintf(w->names[w->n++], 8, "%s", c->name);
	assert_int_equal(c->advice, -1);
}

static void changes_of_a_window(void **state)
{
	struct window w = { 0 };
	struct ms_buf b;
	struct ms_index *ix = build(&b, false);
	size_t i;

	(void)state;
	assert_int_equal(ms_index_changes(ix, 200, 300, -1, note, &w), 0);
	assert_int_equal(w.n, 11);                      /* 200, 210, ..., 300: ends included */
	for (i = 0; i < w.n; i++)
		assert_int_equal(w.times[i], 200 + 10 * i);
	assert_string_equal(w.names[0], "a");           /* change 10 */
	assert_string_equal(w.names[2], "");            /* change 12 */
	w.n = 0;
	assert_int_equal(ms_index_changes(ix, 0, UINT64_MAX, 10, note, &w), 0);
	assert_int_equal(w.n, 25);
	ms_index_free(ix);
	ms_buf_release(&b);
	ix = build(&b, true);
	assert_int_equal(ms_index_changes(ix, 0, UINT64_MAX, -1, note, &w), 1);
	ms_index_free(ix);
	ms_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lists_at_each_instant),
		cmocka_unit_test(exits_execs_and_seen),
		cmocka_unit_test(changes_of_a_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
