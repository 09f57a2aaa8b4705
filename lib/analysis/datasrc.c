/*
 * PERF_SAMPLE_DATA_SRC, field by field (include/uapi/linux/perf_event.h's
 * perf_mem_data_src): mem_op, mem_lvl, mem_snoop, mem_lock, mem_dtlb,
 * mem_lvl_num, mem_remote, mem_snoopx, mem_blk. Where mem_lvl_num says a
 * level it wins (IBS, SPE, newer PEBS); otherwise the nearest level bit of
 * mem_lvl does.
 */
#include <stddef.h>
#include <linux/perf_event.h>

#include <mapscope/datasrc.h>

#include "util/log.h"

/* Uncached (kernel 6.9 on); older headers lack the name. */
#ifndef PERF_MEM_LVLNUM_UNC
#define PERF_MEM_LVLNUM_UNC 0x08
#endif

#define FIELD(src, shift, bits) (((src) >> (shift)) & ((1ULL << (bits)) - 1))

static enum ms_mem_op op_of(uint64_t op)
{
	if (op & PERF_MEM_OP_LOAD)
		return MS_MEM_OP_LOAD;
	if (op & PERF_MEM_OP_STORE)
		return MS_MEM_OP_STORE;
	if (op & PERF_MEM_OP_PFETCH)
		return MS_MEM_OP_PREFETCH;
	if (op & PERF_MEM_OP_EXEC)
		return MS_MEM_OP_EXEC;
	return MS_MEM_OP_NA;
}

/* mem_lvl_num, where it says a level. */
static enum ms_mem_level level_of_num(uint64_t num)
{
	switch (num) {
	case PERF_MEM_LVLNUM_L1: return MS_MEM_LVL_L1;
	case PERF_MEM_LVLNUM_L2: return MS_MEM_LVL_L2;
	case PERF_MEM_LVLNUM_L3: return MS_MEM_LVL_L3;
	case PERF_MEM_LVLNUM_L4: return MS_MEM_LVL_L4;
	case PERF_MEM_LVLNUM_LFB: return MS_MEM_LVL_LFB;
	case PERF_MEM_LVLNUM_RAM: return MS_MEM_LVL_RAM;
	case PERF_MEM_LVLNUM_PMEM: return MS_MEM_LVL_PMEM;
	case PERF_MEM_LVLNUM_CXL: return MS_MEM_LVL_CXL;
	case PERF_MEM_LVLNUM_IO: return MS_MEM_LVL_IO;
	case PERF_MEM_LVLNUM_ANY_CACHE: return MS_MEM_LVL_CACHE;
	case PERF_MEM_LVLNUM_UNC: return MS_MEM_LVL_UNCACHED;
	default: return MS_MEM_LVL_NA;
	}
}

