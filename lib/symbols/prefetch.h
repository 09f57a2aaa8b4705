/*
 * Internal: the data prefetch instructions of a binary, found with a
 * maintained disassembler (capstone), each with its addressing mode in the
 * terms a uprobe can fetch: base and index registers by the names of
 * tracefs's fetch arguments, scale and displacement. x86-64 (PREFETCHT0,
 * T1, T2, NTA, PREFETCHW, PREFETCH), arm64 (PRFM, PRFUM) and ppc64 (dcbt,
 * dcbtst).
 *
 * The effective address is base + index * scale + disp; a RIP-relative
 * operand has base "ip" (the instruction's own address at the probe) and
 * the instruction's length folded into disp. Operands a uprobe cannot
 * fetch (a segment override, 32-bit address registers) are counted, not
 * listed.
 */
#ifndef MS_SYMBOLS_PREFETCH_H
#define MS_SYMBOLS_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

enum ms_prefetch_arch { MS_PREFETCH_X86_64, MS_PREFETCH_ARM64, MS_PREFETCH_PPC64 };

struct ms_prefetch_site {
	uint64_t vaddr;              /* in the binary's own addresses (its symbols') */
	uint64_t offset;             /* in the file: where a uprobe is placed */
	char base[8], index[8];      /* fetch-argument register names ("di", "r8", "x3", "gpr4", "ip"); "": none */
	uint8_t scale;
	int64_t disp;
	char mnemonic[32];
	char *func;                  /* the function that holds it (the symbol table's), or NULL */
	uint64_t func_vaddr, func_size;   /* that function's place, in the binary's own addresses */
};

struct ms_prefetch_sites {
	struct ms_prefetch_site *v;
	size_t n, cap;
	size_t unsupported;          /* prefetches whose operand a uprobe cannot fetch */
};

/*
 * Appends to out the prefetches in code[0, len) of arch, code[0] lying at
 * vaddr and at file offset `offset`. 0, -ENOMEM, or -ENOTSUP where
 * capstone lacks arch or its library (opened at the first scan) is missing.
 */
int ms_prefetch_scan_code(enum ms_prefetch_arch arch, const void *code, size_t len, uint64_t vaddr,
			  uint64_t offset, struct ms_prefetch_sites *out);

/*
 * Every executable section of the ELF file path, scanned, each site named
 * by the function that holds it. 0 or a negative errno (-ENOEXEC: not an
 * ELF file of an architecture known here). out's sites stay the caller's
 * (ms_prefetch_sites_release), whatever is returned.
 */
int ms_prefetch_scan_file(const char *path, struct ms_prefetch_sites *out);

void ms_prefetch_sites_release(struct ms_prefetch_sites *s);

#endif
