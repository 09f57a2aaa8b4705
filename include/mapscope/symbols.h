/*
 * ms_symbols: names for addresses, through elfutils (libdwfl): a code
 * address becomes function+offset and file:line, a data address in a
 * binary's .data, .bss or .rodata becomes object+offset. It follows each
 * process's binaries and their load bias from the map events it is fed,
 * so it needs no running process. Each binary is opened once; build-ids and
 * separate debug files are honoured (by build-id and debug link). C++ and
 * Rust names are demangled as perf prints them; a JIT's code is named by
 * perf's conventions (/tmp/perf-PID.map, jit-PID.dump).
 */
#ifndef MAPSCOPE_SYMBOLS_H
#define MAPSCOPE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_symbols;

struct ms_sym {
	const char *dso;          /* the binary's path (a JIT's perf map or jitdump); NULL when none holds the address */
	const char *name;         /* function or object, NULL when the binary has no symbol for it */
	uint64_t offset;          /* from the symbol's start */
	uint64_t vaddr;           /* the address inside the binary */
	const char *file;         /* source file, or NULL */
	int line;
};

/* NULL with errno set. */
struct ms_symbols *ms_symbols_new(void);

/* The build-id the recording saw for path: a different file is not used (one warning). */
void ms_symbols_expect_build_id(struct ms_symbols *s, const char *path, const unsigned char *id, size_t len);

/*
 * Feeds every event, in time order: maps of files, exec, fork and exit move
 * binaries; maps of anonymous executable memory say where a JIT's code can
 * be named (from /tmp/perf-PID.map), and the map of a jitdump (jit-PID.dump)
 * reads it. Samples only move the instant a jitdump's code is named at, so
 * a caller may leave them out where there is none.
 */
void ms_symbols_track(struct ms_symbols *s, const struct ms_event *ev);

/*
 * A count that moves whenever ms_symbols_track() may have changed what an
 * address resolves to: a caller that remembers resolutions keeps them
 * while it stays the same.
 */
uint64_t ms_symbols_generation(const struct ms_symbols *s);

/*
 * Resolves addr in process pid as things are now. 0 with *out filled (name
 * may be NULL), or -ENOENT when no binary holds it. Strings live as long
 * as s. Source lines only when want_line (they cost more).
 */
int ms_symbols_resolve(struct ms_symbols *s, uint32_t pid, uint64_t addr, bool want_line, struct ms_sym *out);

/* A frame of code: a function, and the place in it. */
struct ms_frame {
	const char *name;         /* NULL where the binary has no name for it */
	const char *file;         /* source file, or NULL */
	int line;                 /* 0 where unknown */
};

/*
 * The frames at code address addr of process pid, innermost first: the
 * functions inlined there (from the binary's DWARF, where it has it), each
 * with its place, then the function that holds the code (its symbol) with
 * the place the outermost inlined call was made. At most max; returns how
 * many, 0 when no binary holds addr. The strings live as long as s.
 */
int ms_symbols_frames(struct ms_symbols *s, uint32_t pid, uint64_t addr, struct ms_frame *out, int max);

/*
 * Names the call site of a call chain (innermost first, perf's context
 * markers allowed). site gets the code that made the memory: the first
 * frame past the mechanism (the C library, the loader, glibc malloc,
 * python's obmalloc and PyMem, operator new, jemalloc, tcmalloc) and its
 * two callers, inlined calls expanded, as "function (file:line) ← caller
 * ← caller" (UTF-8; file:line where the binary has debuginfo); where
 * every frame is the mechanism, the first past the allocator's functions
 * (the loader's own maps); empty if none is named. text gets the chain as
 * "f+0x1 <- g+0x2 <- ...".
 */
void ms_symbols_call_site(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len,
			  char *site, size_t site_len, char *text, size_t text_len);

/*
 * Unwinds a user stack copied by record --call-graph dwarf: regs are the
 * user registers in perf's order (mask says which), stack the bytes from
 * SP up. Uses the CFI (.eh_frame, .debug_frame) of the process's binaries
 * as things are now. Fills out with up to max return addresses, innermost
 * first; returns how many, or a negative errno.
 */
int ms_symbols_unwind(struct ms_symbols *s, uint32_t pid, const uint64_t *regs, uint64_t mask,
		      const unsigned char *stack, size_t stack_len, uint64_t *out, int max);

/* "name+0x1f", else "binary+0x1234", else "0x7f..." */
void ms_sym_format(const struct ms_sym *sym, int found, uint64_t addr, char *buf, size_t len);

/* Reads the GNU build-id of the ELF file at path into id (up to cap bytes). Its length, or a negative errno. */
int ms_elf_build_id(const char *path, unsigned char *id, size_t cap);

/*
 * How much of an image's first PT_LOAD the kernel's ELF loader leaves
 * mapped: its file size plus the page offset of its address, page-aligned.
 * 0 with *size set; -ESTALE where the file at path is not inode ino (not
 * the one mapped), -ENOENT where it has no PT_LOAD, or another -errno.
 */
int ms_elf_first_load(const char *path, uint64_t ino, uint64_t *size);

/* Accepts NULL. */
void ms_symbols_free(struct ms_symbols *s);

#ifdef __cplusplus
}
#endif
#endif
