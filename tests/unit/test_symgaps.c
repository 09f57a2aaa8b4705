/*
 * Names of addresses between symbols: each answer equals libdwfl's own
 * walk (dwfl_module_addrinfo), asked twice and in any order, on stripped
 * binaries (named from .dynsym alone: ls, sh, the compiler), on the C library (with its separate
 * debug file where installed) and on this test (a full symbol table); on the stripped ones most
 * answers come from the replay made for every address at once, the others from replays one
 * at a time, each kept for the gap between bounds that holds its address.
 */
#include <elf.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <gelf.h>

#include "symbols/internal.h"

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * The lowest and highest address of the binary's executable sections, or
 * of all its allocated ones and a few pages past them (data addresses are
 * named too: .bss, and the pages of the data segment past it).
 */
static void span(Dwfl_Module *mod, uint64_t flag, uint64_t *lo, uint64_t *hi)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	GElf_Shdr mem, *sh;

	*lo = UINT64_MAX;
	*hi = 0;
	while ((scn = elf_nextscn(elf, scn)))
		if ((sh = gelf_getshdr(scn, &mem)) && (sh->sh_flags & flag) && sh->sh_size) {
			if (sh->sh_addr + bias < *lo)
				*lo = sh->sh_addr + bias;
			if (sh->sh_addr + bias + sh->sh_size > *hi)
				*hi = sh->sh_addr + bias + sh->sh_size;
		}
	if (flag == SHF_ALLOC)
		*hi += 0x3000;
}

/* The addresses the last check_binary() had answered by the replay made for every address at once. */
static size_t last_fast;

/* Checks n addresses of path's code, each asked twice, against the walk. Returns how many the walk names. */
static size_t check_binary(const char *path, size_t n)
{
	Dwfl *dwfl = dwfl_begin(&ms_dwfl_callbacks);
	struct ms_symgaps *gaps = NULL;
	const char *a, *b;
	uint64_t lo, hi, addr = 0, off_a, off_b;
	Dwfl_Module *mod;
	GElf_Off off;
	GElf_Sym sym;
	size_t i, named = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), pass;

	if (fd < 0 || !dwfl)
		return 0;
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	assert_non_null(mod);
	for (pass = 0; pass < 4; pass++) {
		span(mod, pass < 2 ? SHF_EXECINSTR : SHF_ALLOC, &lo, &hi);
		assert_true(lo < hi);
		srand(11);
		for (i = 0; i < n; i++) {
			/* Random addresses, then runs of neighbours, and each symbol bound itself. */
			addr = i % 3 ? lo + (uint64_t)rand() % (hi - lo) : addr + 1;
			if (i % 50 == 0 && (b = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL)))
				addr -= off;
			a = ms_symgaps_name(&gaps, mod, addr, &off_a);
			b = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
			off_b = b ? off : 0;
			if (!same(a, b) || off_a != off_b)
				fail_msg("%s 0x%llx: %s+%llu, libdwfl says %s+%llu", path, (unsigned long long)addr,
					 a ? a : "(none)", (unsigned long long)off_a, b ? b : "(none)",
					 (unsigned long long)off_b);
			named += pass == 0 && a;
			if (pass == 3 && i == n / 4)
				break;
		}
	}
	last_fast = ms_symgaps_nr_fast(gaps);
	ms_symgaps_free(gaps);
	dwfl_end(dwfl);
	return named;
}

static void stripped_binary(void **state)
{
	(void)state;
	check_binary("/usr/bin/ls", 6000);
	check_binary("/bin/sh", 6000);
}

/*
 * Every answer replayed one at a time, and kept for the gap between
 * bounds that holds its address: neighbours, addresses asked again and
 * each symbol's bounds answered from the gaps kept as the walk answers.
 */
static void replayed_gaps_kept(void **state)
{
	(void)state;
	size_t ls, libc;

	ms_symgaps_fast_after = SIZE_MAX;
	ls = check_binary("/usr/bin/ls", 6000);
	libc = check_binary("/lib/x86_64-linux-gnu/libc.so.6", 3000);
	ms_symgaps_fast_after = 2;
	print_message("%zu and %zu named\n", ls, libc);
	assert_true(ls > 0 && libc > 1000);
	assert_int_equal(last_fast, 0);
}

/* A large .dynsym alone (cc1's 29,000 entries): the walk replayed over the symbols kept. */
static void compiler(void **state)
{
	static const char *const paths[] = { "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "/usr/libexec/gcc/x86_64-linux-gnu/12/cc1" };
	size_t i, checked = 0;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!access(paths[i], R_OK)) {
			assert_true(check_binary(paths[i], 1500) > 500);
			assert_true(last_fast > 100);     /* after the first gaps, all at once */
			checked++;
		}
	if (!checked)
		skip();
}

