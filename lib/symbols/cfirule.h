/*
 * Internal to lib/symbols: the x86-64 CFI row at one address of a binary,
 * as libdwfl's frame walker (elfutils 0.188, libdwfl/frame_unwind.c,
 * handle_cfi) applies it, decoded once through libdw's CFI calls and kept
 * by address where it is simple: the CFA a register plus an offset, every
 * register undefined, the same value, at or at the value of the CFA plus
 * an offset, or another register. Anything else (a DWARF expression, a
 * signal frame, no FDE) is kept as the reason not to use it, so that the
 * caller walks that stack with libdwfl instead.
 */
#ifndef MS_SYMBOLS_CFIRULE_H
#define MS_SYMBOLS_CFIRULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

/* x86-64's DWARF registers libdwfl carries: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, and 16 the return address. */
#define MS_CFI_NREGS 17
#define MS_CFI_RA 16
#define MS_CFI_SP 7
#define MS_CFI_FP 6

/* Why a row is not used; MS_CFI_SIMPLE: it is. */
enum ms_cfi_why {
	MS_CFI_SIMPLE,
	MS_CFI_NO_FDE,        /* no FDE holds the address (libdwfl then tries .debug_frame, frame pointers) */
	MS_CFI_EXPR,          /* the CFA or a register by a DWARF expression */
	MS_CFI_SIGNAL,        /* a signal frame's CIE ('S'): the next frame's pc is not looked up less one */
	MS_CFI_OTHER,         /* anything else: another return register, an undefined CFA, an offset past 32 bits */
	MS_CFI_WHY_NR
};

/* How a register of the caller's frame is found. */
enum ms_cfi_kind {
	MS_CFI_UNDEF,         /* not known: unset */
	MS_CFI_SAME,          /* the callee's value, where it has one */
	MS_CFI_AT,            /* read at CFA + val */
	MS_CFI_VAL,           /* CFA + val */
	MS_CFI_REG,           /* register val's value in the callee's frame */
};

struct ms_cfirule {
	uint8_t why;          /* enum ms_cfi_why */
	uint8_t cfa_reg;      /* CFA = cfa_reg + cfa_off */
	uint8_t kind[MS_CFI_NREGS];
	int32_t cfa_off;
	int32_t val[MS_CFI_NREGS];
	uint32_t same;        /* the registers whose kind is MS_CFI_SAME, a bit each */
	uint32_t found;       /* those found another way (AT, VAL, REG); the rest are UNDEF */
};

/* A frame's registers: r[i] holds a value where bit i of set is on. */
struct ms_cfiregs {
	uint64_t r[MS_CFI_NREGS];
	uint32_t set;
};

/* The stack copy a walk reads: len bytes from address sp. */
struct ms_cfistack {
	const unsigned char *bytes;
	size_t len;
	uint64_t sp;
};

/* Sets r's same and found from its kinds: decoding does; a row made by hand must too. */
void ms_cfirule_masks(struct ms_cfirule *r);

/*
 * The 8 bytes at addr of the stack copy into *v: false where any lies
 * outside it (addr - sp is compared with len - 8, which cannot wrap near
 * 2^64 as addr + 8 would). libdwfl's memory reads go through it too.
 */
bool ms_cfistack_read(const struct ms_cfistack *st, uint64_t addr, uint64_t *v);

/* Decodes cfi's row at pc (the binary's address) into r: r->why says whether it is simple. */
void ms_cfirule_decode(Dwarf_CFI *cfi, uint64_t pc, struct ms_cfirule *r);

/*
 * The caller's registers from the callee's cur by simple rule r, as
 * handle_cfi sets them: a register whose rule needs what cur does not
 * hold, or a read outside st, is left unset. Whether the caller's pc is
 * set and not 0 (*pc then holds it): false ends the walk, as libdwfl's
 * does where the return address is undefined, unset or 0.
 */
bool ms_cfirule_step(const struct ms_cfirule *r, const struct ms_cfiregs *cur, const struct ms_cfistack *st,
		     struct ms_cfiregs *next, uint64_t *pc);

/*
 * The caller's frame by the frame pointer, where no CFI describes the
 * callee: libdwfl's x86-64 backend (backends/x86_64_unwind.c) reads the
 * saved rbp at rbp and the return address after it, and gives the caller
 * rbp, rsp (rbp + 16) and that pc (0 included) alone. Whether it did;
 * false (rbp unset or 0, the return address outside st, or rsp that
 * would not move up) ends the walk, libdwfl discarding that frame.
 */
bool ms_cfi_fp_step(const struct ms_cfiregs *cur, const struct ms_cfistack *st, struct ms_cfiregs *next,
		    uint64_t *pc);

/* A binary's rows by address, each decoded once. */
struct ms_cfirules;

/*
 * The row at pc of the binary cfi reads, decoded where *t does not hold it
 * yet (*t made on the first call); lives as long as *t, or for a pc past
 * 4 GiB (decoded at each call, not kept) until the next call. NULL only
 * where memory ran out.
 */
const struct ms_cfirule *ms_cfirules_get(struct ms_cfirules **t, Dwarf_CFI *cfi, uint64_t pc);

/* Accepts NULL. */
void ms_cfirules_free(struct ms_cfirules *t);

#endif
