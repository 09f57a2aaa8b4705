/*
 * The heatmap's marks: each keeps its time, region, op and the size its
 * region had, exactly, the sizes a page count cannot hold among them
 * (4 TiB and more, a size not of whole pages), in any mix and order;
 * a mark is 16 bytes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis/marklist.h"

static void marks_read_back(void **state)
{
	static const enum ms_aspace_op ops[4] = { MS_OP_MAP, MS_OP_UNMAP, MS_OP_REMAP, MS_OP_MADVISE };
	struct ms_marklist l = { 0 };
	uint64_t size[1000];
	size_t i;

	(void)state;
	assert_int_equal(sizeof(struct ms_mark), 16);
	for (i = 0; i < 1000; i++) {
		switch (i % 5) {
		case 0: size[i] = (i + 1) << 12; break;                  /* whole pages */
		case 1: size[i] = 4ULL << 40; break;                     /* 4 TiB: past a page count */
		case 2: size[i] = (5ULL << 40) + (i << 12); break;
		case 3: size[i] = (i << 12) + 100; break;                /* not of whole pages */
		default: size[i] = ((uint64_t)MS_MARK_BIG - 1) << 12; break;   /* the largest a count holds */
		}
		assert_int_equal(ms_marklist_add(&l, 1000 + i, ops[i % 4], (uint32_t)(i * 7), size[i]), 0);
	}
	assert_int_equal(l.n, 1000);
	assert_int_equal(l.nr_big, 600);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(l.v[i].time_ns, 1000 + i);
		assert_int_equal(l.v[i].region, i * 7);
		assert_int_equal(ms_marklist_op(&l, i), ops[i % 4]);
		assert_int_equal(ms_marklist_size(&l, i), size[i]);
	}
	assert_int_equal(ms_marklist_add(&l, 1, MS_OP_FORK, 1, 4096), -EINVAL);   /* not a mark's op */
	assert_int_equal(l.n, 1000);
	ms_marklist_release(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(marks_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
