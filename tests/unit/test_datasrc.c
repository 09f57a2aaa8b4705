/* PERF_SAMPLE_DATA_SRC decoded field by field, as PEBS (level bits) and IBS/SPE (level numbers) write it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include <mapscope/datasrc.h>

#define F(v, shift) ((uint64_t)(v) << (shift))

static struct ms_data_src dec(uint64_t src)
{
	struct ms_data_src d;

	ms_data_src_decode(src, &d);
	return d;
}

static void nothing_said(void **state)
{
	struct ms_data_src d = dec(0);

	(void)state;
	assert_int_equal(d.op, MS_MEM_OP_NA);
	assert_int_equal(d.level, MS_MEM_LVL_NA);
	assert_int_equal(d.tlb, MS_MEM_TLB_NA);
	assert_int_equal(d.snoop, MS_MEM_SNOOP_NA);
	assert_false(d.locked || d.blocked || d.remote || d.level_hit);
	assert_string_equal(ms_mem_level_name(d.level), "-");
}

static void op(void **state)
{
	(void)state;
	assert_int_equal(dec(F(PERF_MEM_OP_LOAD, PERF_MEM_OP_SHIFT)).op, MS_MEM_OP_LOAD);
	assert_int_equal(dec(F(PERF_MEM_OP_STORE, PERF_MEM_OP_SHIFT)).op, MS_MEM_OP_STORE);
	assert_int_equal(dec(F(PERF_MEM_OP_PFETCH, PERF_MEM_OP_SHIFT)).op, MS_MEM_OP_PREFETCH);
	assert_int_equal(dec(F(PERF_MEM_OP_EXEC, PERF_MEM_OP_SHIFT)).op, MS_MEM_OP_EXEC);
	assert_int_equal(dec(F(PERF_MEM_OP_NA, PERF_MEM_OP_SHIFT)).op, MS_MEM_OP_NA);
	assert_string_equal(ms_mem_op_name(MS_MEM_OP_PREFETCH), "prefetch");
}

/* PEBS: the level as bits, with HIT or MISS; the nearest bit set wins. */
static void level_bits(void **state)
{
	struct ms_data_src d = dec(F(PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT, PERF_MEM_LVL_SHIFT));

	(void)state;
	assert_int_equal(d.level, MS_MEM_LVL_L1);
	assert_true(d.level_hit);
	assert_false(d.level_miss);
	assert_int_equal(dec(F(PERF_MEM_LVL_LFB, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_LFB);
	assert_int_equal(dec(F(PERF_MEM_LVL_L2, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_L2);
	assert_int_equal(dec(F(PERF_MEM_LVL_L3 | PERF_MEM_LVL_MISS, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_L3);
	assert_true(dec(F(PERF_MEM_LVL_L3 | PERF_MEM_LVL_MISS, PERF_MEM_LVL_SHIFT)).level_miss);
	assert_int_equal(dec(F(PERF_MEM_LVL_LOC_RAM, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_RAM);
	assert_int_equal(dec(F(PERF_MEM_LVL_IO, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_IO);
	assert_int_equal(dec(F(PERF_MEM_LVL_UNC, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_UNCACHED);
	d = dec(F(PERF_MEM_LVL_REM_RAM1, PERF_MEM_LVL_SHIFT));
	assert_int_equal(d.level, MS_MEM_LVL_REMOTE_RAM);
	assert_true(d.remote);
	assert_int_equal(dec(F(PERF_MEM_LVL_REM_CCE2, PERF_MEM_LVL_SHIFT)).level, MS_MEM_LVL_REMOTE_CACHE);
	assert_string_equal(ms_mem_level_name(MS_MEM_LVL_REMOTE_RAM), "remote RAM");
}

/* IBS, SPE: the level as a number, which wins over the bits; the remote bit moves it. */
static void level_num_and_remote(void **state)
{
	uint64_t na = F(PERF_MEM_LVL_NA | PERF_MEM_LVL_HIT, PERF_MEM_LVL_SHIFT);
	struct ms_data_src d;

	(void)state;
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_L2, PERF_MEM_LVLNUM_SHIFT)).level, MS_MEM_LVL_L2);
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_RAM, PERF_MEM_LVLNUM_SHIFT)).level, MS_MEM_LVL_RAM);
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_ANY_CACHE, PERF_MEM_LVLNUM_SHIFT)).level, MS_MEM_LVL_CACHE);
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_CXL, PERF_MEM_LVLNUM_SHIFT)).level, MS_MEM_LVL_CXL);
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_PMEM, PERF_MEM_LVLNUM_SHIFT)).level, MS_MEM_LVL_PMEM);
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_NA, PERF_MEM_LVLNUM_SHIFT)).level, MS_MEM_LVL_NA);
	/* The number wins over a bit that says otherwise. */
	assert_int_equal(dec(F(PERF_MEM_LVL_L1, PERF_MEM_LVL_SHIFT) | F(PERF_MEM_LVLNUM_L3, PERF_MEM_LVLNUM_SHIFT)).level,
			 MS_MEM_LVL_L3);
	d = dec(na | F(PERF_MEM_LVLNUM_RAM, PERF_MEM_LVLNUM_SHIFT) | F(PERF_MEM_REMOTE_REMOTE, PERF_MEM_REMOTE_SHIFT));
	assert_int_equal(d.level, MS_MEM_LVL_REMOTE_RAM);
	assert_true(d.remote);
	assert_int_equal(dec(na | F(PERF_MEM_LVLNUM_L3, PERF_MEM_LVLNUM_SHIFT) |
			     F(PERF_MEM_REMOTE_REMOTE, PERF_MEM_REMOTE_SHIFT)).level, MS_MEM_LVL_REMOTE_CACHE);
}

