/*
 * A symbol table made to try the walk's rules for addresses no sized
 * symbol holds (lib/symbols/symgaps.c): sizeless labels inside and after
 * sized functions, one listed before a function that covers it, one listed
 * after a later label that shadows it, as globals and as locals (the walk
 * reads the globals first). The code is never run: only its symbols are
 * read.
 */
__asm__(
	".text\n"
	/* Listed in this order (the assembler keeps the order symbols first appear). */
	".globl g_shadowed\n"           /* sizeless, inside g_cover: named while g_cover is not seen, never after */
	".globl g_cover\n"
	".globl g_late\n"               /* sizeless, listed before g_early, which lies below it */
	".globl g_early\n"
	".globl g_after\n"
	".type g_cover, @function\n"
	"g_cover:\n"
	"	.skip 16\n"
	"g_shadowed:\n"
	"	.skip 48\n"
	".size g_cover, 64\n"
	"g_after:\n"                    /* sizeless, past g_cover's end */
	"	.skip 64\n"
	"g_early:\n"
	"	.skip 32\n"
	"g_late:\n"
	"	.skip 32\n"
	/* The same shapes among the locals, which the walk reads second. */
	"l_shadowed:\n"
	".type l_cover, @function\n"
	"l_cover:\n"
	"	.skip 16\n"
	"l_inside:\n"
	"	.skip 48\n"
	".size l_cover, 64\n"                /* above it, l_shadowed is the last candidate and l_cover shadows it */
	"	.skip 64\n"
	".type l_sized, @function\n"
	"l_sized:\n"
	"	.skip 32\n"
	".size l_sized, 32\n"
	"l_tail:\n"
	"	.skip 96\n"
	".globl g_end\n"
	".type g_end, @function\n"
	"g_end:\n"
	"	.skip 8\n"
	".size g_end, 8\n"
	/*
	 * Two sized locals at one address, the wider listed first (globals are
	 * listed as the linker hashes them): the walk takes the narrower where
	 * both hold an address (as libc's _sys_siglist@GLIBC_2.2.5 over
	 * @GLIBC_2.3.3), the wider past its end.
	 */
	".data\n"
	".type l_wide, @object\n"
	".type l_narrow, @object\n"
	"l_wide:\n"
	"l_narrow:\n"
	"	.skip 24\n"
	".size l_wide, 24\n"
	".size l_narrow, 16\n"
	"l_data_tail:\n"               /* sizeless, the last in .data: past .data, in no section, it names nothing */
	"	.skip 8\n"
);
