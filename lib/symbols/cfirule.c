/*
 * A binary's simple CFI rows (cfirule.h). libdwfl evaluates every
 * register of every frame as a DWARF expression (a stack malloc'd per
 * register, the row found and its CIE and FDE programs run again each
 * time); the rows that x86-64 code carries are all a register plus an
 * offset, read where each is decoded once per binary and address.
 *
 * The semantics are handle_cfi()'s and expr_eval()'s of elfutils 0.188,
 * for the rules dwarf_frame_register() and dwarf_frame_cfa() give:
 *   undefined     []                                 unset
 *   same value    NULL ops                           the callee's, if set
 *   offset(N)     [call_frame_cfa, plus_uconst N]    read at CFA + N
 *   val_offset(N) [call_frame_cfa, plus_uconst N, stack_value]
 *   register(R)   [regx R]                           the callee's R, if set
 * (plus_uconst left out where N is 0), with the CFA [bregx R, off]: the
 * callee's R plus off, a register whose CFA cannot be had left unset.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/cfirule.h"
#include "util/grow.h"
#include "util/u32map.h"

static bool fits32(Dwarf_Word w)
{
	int64_t v = (int64_t)w;

	return v >= INT32_MIN && v <= INT32_MAX;
}

/* One register's rule from the ops dwarf_frame_register() gave: its why (simple or not). */
static int register_rule(const Dwarf_Op *mem, const Dwarf_Op *ops, size_t nops, uint8_t *kind, int32_t *val)
{
	size_t i = 1;

	*val = 0;
	if (nops == 0) {
		if (ops == mem)
			*kind = MS_CFI_UNDEF;
		else if (ops == NULL)
			*kind = MS_CFI_SAME;
		else
			return MS_CFI_OTHER;
		return MS_CFI_SIMPLE;
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= MS_CFI_NREGS)
			return MS_CFI_OTHER;
		*kind = MS_CFI_REG;
		*val = (int32_t)ops[0].number;
		return MS_CFI_SIMPLE;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return MS_CFI_EXPR;
	*kind = MS_CFI_AT;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst) {
		if (!fits32(ops[i].number))
			return MS_CFI_OTHER;
		*val = (int32_t)(int64_t)ops[i].number;
		i++;
	}
	if (i < nops && ops[i].atom == DW_OP_stack_value) {
		*kind = MS_CFI_VAL;
		i++;
	}
	return i == nops ? MS_CFI_SIMPLE : MS_CFI_EXPR;
}

/* The CFA's rule: a register plus an offset, or why not. */
static int cfa_rule(Dwarf_Frame *f, struct ms_cfirule *r)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return MS_CFI_OTHER;
	if (nops != 1 || ops[0].atom != DW_OP_bregx)
		return MS_CFI_EXPR;
	if (ops[0].number >= MS_CFI_NREGS || !fits32(ops[0].number2))
		return MS_CFI_OTHER;
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	return MS_CFI_SIMPLE;
}

void ms_cfirule_masks(struct ms_cfirule *r)
{
	int i;

	r->same = r->found = 0;
	for (i = 0; i < MS_CFI_NREGS; i++) {
		if (r->kind[i] == MS_CFI_SAME)
			r->same |= 1u << i;
		else if (r->kind[i] != MS_CFI_UNDEF)
			r->found |= 1u << i;
	}
}

static int decode_frame(Dwarf_Frame *f, struct ms_cfirule *r)
{
	Dwarf_Op mem[3], *ops;
	bool signal = false;
	size_t nops;
	int why, i;

	if (dwarf_frame_info(f, NULL, NULL, &signal) != MS_CFI_RA)
		return MS_CFI_OTHER;
	if (signal)
		return MS_CFI_SIGNAL;
	if ((why = cfa_rule(f, r)) != MS_CFI_SIMPLE)
		return why;
	for (i = 0; i < MS_CFI_NREGS; i++) {
		if (dwarf_frame_register(f, i, mem, &ops, &nops) != 0)
			return MS_CFI_OTHER;
		if ((why = register_rule(mem, ops, nops, &r->kind[i], &r->val[i])) != MS_CFI_SIMPLE)
			return why;
	}
	ms_cfirule_masks(r);
	return MS_CFI_SIMPLE;
}

void ms_cfirule_decode(Dwarf_CFI *cfi, uint64_t pc, struct ms_cfirule *r)
{
	Dwarf_Frame *f;

	memset(r, 0, sizeof(*r));
	if (dwarf_cfi_addrframe(cfi, pc, &f) != 0) {
		r->why = MS_CFI_NO_FDE;
		return;
	}
	r->why = (uint8_t)decode_frame(f, r);
	free(f);
}

