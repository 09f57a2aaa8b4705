/*
 * Internal: the heatmap's marks, every map, unmap, remap and madvise of
 * every region, kept whether or not the region gets a band (a band may
 * come later), so one a region at least: 500,000 at 500,000 mappings. A
 * mark is 16 bytes, the region's size then in pages beside the op; a size
 * of 4 TiB or more, or not of whole pages, is kept exactly beside them.
 */
#ifndef MS_ANALYSIS_MARKLIST_H
#define MS_ANALYSIS_MARKLIST_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>

struct ms_mark {
	uint64_t time_ns;
	uint32_t region;                  /* its id */
	uint32_t pages_op;                /* pages << 2 | the op's code; pages MS_MARK_BIG: in the list's big */
};

#define MS_MARK_BIG ((1u << 30) - 1)

/* Zeroed: an empty list. */
struct ms_marklist {
	struct ms_mark *v;
	size_t n, cap;
	struct ms_mark_size *big;         /* by mark, in order */
	size_t nr_big, cap_big;
};

/* A mark of op (MS_OP_MAP, _UNMAP, _REMAP or _MADVISE) on region id, then size bytes large. 0 or -ENOMEM, l as it was. */
int ms_marklist_add(struct ms_marklist *l, uint64_t time_ns, enum ms_aspace_op op, uint32_t id, uint64_t size);

/* Mark i's op. */
enum ms_aspace_op ms_marklist_op(const struct ms_marklist *l, size_t i);

/* The size of mark i's region when it changed, in bytes. */
uint64_t ms_marklist_size(const struct ms_marklist *l, size_t i);

/* Frees what l holds; it is then empty. */
void ms_marklist_release(struct ms_marklist *l);

#endif
