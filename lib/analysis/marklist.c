/*
 * The heatmap's marks, 16 bytes each. Sizes past what a page count holds
 * are rare (a reservation of 4 TiB, a crafted file's odd extent): they
 * lie in a second array by mark, found by bisection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/marklist.h"
#include "util/grow.h"

struct ms_mark_size {
	size_t mark;
	uint64_t size;
};

static const enum ms_aspace_op ops[4] = { MS_OP_MAP, MS_OP_UNMAP, MS_OP_REMAP, MS_OP_MADVISE };

int ms_marklist_add(struct ms_marklist *l, uint64_t time_ns, enum ms_aspace_op op, uint32_t id, uint64_t size)
{
	uint32_t code = 0, pages = MS_MARK_BIG;

	while (code < 3 && ops[code] != op)
		code++;
	if (ops[code] != op)
		return -EINVAL;
	if (MS_GROW(l->v, l->n + 1, l->cap, 64, SIZE_MAX, false))
		return -ENOMEM;
	if (!(size & 4095) && size >> 12 < MS_MARK_BIG)
		pages = (uint32_t)(size >> 12);
	else if (MS_GROW(l->big, l->nr_big + 1, l->cap_big, 16, SIZE_MAX, false))
		return -ENOMEM;
	else
		l->big[l->nr_big++] = (struct ms_mark_size){ .mark = l->n, .size = size };
	l->v[l->n++] = (struct ms_mark){ .time_ns = time_ns, .region = id, .pages_op = pages << 2 | code };
	return 0;
}

enum ms_aspace_op ms_marklist_op(const struct ms_marklist *l, size_t i)
{
	return ops[l->v[i].pages_op & 3];
}

uint64_t ms_marklist_size(const struct ms_marklist *l, size_t i)
{
	size_t lo = 0, hi = l->nr_big, mid;

	if (l->v[i].pages_op >> 2 != MS_MARK_BIG)
		return (uint64_t)(l->v[i].pages_op >> 2) << 12;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l->big[mid].mark < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return l->big[lo].size;
}

void ms_marklist_release(struct ms_marklist *l)
{
	free(l->v);
	free(l->big);
	memset(l, 0, sizeof(*l));
}
