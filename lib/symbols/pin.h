/*
 * Internal: call chains named later, as they would have been named when
 * pinned (pin.c), for allocation sites that may never be printed.
 */
#ifndef MS_SYMBOLS_PIN_H
#define MS_SYMBOLS_PIN_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/symbols.h>

struct proc_bins;

/* What naming a chain later needs: its process's instance list as of the pin. */
struct ms_pin {
	struct proc_bins *p;
	uint32_t epoch, n;
};

/*
 * Pins chain (len addresses, innermost first, perf's context markers
 * allowed) of process pid: 0 with *pin filled, where
 * ms_symbols_call_site_pinned() will name it later exactly as
 * ms_symbols_call_site() would now; -EAGAIN where it must be named now.
 */
int ms_symbols_pin(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, struct ms_pin *pin);

/*
 * What naming chain (len addresses, perf's context markers allowed) in
 * process pid depends on, where that is its instances alone, as for a pin:
 * its number of words in key (at most max), or -EAGAIN (naming could
 * depend on more, or a binary of it is not read yet), -E2BIG. Two chains
 * of one key are named alike.
 */
int ms_pin_key(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, uint64_t *key, size_t max);

/*
 * ms_symbols_call_site() of a pinned chain, as things were at the pin; s
 * must not have been freed since. site or text may be NULL: that part is
 * not named (a text report prints sites, never chains).
 */
void ms_symbols_call_site_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid,
				 const uint64_t *chain, uint32_t len, char *site, size_t site_len, char *text,
				 size_t text_len);

/*
 * The frames of code address ip of process pid (ms_symbols_frames()), the
 * outermost's file, where it has no source file, its binary: how a
 * profile names the code that touched data. At most max; how many, 0
 * where no binary holds ip.
 */
int ms_symbols_code_frames(struct ms_symbols *s, uint32_t pid, uint64_t ip, struct ms_frame *out, int max);

/* ms_symbols_code_frames() of ip pinned (a chain of ip alone), as things were at the pin. */
int ms_symbols_code_frames_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid, uint64_t ip,
				  struct ms_frame *out, int max);

/*
 * A code address's symbol as a report's children name it (the name
 * ms_symbols_resolve() gives), with what tells two symbols apart.
 */
struct ms_code_sym {
	const char *name;     /* demangled; NULL where the binary has none for it */
	const char *raw;      /* as the symbol table has it: overloads demangled alike differ here */
	const char *dso;      /* the binary's path */
	uint64_t id;          /* where raw lies in the binary's string tables (ms_bin_name()), or 0 */
};

/*
 * The symbol of code address ip of process pid where a binary holds it:
 * 1 with *out set (its strings live as long as s), 0 where none does (a
 * JIT's code, or nothing's: ms_symbols_resolve() names it).
 */
int ms_symbols_code_symbol(struct ms_symbols *s, uint32_t pid, uint64_t ip, struct ms_code_sym *out);

/* ms_symbols_code_symbol() of ip pinned (a chain of ip alone), as things were at the pin. */
int ms_symbols_code_symbol_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid, uint64_t ip,
				  struct ms_code_sym *out);

#endif