/* The rows' reads of the stack copy and libdwfl's (unwind.c's uw_memory_read) alike. */
bool ms_cfistack_read(const struct ms_cfistack *st, uint64_t addr, uint64_t *v)
{
	if (addr < st->sp || st->len < 8 || addr - st->sp > st->len - 8)
		return false;
	memcpy(v, st->bytes + (addr - st->sp), 8);
	return true;
}

bool ms_cfirule_step(const struct ms_cfirule *r, const struct ms_cfiregs *cur, const struct ms_cfistack *st,
		     struct ms_cfiregs *next, uint64_t *pc)
{
	bool cfa_ok = cur->set >> r->cfa_reg & 1;
	uint64_t cfa = cur->r[r->cfa_reg] + (uint64_t)(int64_t)r->cfa_off, v = 0;
	uint32_t bits;
	bool ok;
	int i;

	/*
	 * Only the registers the row says something of, a bit each: most of
	 * the 17 are the callee's own or unknown. A register left unset keeps
	 * whatever next held, as before.
	 */
	next->set = cur->set & r->same;
	for (bits = next->set; bits; bits &= bits - 1) {
		i = __builtin_ctz(bits);
		next->r[i] = cur->r[i];
	}
	for (bits = r->found; bits; bits &= bits - 1) {
		i = __builtin_ctz(bits);
		switch (r->kind[i]) {
		case MS_CFI_AT:
			ok = cfa_ok && ms_cfistack_read(st, cfa + (uint64_t)(int64_t)r->val[i], &v);
			break;
		case MS_CFI_VAL:
			ok = cfa_ok;
			v = cfa + (uint64_t)(int64_t)r->val[i];
			break;
		case MS_CFI_REG:
			ok = cur->set >> r->val[i] & 1;
			v = cur->r[r->val[i]];
			break;
		default:                 /* a mask older than the kinds (a row changed by hand): as UNDEF */
			ok = false;
			break;
		}
		if (ok) {
			next->r[i] = v;
			next->set |= 1u << i;
		}
	}
	if (!(next->set >> MS_CFI_RA & 1) || next->r[MS_CFI_RA] == 0)
		return false;
	*pc = next->r[MS_CFI_RA];
	return true;
}

bool ms_cfi_fp_step(const struct ms_cfiregs *cur, const struct ms_cfistack *st, struct ms_cfiregs *next,
		    uint64_t *pc)
{
	uint64_t fp = cur->r[MS_CFI_FP], sp = cur->set >> MS_CFI_SP & 1 ? cur->r[MS_CFI_SP] : 0, prev_fp, ret;

	if (!(cur->set >> MS_CFI_FP & 1) || fp == 0)
		return false;
	if (!ms_cfistack_read(st, fp, &prev_fp))
		prev_fp = 0;
	if (!ms_cfistack_read(st, fp + 8, &ret))
		return false;
	fp += 16;
	if (sp >= fp)
		return false;            /* not a frame: the stack pointer would not move up */
	next->set = 1u << MS_CFI_FP | 1u << MS_CFI_SP;
	next->r[MS_CFI_FP] = prev_fp;
	next->r[MS_CFI_SP] = fp;
	*pc = ret;
	return true;
}

/* Rules are kept in chunks of this many, where they stay while the table grows. */
#define CHUNK 32

struct ms_cfirules {
	struct ms_u32map by_pc;      /* pc -> its rule, for a pc under 4 GiB (every binary's code, in practice) */
	struct ms_cfirule **chunks;
	size_t nr_chunks, cap_chunks, len;
	struct ms_cfirule past;      /* the row of a pc past 4 GiB, decoded at each call */
};

const struct ms_cfirule *ms_cfirules_get(struct ms_cfirules **tp, Dwarf_CFI *cfi, uint64_t pc)
{
	struct ms_cfirules *t = *tp;
	struct ms_cfirule *r;

	if (!t && !(t = *tp = calloc(1, sizeof(*t))))
		return NULL;
	if (pc > UINT32_MAX) {
		ms_cfirule_decode(cfi, pc, &t->past);
		return &t->past;
	}
	if ((r = ms_u32map_get(&t->by_pc, (uint32_t)pc)))
		return r;
	if (t->len == t->nr_chunks * CHUNK) {
		if (MS_GROW(t->chunks, t->nr_chunks + 1, t->cap_chunks, 16, SIZE_MAX, false) ||
		    !(t->chunks[t->nr_chunks] = malloc(CHUNK * sizeof(**t->chunks))))
			return NULL;
		t->nr_chunks++;
	}
	r = &t->chunks[t->len / CHUNK][t->len % CHUNK];
	ms_cfirule_decode(cfi, pc, r);
	if (ms_u32map_put(&t->by_pc, (uint32_t)pc, r))
		return NULL;
	t->len++;
	return r;
}

void ms_cfirules_free(struct ms_cfirules *t)
{
	size_t i;

	if (!t)
		return;
	ms_u32map_release(&t->by_pc);
	for (i = 0; i < t->nr_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t);
}
