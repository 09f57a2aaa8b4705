/*
 * Unwinding: this test's own stack, copied with its registers as record
 * --call-graph dwarf copies a sampled thread's, unwinds through the
 * functions that called the copy (known here by their addresses).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/event.h>
#include <mapscope/symbols.h>

#include "own_maps.h"

/* perf's x86_64 registers AX..IP (bits 0-8) and R8..R15 (bits 16-23): the 17 DWARF needs, in that order. */
#define MASK (0x1ffULL | (0xffULL << 16))

struct copy {
	uint64_t regs[17];
	unsigned char stack[16384];
	size_t len;
};

/*
 * The stack is copied as the kernel copies a sample's user stack: raw
 * bytes, redzones and all. Under ASan that read must not be checked (its
 * memcpy interceptor would call the redzones an underflow), so the copy is
 * a plain loop in a function ASan leaves alone.
 */
static void __attribute__((noinline, no_sanitize_address)) copy_raw(unsigned char *to, uintptr_t from, size_t len)
{
	const volatile unsigned char *p = (const volatile unsigned char *)from;
	size_t i;

	for (i = 0; i < len; i++)
		to[i] = p[i];
}

/* Registers and stack as they are at one instruction of this function. */
static void __attribute__((noinline)) take_copy(struct copy *c)
{
#if defined(__x86_64__)
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
	memset(c->regs, 0, sizeof(c->regs));
	c->regs[6] = bp;
	c->regs[7] = sp;
	c->regs[8] = ip;
	c->len = 4096;                       /* the frames of this test, well inside the stack */
	copy_raw(c->stack, (uintptr_t)sp, c->len);
#else
	(void)c;
#endif
}

void __attribute__((noinline)) unwind_caller(struct copy *c);

void __attribute__((noinline)) unwind_caller(struct copy *c)
{
	take_copy(c);
	__asm__ volatile("" ::: "memory");   /* not a tail call: this frame stays */
}

static void unwinds_own_stack(void **state)
{
#if defined(__x86_64__)
	struct ms_symbols *s = ms_symbols_new();
	uint32_t pid = (uint32_t)getpid();
	struct copy *c = calloc(1, sizeof(*c));
	uint64_t pcs[16];
	struct text t[32];
	struct ms_sym sym;
	int n, i, found = -1;

	assert_non_null(c);
	map_own_code(s, t, 32);
	unwind_caller(c);
	n = ms_symbols_unwind(s, pid, c->regs, MASK, c->stack, c->len, pcs, 16);
	assert_true(n >= 2);
	assert_int_equal(ms_symbols_resolve(s, pid, pcs[0], false, &sym), 0);
	assert_string_equal(sym.name, "take_copy");
	for (i = 1; i < n && found < 0; i++)
		if (!ms_symbols_resolve(s, pid, pcs[i], false, &sym) && sym.name && !strcmp(sym.name, "unwind_caller"))
			found = i;
	assert_int_equal(found, 1);
	free(c);
	ms_symbols_free(s);
#else
	skip();
#endif
}

static void refuses_what_it_cannot_unwind(void **state)
{
	struct ms_symbols *s = ms_symbols_new();
	uint64_t regs[17] = { 0 }, pcs[4];
	unsigned char stack[64] = { 0 };
	struct text t[32];

	assert_int_equal(ms_symbols_unwind(s, 1, regs, MASK, stack, sizeof(stack), pcs, 4), -ENOENT);
	map_own_code(s, t, 32);
	assert_int_equal(ms_symbols_unwind(s, (uint32_t)getpid(), NULL, MASK, stack, sizeof(stack), pcs, 4), -ENOENT);
	/* Without IP (bit 8) the registers are not enough to start from. */
	assert_int_equal(ms_symbols_unwind(s, (uint32_t)getpid(), regs, MASK & ~(1ULL << 8), stack, sizeof(stack),
					   pcs, 4), -EINVAL);
	ms_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwinds_own_stack),
		cmocka_unit_test(refuses_what_it_cannot_unwind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
