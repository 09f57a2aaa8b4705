/*
 * Simple CFI rows: decoded from this test's own .eh_frame and the C
 * library's (a function's first instruction, a PLT entry's expression, the
 * signal trampoline), applied to hand-made frames and stacks as libdwfl
 * applies them (an unset register, a read outside the copy, a return
 * address of 0), the frame-pointer step libdwfl takes where no CFI
 * describes a frame, and the table that keeps the rows by address.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <gelf.h>

#include "symbols/cfirule.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000   /* the kernel's flag, set where the C library gave its restorer */
#endif

/* A binary's ELF and CFI, opened for a test. */
struct cfi_file {
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;
};

static void open_cfi(const char *path, struct cfi_file *f)
{
	elf_version(EV_CURRENT);
	f->fd = open(path, O_RDONLY);
	assert_true(f->fd >= 0);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(f->elf);
	f->cfi = dwarf_getcfi_elf(f->elf);
	assert_non_null(f->cfi);
}

static void close_cfi(struct cfi_file *f)
{
	dwarf_cfi_end(f->cfi);
	elf_end(f->elf);
	close(f->fd);
}

/* The address in its file of code at addr in this process. */
static uint64_t file_addr(const void *addr, char *path, size_t len)
{
	Dl_info info;

	assert_true(dladdr(addr, &info) != 0);
	snprintf(path, len, "%s", info.dli_fname[0] ? info.dli_fname : "/proc/self/exe");
	return (uint64_t)(uintptr_t)addr - (uint64_t)(uintptr_t)info.dli_fbase;
}

int __attribute__((noinline)) cfirule_leaf(int x);

int __attribute__((noinline)) cfirule_leaf(int x)
{
	return x * 3 + 1;
}

/* At a function's first instruction: CFA = rsp + 8, the return address at CFA - 8, rsp the CFA. */
static void decodes_a_function_entry(void **state)
{
	struct ms_cfirule r;
	struct cfi_file f;
	char path[4096];
	uint64_t pc = file_addr((const void *)cfirule_leaf, path, sizeof(path));
	int i;

	(void)state;
	open_cfi("/proc/self/exe", &f);
	ms_cfirule_decode(f.cfi, pc, &r);
	assert_int_equal(r.why, MS_CFI_SIMPLE);
	assert_int_equal(r.cfa_reg, MS_CFI_SP);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.kind[MS_CFI_RA], MS_CFI_AT);
	assert_int_equal(r.val[MS_CFI_RA], -8);
	assert_int_equal(r.kind[MS_CFI_SP], MS_CFI_VAL);      /* the ABI's default: rsp is the CFA */
	assert_int_equal(r.val[MS_CFI_SP], 0);
	/*
	 * The backend's default rows (backends/x86_64_cfi.c) give "the same
	 * value" to DWARF registers 0, 6 and 12..15, its comment calling 0
	 * rbx, which is 3 (0 is rax): libdwfl carries rax, not rbx, through a
	 * frame whose CFI says nothing of them, and so must the rows.
	 */
	for (i = 0; i < MS_CFI_RA; i++)
		if (i == 0 || i == 6 || (i >= 12 && i <= 15))
			assert_int_equal(r.kind[i], MS_CFI_SAME);
		else if (i != MS_CFI_SP)
			assert_int_equal(r.kind[i], MS_CFI_UNDEF);
	/* The step reads the kinds through two masks, which must say the same. */
	assert_int_equal(r.same, 1u << 0 | 1u << 6 | 0xfu << 12);
	assert_int_equal(r.found, 1u << MS_CFI_SP | 1u << MS_CFI_RA);
	ms_cfirule_decode(f.cfi, 0, &r);
	assert_int_equal(r.why, MS_CFI_NO_FDE);
	close_cfi(&f);
}

/* A PLT entry's CFA is a DWARF expression (of rip): not a simple row. */
static void refuses_an_expression(void **state)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	struct ms_cfirule r;
	struct cfi_file f;
	GElf_Shdr sh;
	const char *name;
	uint64_t plt = 0;

	(void)state;
	open_cfi("/proc/self/exe", &f);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn)))
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(f.elf, shstrndx, sh.sh_name)) && !strcmp(name, ".plt"))
			plt = sh.sh_addr;
	if (!plt) {
		close_cfi(&f);
		skip();                  /* linked without a lazy PLT */
	}
	ms_cfirule_decode(f.cfi, plt + 16 + 11, &r);  /* past the first entry's jump: the expression holds */
	if (r.why == MS_CFI_NO_FDE) {
		close_cfi(&f);
		skip();                  /* the linker wrote no CFI for its PLT */
	}
	assert_int_equal(r.why, MS_CFI_EXPR);
	close_cfi(&f);
}