static void tlb(void **state)
{
	struct ms_data_src d = dec(F(PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2 | PERF_MEM_TLB_WK, PERF_MEM_TLB_SHIFT));

	(void)state;
	assert_int_equal(d.tlb, MS_MEM_TLB_MISS);
	assert_true(d.tlb_walk);
	d = dec(F(PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1, PERF_MEM_TLB_SHIFT));
	assert_int_equal(d.tlb, MS_MEM_TLB_HIT);
	assert_false(d.tlb_walk);
	assert_int_equal(dec(F(PERF_MEM_TLB_NA, PERF_MEM_TLB_SHIFT)).tlb, MS_MEM_TLB_NA);
}

static void snoop(void **state)
{
	(void)state;
	assert_int_equal(dec(F(PERF_MEM_SNOOP_NONE, PERF_MEM_SNOOP_SHIFT)).snoop, MS_MEM_SNOOP_NONE);
	assert_int_equal(dec(F(PERF_MEM_SNOOP_HIT, PERF_MEM_SNOOP_SHIFT)).snoop, MS_MEM_SNOOP_HIT);
	assert_int_equal(dec(F(PERF_MEM_SNOOP_MISS, PERF_MEM_SNOOP_SHIFT)).snoop, MS_MEM_SNOOP_MISS);
	assert_int_equal(dec(F(PERF_MEM_SNOOP_HITM, PERF_MEM_SNOOP_SHIFT)).snoop, MS_MEM_SNOOP_HITM);
	assert_int_equal(dec(F(PERF_MEM_SNOOPX_FWD, PERF_MEM_SNOOPX_SHIFT)).snoop, MS_MEM_SNOOP_FWD);
	assert_int_equal(dec(F(PERF_MEM_SNOOPX_PEER, PERF_MEM_SNOOPX_SHIFT)).snoop, MS_MEM_SNOOP_PEER);
}

static void lock_and_block(void **state)
{
	(void)state;
	assert_true(dec(F(PERF_MEM_LOCK_LOCKED, PERF_MEM_LOCK_SHIFT)).locked);
	assert_false(dec(F(PERF_MEM_LOCK_NA, PERF_MEM_LOCK_SHIFT)).locked);
	assert_true(dec(F(PERF_MEM_BLK_DATA, PERF_MEM_BLK_SHIFT)).blocked);
	assert_true(dec(F(PERF_MEM_BLK_ADDR, PERF_MEM_BLK_SHIFT)).blocked);
	assert_false(dec(F(PERF_MEM_BLK_NA, PERF_MEM_BLK_SHIFT)).blocked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_said), cmocka_unit_test(op), cmocka_unit_test(level_bits),
		cmocka_unit_test(level_num_and_remote), cmocka_unit_test(tlb), cmocka_unit_test(snoop),
		cmocka_unit_test(lock_and_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