/* mem_lvl's bits, nearest first; *remote for the remote ones. */
static enum ms_mem_level level_of_bits(uint64_t lvl, bool *remote)
{
	static const struct { uint64_t bit; enum ms_mem_level level; bool remote; } order[] = {
		{ PERF_MEM_LVL_L1, MS_MEM_LVL_L1, false }, { PERF_MEM_LVL_LFB, MS_MEM_LVL_LFB, false },
		{ PERF_MEM_LVL_L2, MS_MEM_LVL_L2, false }, { PERF_MEM_LVL_L3, MS_MEM_LVL_L3, false },
		{ PERF_MEM_LVL_LOC_RAM, MS_MEM_LVL_RAM, false },
		{ PERF_MEM_LVL_REM_CCE1, MS_MEM_LVL_REMOTE_CACHE, true },
		{ PERF_MEM_LVL_REM_CCE2, MS_MEM_LVL_REMOTE_CACHE, true },
		{ PERF_MEM_LVL_REM_RAM1, MS_MEM_LVL_REMOTE_RAM, true },
		{ PERF_MEM_LVL_REM_RAM2, MS_MEM_LVL_REMOTE_RAM, true },
		{ PERF_MEM_LVL_IO, MS_MEM_LVL_IO, false }, { PERF_MEM_LVL_UNC, MS_MEM_LVL_UNCACHED, false },
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (lvl & order[i].bit) {
			*remote = order[i].remote;
			return order[i].level;
		}
	return MS_MEM_LVL_NA;
}

static enum ms_mem_snoop snoop_of(uint64_t snoop, uint64_t snoopx)
{
	if (snoopx & PERF_MEM_SNOOPX_FWD)
		return MS_MEM_SNOOP_FWD;
	if (snoopx & PERF_MEM_SNOOPX_PEER)
		return MS_MEM_SNOOP_PEER;
	if (snoop & PERF_MEM_SNOOP_HITM)
		return MS_MEM_SNOOP_HITM;
	if (snoop & PERF_MEM_SNOOP_HIT)
		return MS_MEM_SNOOP_HIT;
	if (snoop & PERF_MEM_SNOOP_MISS)
		return MS_MEM_SNOOP_MISS;
	if (snoop & PERF_MEM_SNOOP_NONE)
		return MS_MEM_SNOOP_NONE;
	return MS_MEM_SNOOP_NA;
}

MS_EXPORT void ms_data_src_decode(uint64_t src, struct ms_data_src *d)
{
	uint64_t lvl = FIELD(src, PERF_MEM_LVL_SHIFT, 14), tlb = FIELD(src, PERF_MEM_TLB_SHIFT, 7);
	uint64_t num = FIELD(src, PERF_MEM_LVLNUM_SHIFT, 4);

	*d = (struct ms_data_src){ 0 };
	if (!src)
		return;
	d->op = op_of(FIELD(src, PERF_MEM_OP_SHIFT, 5));
	d->level = level_of_num(num);
	if (d->level == MS_MEM_LVL_NA)
		d->level = level_of_bits(lvl, &d->remote);
	d->remote |= FIELD(src, PERF_MEM_REMOTE_SHIFT, 1) == PERF_MEM_REMOTE_REMOTE;
	if (d->remote && d->level == MS_MEM_LVL_RAM)
		d->level = MS_MEM_LVL_REMOTE_RAM;
	else if (d->remote && d->level >= MS_MEM_LVL_L1 && d->level <= MS_MEM_LVL_CACHE)
		d->level = MS_MEM_LVL_REMOTE_CACHE;
	d->level_hit = !!(lvl & PERF_MEM_LVL_HIT);
	d->level_miss = !!(lvl & PERF_MEM_LVL_MISS);
	d->tlb = tlb & PERF_MEM_TLB_MISS ? MS_MEM_TLB_MISS : tlb & PERF_MEM_TLB_HIT ? MS_MEM_TLB_HIT : MS_MEM_TLB_NA;
	d->tlb_walk = !!(tlb & (PERF_MEM_TLB_WK | PERF_MEM_TLB_OS));
	d->snoop = snoop_of(FIELD(src, PERF_MEM_SNOOP_SHIFT, 5), FIELD(src, PERF_MEM_SNOOPX_SHIFT, 2));
	d->locked = FIELD(src, PERF_MEM_LOCK_SHIFT, 2) == PERF_MEM_LOCK_LOCKED;
	d->blocked = !!(FIELD(src, PERF_MEM_BLK_SHIFT, 3) & (PERF_MEM_BLK_DATA | PERF_MEM_BLK_ADDR));
}

MS_EXPORT const char *ms_mem_level_name(enum ms_mem_level level)
{
	static const char *const names[MS_MEM_NR_LEVELS] = {
		[MS_MEM_LVL_NA] = "-", [MS_MEM_LVL_L1] = "L1", [MS_MEM_LVL_LFB] = "LFB", [MS_MEM_LVL_L2] = "L2",
		[MS_MEM_LVL_L3] = "L3", [MS_MEM_LVL_L4] = "L4", [MS_MEM_LVL_CACHE] = "cache",
		[MS_MEM_LVL_RAM] = "RAM", [MS_MEM_LVL_REMOTE_CACHE] = "remote cache",
		[MS_MEM_LVL_REMOTE_RAM] = "remote RAM", [MS_MEM_LVL_PMEM] = "PMEM", [MS_MEM_LVL_CXL] = "CXL",
		[MS_MEM_LVL_IO] = "I/O", [MS_MEM_LVL_UNCACHED] = "uncached",
	};

	return (unsigned)level < MS_MEM_NR_LEVELS ? names[level] : "-";
}

MS_EXPORT const char *ms_mem_op_name(enum ms_mem_op op)
{
	static const char *const names[] = { "-", "load", "store", "prefetch", "exec" };

	return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "-";
}
