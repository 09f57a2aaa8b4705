/*
 * A prefetch's uprobe (record --prefetches, kernel/uprobe.h): a tracepoint
 * of a group named mapscope_PID whose fields are base, idx, disp and
 * scale. Each sample becomes a data sample at the prefetch's effective
 * address, base + idx * scale + disp, computed here at replay, with a data
 * source that says "prefetch" (as a hardware prefetch sample's does): the
 * model charges it at that instant like any access, and unmapped tells the
 * bad ones by that data source.
 */
#include <string.h>

#include "kernel/uprobe.h"
#include "stream/internal.h"

enum { F_BASE, F_IDX, F_DISP, F_SCALE, NR_FIELDS };

static const char *const fields[NR_FIELDS] = { "base", "idx", "disp", "scale" };

bool stream_classify_prefetch(struct evinfo *ei, const char *sys,
			      bool (*find)(const void *f, const char *field, uint16_t *off, uint16_t *size),
			      const void *f)
{
	int k;

	if (strncmp(sys, MS_UPROBE_GROUP_PREFIX, strlen(MS_UPROBE_GROUP_PREFIX)))
		return false;
	for (k = 0; k < NR_FIELDS; k++)
		if (!find(f, fields[k], &ei->off[k], &ei->size[k]) || ei->size[k] != (k == F_SCALE ? 1 : 8))
			return true;             /* not the format we know: left an ordinary event */
	ei->nr_fields = NR_FIELDS;
	ei->kind = EK_PREFETCH;
	return true;
}

void stream_prefetch_address(const struct evinfo *ei, struct ms_sample *smp)
{
	uint64_t base, idx, disp;
	uint8_t scale;

	smp->has_addr = false;
	if (!smp->raw || (uint32_t)ei->off[F_SCALE] + 1 > smp->raw_size ||
	    (uint32_t)ei->off[F_BASE] + 8 > smp->raw_size || (uint32_t)ei->off[F_IDX] + 8 > smp->raw_size ||
	    (uint32_t)ei->off[F_DISP] + 8 > smp->raw_size)
		return;                      /* damage: an ordinary sample, not charged */
	memcpy(&base, smp->raw + ei->off[F_BASE], 8);
	memcpy(&idx, smp->raw + ei->off[F_IDX], 8);
	memcpy(&disp, smp->raw + ei->off[F_DISP], 8);
	memcpy(&scale, smp->raw + ei->off[F_SCALE], 1);
	smp->addr = base + idx * scale + disp;   /* wraps as the CPU's address arithmetic does */
	smp->has_addr = true;
	smp->data_src = (uint64_t)PERF_MEM_OP_PFETCH << PERF_MEM_OP_SHIFT;
}
