/*
 * Hugepage advice within a budget (analysis/hugebudget.c), on advice made
 * by hand: the best-ranked regions whose spans fit are kept, the rest left
 * out with the reason first; a smaller region ranked lower still fits where
 * a larger one did not. Two regions within a tenth of each other by the
 * figure that ranked them are level across the budget's line: both say the
 * choice is arbitrary, and by first touches alone, how to tell them apart.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/hugebudget.h"

#define MIB (1ULL << 20)
#define RMAX 512

static struct ms_region reg[4];
static char reasons[4][RMAX];
static struct ms_huge_advice v[4];

/* Advised region i of spans 2 MiB spans, ranked by benefit and hot bytes as given. */
static void advised(size_t i, uint32_t spans, uint64_t benefit, uint64_t hot)
{
	reg[i] = (struct ms_region){ .id = (uint32_t)i, .start = 0x40000000ULL * (i + 1) };
	reg[i].end = reg[i].start + spans * 2 * MIB;
	snprintf(reasons[i], RMAX, "dense %zu", i);
	v[i] = (struct ms_huge_advice){ .region = &reg[i], .start = reg[i].start, .end = reg[i].end, .spans = spans,
					.aligned_spans = spans, .benefit = benefit, .hot_bytes = hot, .advised = true,
					.reason = reasons[i] };
}

static void fit(size_t n, uint64_t bytes, enum ms_huge_rank by, const char *evidence)
{
	struct ms_huge_budget b = { bytes, by, evidence, RMAX };

	ms_huge_budget_fit(v, n, &b);
}

/* Two tables of 32 MiB, equal by first touches, room for one: the first kept, both say they tie. */
static void equal_by_first_touches(void **state)
{
	(void)state;
	advised(0, 16, 8176, 0);
	advised(1, 16, 8176, 0);
	fit(2, 32 * MIB, MS_HUGE_RANK_FAULTS, "first touches (page faults)");
	assert_true(v[0].advised);
	assert_false(v[0].no_room);
	assert_int_equal(v[0].end, reg[0].end);
	assert_false(v[1].advised);
	assert_true(v[1].no_room);
	assert_int_equal(v[1].start, 0);
	assert_int_equal(v[1].end, 0);
	assert_ptr_equal(v[1].level_with, &reg[0]);
	assert_ptr_equal(v[0].level_with, &reg[1]);
	assert_string_equal(v[1].reason, "no room: its 32 MiB of hugepages do not fit in the 0 MiB the budget of "
			    "32 MiB has left after the regions ranked above it; dense 1; it ranks level with the region "
			    "at 0x40000000, kept, by first touches (page faults): which of the two deserves the room "
			    "cannot be told: record with --referenced to rank them by ongoing access");
	assert_string_equal(v[0].reason, "dense 0; kept in the budget over the region at 0x80000000, which ranks "
			    "level with it by first touches (page faults): the choice between them is arbitrary: "
			    "record with --referenced to rank them by ongoing access");
}

/* Ranked by ongoing access, 8 MiB against 1 MiB used per interval: the hot one kept, no tie, no hint. */
static void parted_by_ongoing_access(void **state)
{
	(void)state;
	advised(0, 16, 8176, 8 * MIB);
	advised(1, 16, 8176, 1 * MIB);
	fit(2, 32 * MIB, MS_HUGE_RANK_ACCESS, "accessed bits per interval (record --referenced)");
	assert_true(v[0].advised);
	assert_true(v[1].no_room);
	assert_null(v[0].level_with);
	assert_null(v[1].level_with);
	assert_string_equal(v[0].reason, "dense 0");
	assert_null(strstr(v[1].reason, "level"));
	/* Within a tenth (8 against 7.5 MiB): level, and no hint, as the evidence is ongoing access already. */
	advised(0, 16, 8176, 8 * MIB);
	advised(1, 16, 8176, 15 * MIB / 2);
	fit(2, 32 * MIB, MS_HUGE_RANK_ACCESS, "accessed bits per interval (record --referenced)");
	assert_ptr_equal(v[1].level_with, &reg[0]);
	assert_non_null(strstr(v[1].reason, "cannot be told"));
	assert_null(strstr(v[1].reason, "record with"));
}

/* 40 MiB of room: the first (32) fits, the second (16) does not, the third (8) does; unadvised ones stay as they are. */
static void greedy_in_rank_order(void **state)
{
	(void)state;
	advised(0, 16, 9000, 0);
	advised(1, 8, 5000, 0);
	advised(2, 4, 2000, 0);
	advised(3, 4, 100, 0);
	v[3].advised = false;
	fit(4, 40 * MIB, MS_HUGE_RANK_FAULTS, "first touches (page faults)");
	assert_true(v[0].advised);
	assert_true(v[1].no_room);
	assert_true(v[2].advised);
	assert_false(v[3].advised);
	assert_false(v[3].no_room);
	assert_string_equal(v[3].reason, "dense 3");
	assert_null(v[1].level_with);           /* 5000 is not within a tenth of 9000 nor of 2000 */
	assert_non_null(strstr(v[1].reason, "do not fit in the 8 MiB the budget of 40 MiB has left"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_by_first_touches),
		cmocka_unit_test(parted_by_ongoing_access),
		cmocka_unit_test(greedy_in_rank_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