static void handler(int sig)
{
	(void)sig;
}

/* The C library's signal trampoline (the restorer sigaction installs) is a signal frame: not a simple row. */
static void refuses_a_signal_frame(void **state)
{
	struct sigaction sa, old;
	struct ms_cfirule r;
	struct cfi_file f;
	char path[4096];
	uint64_t pc;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	assert_int_equal(sigaction(SIGUSR2, &old, &sa), 0);
	if (!(sa.sa_flags & SA_RESTORER) || !sa.sa_restorer)
		skip();                  /* no restorer the C library names */
	pc = file_addr((const void *)sa.sa_restorer, path, sizeof(path));
	open_cfi(path, &f);
	ms_cfirule_decode(f.cfi, pc, &r);
	assert_int_equal(r.why, MS_CFI_SIGNAL);
	close_cfi(&f);
}

/* A row of the usual shape: CFA = rsp + 16, rip at CFA - 8, rbp at CFA - 16, rbx the same, rsp the CFA. */
static struct ms_cfirule usual_row(void)
{
	struct ms_cfirule r;

	memset(&r, 0, sizeof(r));
	r.cfa_reg = MS_CFI_SP;
	r.cfa_off = 16;
	r.kind[MS_CFI_RA] = MS_CFI_AT;
	r.val[MS_CFI_RA] = -8;
	r.kind[MS_CFI_FP] = MS_CFI_AT;
	r.val[MS_CFI_FP] = -16;
	r.kind[MS_CFI_SP] = MS_CFI_VAL;
	r.kind[3] = MS_CFI_SAME;
	r.kind[12] = MS_CFI_REG;      /* r12 from r13, as DW_CFA_register has it */
	r.val[12] = 13;
	ms_cfirule_masks(&r);
	return r;
}

static void applies_a_row(void **state)
{
	uint64_t words[4] = { 0x1111, 0xbbbb, 0x401234, 0x2222 }, pc = 0;
	const struct ms_cfistack st = { (const unsigned char *)words, sizeof(words), 0x7000 };
	struct ms_cfirule r = usual_row();
	struct ms_cfiregs cur = { .set = 1u << MS_CFI_SP | 1u << 3 | 1u << 13 }, next;

	(void)state;
	cur.r[MS_CFI_SP] = 0x7000;
	cur.r[3] = 0x33;
	cur.r[13] = 0x1313;
	/* CFA 0x7010: rbp from 0x7000, rip from 0x7008; rax (undefined) and r14 (unset, the same) stay unset. */
	assert_true(ms_cfirule_step(&r, &cur, &st, &next, &pc));
	assert_int_equal(pc, 0xbbbb);
	assert_int_equal(next.set, 1u << MS_CFI_RA | 1u << MS_CFI_FP | 1u << MS_CFI_SP | 1u << 3 | 1u << 12);
	assert_int_equal(next.r[MS_CFI_FP], 0x1111);
	assert_int_equal(next.r[MS_CFI_SP], 0x7010);
	assert_int_equal(next.r[3], 0x33);
	assert_int_equal(next.r[12], 0x1313);
	/* One frame up: CFA 0x7020, rip from 0x7018, and rbp from 0x7010. */
	cur = next;
	assert_true(ms_cfirule_step(&r, &cur, &st, &next, &pc));
	assert_int_equal(pc, 0x2222);
	assert_int_equal(next.r[MS_CFI_FP], 0x401234);
	/* The next return address would be read past the copy: unset, and the walk ends. */
	cur = next;
	assert_false(ms_cfirule_step(&r, &cur, &st, &next, &pc));
	assert_false(next.set >> MS_CFI_RA & 1);
	assert_true(next.set >> MS_CFI_SP & 1);     /* what does not read memory is still set */
}

static void ends_where_libdwfl_ends(void **state)
{
	uint64_t words[2] = { 0x1111, 0 }, pc = 0;
	const struct ms_cfistack st = { (const unsigned char *)words, sizeof(words), 0x7000 };
	struct ms_cfirule r = usual_row();
	struct ms_cfiregs cur = { .set = 1u << MS_CFI_SP }, next;

	(void)state;
	cur.r[MS_CFI_SP] = 0x7000;
	assert_false(ms_cfirule_step(&r, &cur, &st, &next, &pc));      /* a return address of 0 */
	assert_true(next.set >> MS_CFI_RA & 1);
	cur.set = 1u << 0;                                             /* no rsp: no CFA, nothing read */
	assert_false(ms_cfirule_step(&r, &cur, &st, &next, &pc));
	assert_int_equal(next.set, 0);
	r.kind[MS_CFI_RA] = MS_CFI_UNDEF;                              /* the outermost frame's rule */
	ms_cfirule_masks(&r);
	cur.set = 1u << MS_CFI_SP;
	words[1] = 0x4000;
	assert_false(ms_cfirule_step(&r, &cur, &st, &next, &pc));
}

