/*
 * PERF_SAMPLE_DATA_SRC, decoded: what a hardware memory sample (Intel
 * PEBS, AMD IBS, Arm SPE) says of its access: the operation, the level of
 * the memory hierarchy that served it, whether it missed the TLB, snoop,
 * lock and block. PEBS names levels by bits (mem_lvl), IBS and SPE by a
 * number (mem_lvl_num) with mem_lvl's NA bit; both are read.
 */
#ifndef MAPSCOPE_DATASRC_H
#define MAPSCOPE_DATASRC_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ms_mem_op { MS_MEM_OP_NA, MS_MEM_OP_LOAD, MS_MEM_OP_STORE, MS_MEM_OP_PREFETCH, MS_MEM_OP_EXEC };

/* Where the data came from, nearest first. */
enum ms_mem_level {
	MS_MEM_LVL_NA,          /* not said */
	MS_MEM_LVL_L1, MS_MEM_LVL_LFB, MS_MEM_LVL_L2, MS_MEM_LVL_L3, MS_MEM_LVL_L4,
	MS_MEM_LVL_CACHE,       /* some cache, not said which */
	MS_MEM_LVL_RAM,         /* local DRAM */
	MS_MEM_LVL_REMOTE_CACHE,
	MS_MEM_LVL_REMOTE_RAM,
	MS_MEM_LVL_PMEM, MS_MEM_LVL_CXL, MS_MEM_LVL_IO, MS_MEM_LVL_UNCACHED,
	MS_MEM_NR_LEVELS,
};

enum ms_mem_tlb { MS_MEM_TLB_NA, MS_MEM_TLB_HIT, MS_MEM_TLB_MISS };

enum ms_mem_snoop { MS_MEM_SNOOP_NA, MS_MEM_SNOOP_NONE, MS_MEM_SNOOP_HIT, MS_MEM_SNOOP_MISS,
		    MS_MEM_SNOOP_HITM, MS_MEM_SNOOP_FWD, MS_MEM_SNOOP_PEER };

struct ms_data_src {
	enum ms_mem_op op;
	enum ms_mem_level level;
	bool level_hit;          /* the level said hit (PEBS: the access was served there) */
	bool level_miss;         /* the level said miss */
	bool remote;             /* on another node or socket */
	enum ms_mem_tlb tlb;
	bool tlb_walk;           /* the page walker was needed (a miss of every TLB level) */
	enum ms_mem_snoop snoop;
	bool locked;
	bool blocked;            /* blocked on data or address */
};

/* Decodes src (0: nothing said: every field NA). */
void ms_data_src_decode(uint64_t src, struct ms_data_src *out);

/* A level's name as reports print it ("L1", "RAM", "remote RAM"), or "-" for NA. */
const char *ms_mem_level_name(enum ms_mem_level level);

/* An operation's name ("load", "store", "prefetch", "exec"), or "-" for NA. */
const char *ms_mem_op_name(enum ms_mem_op op);

#ifdef __cplusplus
}
#endif
#endif