static void c_library(void **state)
{
	(void)state;
	assert_true(check_binary("/lib/x86_64-linux-gnu/libc.so.6", 6000) > 3000);
	assert_true(last_fast > 100);
}

static void own_binary(void **state)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	assert_true(check_binary(self, 6000) > 3000);
	assert_true(last_fast > 50);          /* a full table: the locals' pass too */
}

/*
 * Only the gaps asked about keep their answer: the C library's thousands
 * of gaps, an answer each, were 16 bytes a gap whether asked or not
 * (1.4 MB of a chromium recording's report, 217 gaps of 86,000 asked).
 */
static void answers_kept_for_the_gaps_asked(void **state)
{
	const char *path = "/lib/x86_64-linux-gnu/libc.so.6";
	Dwfl *dwfl = dwfl_begin(&ms_dwfl_callbacks);
	struct ms_symgaps *gaps = NULL;
	uint64_t lo, hi, off;
	size_t i, bytes;
	Dwfl_Module *mod;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_non_null(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	assert_non_null(mod);
	span(mod, SHF_EXECINSTR, &lo, &hi);
	ms_symgaps_fast_after = SIZE_MAX;     /* every answer replayed, and kept */
	for (i = 0; i < 20; i++)
		ms_symgaps_name(&gaps, mod, lo + (hi - lo) / 20 * i, &off);
	ms_symgaps_fast_after = 2;
	bytes = ms_symgaps_answer_bytes(gaps);
	assert_true(bytes > 0 && bytes <= 32 * 32);   /* at most 20 answers of 32 bytes, in an array grown by doubling */
	ms_symgaps_free(gaps);
	dwfl_end(dwfl);
}

/*
 * A table made for the rules (tests/unit/dso/symgaps.c), every gap
 * answered both ways: one at a time, and made for every address at once
 * from the first.
 */
static void made_table(void **state)
{
	(void)state;
	ms_symgaps_fast_after = SIZE_MAX;
	assert_true(check_binary(SYMGAPS_FIXTURE, 3000) > 1000);
	assert_int_equal(last_fast, 0);
	ms_symgaps_fast_after = 0;
	assert_true(check_binary(SYMGAPS_FIXTURE, 3000) > 1000);
	assert_true(last_fast > 10);
	ms_symgaps_fast_after = 2;
}

/*
 * A copy of the made table at path whose .comment is named past the
 * section name table (path: a mkstemp() template, filled in).
 */
static void copy_misnamed(char *path)
{
	int in = open(SYMGAPS_FIXTURE, O_RDONLY | O_CLOEXEC), out = mkstemp(path);
	unsigned char *d;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	struct stat st;
	size_t i, renamed = 0;

	assert_true(in >= 0 && out >= 0 && !fstat(in, &st));
	assert_non_null(d = malloc((size_t)st.st_size));
	assert_int_equal(read(in, d, (size_t)st.st_size), st.st_size);
	eh = (Elf64_Ehdr *)(void *)d;
	sh = (Elf64_Shdr *)(void *)(d + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp((const char *)d + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name, ".comment")) {
			sh[i].sh_name = 0xfffff0;
			renamed++;
		}
	assert_int_equal(renamed, 1);
	assert_int_equal(write(out, d, (size_t)st.st_size), st.st_size);
	free(d);
	close(in);
	close(out);
}

/*
 * A section name past the string table: libdw reads no DWARF of the
 * file (an invalid ELF file, it says), so dwfl_module_address_section()
 * finds no section for any address, while the walk finds each as
 * before. Past .data, in no section, the walk names nothing; had the
 * replay asked that function, .data's last label (l_data_tail) would
 * have been named there.
 */
static void section_names_past_their_table(void **state)
{
	char path[] = "/tmp/symgaps-misnamed.XXXXXX";

	(void)state;
	copy_misnamed(path);
	assert_true(check_binary(path, 3000) > 1000);
	ms_symgaps_fast_after = SIZE_MAX;
	assert_true(check_binary(path, 3000) > 1000);
	ms_symgaps_fast_after = 2;
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stripped_binary),
		cmocka_unit_test(replayed_gaps_kept),
		cmocka_unit_test(compiler),
		cmocka_unit_test(c_library),
		cmocka_unit_test(own_binary),
		cmocka_unit_test(made_table),
		cmocka_unit_test(section_names_past_their_table),
		cmocka_unit_test(answers_kept_for_the_gaps_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