static void steps_by_frame_pointer(void **state)
{
	uint64_t words[6] = { 0, 0, 0x7020, 0x5555, 0, 0 }, pc = 0;
	const struct ms_cfistack st = { (const unsigned char *)words, sizeof(words), 0x7000 };
	struct ms_cfiregs cur = { .set = 1u << MS_CFI_FP | 1u << MS_CFI_SP }, next;

	(void)state;
	cur.r[MS_CFI_FP] = 0x7010;
	cur.r[MS_CFI_SP] = 0x7000;
	assert_true(ms_cfi_fp_step(&cur, &st, &next, &pc));
	assert_int_equal(pc, 0x5555);
	assert_int_equal(next.set, 1u << MS_CFI_FP | 1u << MS_CFI_SP);
	assert_int_equal(next.r[MS_CFI_FP], 0x7020);
	assert_int_equal(next.r[MS_CFI_SP], 0x7020);
	/* rbp 0x7020: the saved rbp reads as 0 (0x7020 holds 0), the return address 0 — a frame all the same. */
	cur = next;
	assert_true(ms_cfi_fp_step(&cur, &st, &next, &pc));
	assert_int_equal(pc, 0);
	assert_int_equal(next.r[MS_CFI_FP], 0);
	/* rbp 0 or unset: no frame. */
	cur = next;
	assert_false(ms_cfi_fp_step(&cur, &st, &next, &pc));
	cur.set = 1u << MS_CFI_SP;
	cur.r[MS_CFI_FP] = 0x7010;
	assert_false(ms_cfi_fp_step(&cur, &st, &next, &pc));
	/* rsp already past rbp + 16: not a frame. */
	cur.set = 1u << MS_CFI_FP | 1u << MS_CFI_SP;
	cur.r[MS_CFI_SP] = 0x7020;
	assert_false(ms_cfi_fp_step(&cur, &st, &next, &pc));
	/* A saved rbp below the copy reads as 0; a return address past its end ends the walk. */
	cur.r[MS_CFI_SP] = 0;
	cur.r[MS_CFI_FP] = 0x6ff8;
	assert_true(ms_cfi_fp_step(&cur, &st, &next, &pc));
	assert_int_equal(next.r[MS_CFI_FP], 0);
	assert_int_equal(next.r[MS_CFI_SP], 0x7008);
	cur.r[MS_CFI_FP] = 0x7028;
	assert_false(ms_cfi_fp_step(&cur, &st, &next, &pc));
}

/* Every address of this binary's text, each got from the table as decoded, across its growth. */
static void keeps_rows_by_address(void **state)
{
	struct ms_cfirules *t = NULL;
	const struct ms_cfirule *got;
	struct ms_cfirule want;
	struct cfi_file f;
	char path[4096];
	uint64_t base = file_addr((const void *)cfirule_leaf, path, sizeof(path)), pc;
	int pass;

	(void)state;
	open_cfi("/proc/self/exe", &f);
	for (pass = 0; pass < 2; pass++)
		for (pc = base - 4000; pc < base + 4000; pc += 3) {
			got = ms_cfirules_get(&t, f.cfi, pc);
			assert_non_null(got);
			ms_cfirule_decode(f.cfi, pc, &want);
			assert_memory_equal(got, &want, sizeof(want));
		}
	got = ms_cfirules_get(&t, f.cfi, 1ULL << 40);       /* past 4 GiB: decoded, not kept */
	assert_non_null(got);
	assert_int_equal(got->why, MS_CFI_NO_FDE);
	ms_cfirules_free(t);
	ms_cfirules_free(NULL);
	close_cfi(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_a_function_entry),
		cmocka_unit_test(refuses_an_expression),
		cmocka_unit_test(refuses_a_signal_frame),
		cmocka_unit_test(applies_a_row),
		cmocka_unit_test(ends_where_libdwfl_ends),
		cmocka_unit_test(steps_by_frame_pointer),
		cmocka_unit_test(keeps_rows_by_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
