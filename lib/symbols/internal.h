/*
 * Internal to lib/symbols: the binaries, their symbol tables and the
 * processes that map them, shared by the files that each do one job:
 * symbols.c (following maps, resolving), symtab.c (a binary's sorted
 * symbol table), unwind.c (DWARF unwinding), elf.c (reading ELF files
 * safely).
 */
#ifndef MS_SYMBOLS_INTERNAL_H
#define MS_SYMBOLS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <elfutils/libdwfl.h>

#include <mapscope/symbols.h>

#include "symbols/cfirule.h"
#include "symbols/jit.h"
#include "util/u32map.h"

struct seg {
	uint64_t offset, filesz, vaddr, memsz;
};

struct cached {
	uint64_t vaddr;               /* key; UINT64_MAX: empty */
	const char *name, *raw;       /* demangled, and as the symbol table has it */
	uint64_t offset;
};

/* A string table the symbols' names lie in: its Elf, its start, and the name furthest in. */
struct bin_strtab {
	Elf *elf;
	uintptr_t base, last;
};

/* A symbol with a size that libdwfl's search may name, as it sees it. */
struct sized {                   /* 32 bytes: a table is written once, page by new page */
	uint64_t value;               /* adjusted, as addresses are */
	uint64_t maxend;              /* the largest end of this entry and all before it */
	const char *name;
	uint32_t size;                /* it holds [value, value + size) */
	uint32_t idx : 30;            /* its index: the search's order */
	uint32_t bind : 2;            /* binding_value() */
};

struct bin {
	char *path;
	int state;                    /* 0: not opened, 1: segments read, 2: symbols loaded,
					 -1: unusable, -2: could not be opened */
	int open_errno;
	bool warned;
	bool tried;                   /* ms_bin_try_symbols() found they would warn: naming reads them */
	struct seg *segs;
	size_t nr_segs;
	uint64_t lo, hi;              /* vaddr span of the loaded image */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct cached *cache;
	size_t cache_cap, cache_len;
	/* The symbols with a size, by value; sizeless globals' values, sorted. */
	struct sized *sized;
	size_t nr_sized;
	uint64_t *sizeless;
	size_t nr_sizeless;
	int first_global;
	bool table;                   /* sized and sizeless are built */
	struct bin_strtab strtabs[2]; /* in the order the symbols are in; 3 in nr_strtabs: more, none told apart */
	int nr_strtabs;
	bool strtabs_read;
	struct ms_framecache *frames; /* ms_symbols_frames' answers, by vaddr */
	struct ms_scopes *scopes;     /* its compile units' scope trees, indexed (scopes.c) */
	struct ms_symgaps *gaps;      /* names of addresses no sized symbol holds (symgaps.c) */
	Elf *elf;                     /* the file, read once for its symbols and every unwinder (ms_bin_elf()) */
	int elf_fd;                   /* its descriptor, while elf lives */
	int seg_fd;                   /* 1 + the descriptor its segments were read from, kept for elf; 0: none */
	int elf_state;                /* 0: not opened yet, 1: elf open, else -errno: why it cannot be */
	bool elf_read;                /* opened with ELF_C_READ: sections read as asked, not the file mapped */
	bool elf_written;             /* libelf writes into its mapping (written_in_place()): no other thread's to read */
	const char *image;            /* not NULL: the file as another's symbols mapped it, read here in place */
	size_t image_size;
	struct bin_unwind *uw;        /* what every process's unwinder reads of it (unwind.c) */
	int uw_state;                 /* 0: not read yet, 1: uw read, -1: cannot be */
	uint64_t uw_vaddr, uw_end;    /* its first PT_LOAD's aligned vaddr, its last one's end */
	bool uw_exec;                 /* ET_EXEC: at its own addresses, whatever the bias */
	unsigned char want_id[64];    /* the build-id the recording saw */
	size_t want_id_len;
};

/*
 * What each process's module of a binary points to (its userdata), apart
 * from the bins so that it stays where it is while they grow (unwind.c).
 */
struct bin_unwind {
	Elf *elf;                     /* the bin's file (ms_bin_elf()), borrowed */
	bool x86_64;                  /* an x86-64 ELF64: its rows are the ones cfirule.c knows */
	bool debug_frame;             /* it has a .debug_frame section (any spelling): libdwfl may read it */
	int cfi_state;                /* 0: cfi not read yet, 1: read, -1: no .eh_frame */
	Dwarf_CFI *cfi;               /* its .eh_frame, as each process's module reads it */
	struct ms_cfirules *rules;    /* its simple CFI rows, by address (cfirule.h) */
};

struct inst {
	size_t bin;
	uint64_t bias, lo, hi;        /* addresses [lo, hi) in the process */
};

struct unwind_arg {
	uint32_t tid;
	uint64_t regs[17];            /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	const unsigned char *stack;
	size_t stack_len;
	uint64_t *out;
	int n, max;
};

/* A binary of a process as its unwinder's Dwfl has it, or would: a module over [lo, hi) at bias (unwind.c). */
struct uw_span {
	uint64_t lo, hi, bias;
	size_t bin;
};

struct jit_range {
	uint64_t start, end;
};

struct proc_bins {
	uint64_t gen;                 /* the symbols' generation when this process's names last moved */
	struct inst *v;
	size_t n, cap;
	size_t hint;
	uint32_t epoch;               /* moves when v is emptied (exec, a fork into this pid) */
	bool overlap;                 /* two instances share addresses: the first holding one answers, never the hint */
	bool pinned;                  /* a pin names v as of this epoch: v is kept when emptied (pin.c) */
	/*
	 * For unwinding (unwind.c): its binaries as its Dwfl has them, each at
	 * its bias, in the order reported (the Dwfl, built only where libdwfl
	 * walks a stack, from them); the same by address where none overlap.
	 */
	struct uw_span *uw_spans, *uw_sorted;
	size_t uw_nr, uw_cap, uw_sorted_nr, uw_sorted_cap;
	size_t uw_n;                  /* instances they were made from */
	size_t uw_dwfl_nr;            /* spans reported to dwfl */
	size_t uw_attachable;         /* spans whose module dwfl_attach_state() may take its backend from */
	bool uw_valid;                /* false: made again from every instance (exec, the leader's exit) */
	bool uw_overlap;              /* two spans share addresses, or one is empty: modules found by the Dwfl */
	bool uw_other;                /* a binary is not x86-64: every stack by libdwfl */
	Dwfl *dwfl;
	struct unwind_arg *uw;
	struct jit_range *exec;       /* anonymous memory made executable: where JIT code can be (jitproc.c) */
	size_t nr_exec, cap_exec;
	struct jit_table *jitdump;    /* its jit-PID.dump, once mapped */
	struct jit_table *perfmap;    /* /tmp/perf-PID.map */
	int perfmap_state;            /* 0: not read yet, 1: read, -1: none */
};

struct demangled {
	const char *raw;              /* the symbol table's name; NULL: empty slot */
	const char *name;             /* as people read it, or raw */
	bool owned;
};

/* Why a stack was walked by libdwfl: the reasons of cfirule.h, and these. */
enum ms_unwind_why {
	MS_UW_DEBUG_FRAME = MS_CFI_WHY_NR, /* no .eh_frame row, and a .debug_frame libdwfl would look in */
	MS_UW_OVERLAP,                /* two of the process's binaries share addresses, or one has none */
	MS_UW_NOT_X86_64,             /* the process mapped a binary of another machine */
	MS_UW_WHY_NR
};

/* How the stacks were unwound: by simple CFI rows, or by libdwfl (forced, or for why). */
struct ms_unwind_stats {
	uint64_t rules, dwfl, why[MS_UW_WHY_NR];
};

struct ms_symbols {
	struct bin *bins;
	size_t nr_bins, cap_bins;
	uint32_t *bin_slots;          /* bins by path: open addressing, index + 1, 0 empty (symbols.c) */
	size_t bin_slots_cap;         /* a power of two, over twice nr_bins; 0: none yet */
	struct ms_u32map procs;       /* pid -> struct proc_bins */
	uint64_t gen;                 /* moves with every change ms_symbols_track() makes */
	uint64_t time_gen;            /* gen when the instant a jitdump's names are read at last moved them */
	bool exact_only;              /* no sorted tables: every address through libdwfl's own search */
	struct demangled *dm;         /* raw name -> demangled, by the raw pointer */
	size_t dm_cap, dm_len;
	uint64_t now;                 /* the instant names are resolved at (jitproc.c) */
	uint64_t next_change;         /* times[time_at], or UINT64_MAX */
	uint64_t *times;              /* the instants a jitdump's names change, sorted */
	size_t nr_times, cap_times, time_at;
	bool clock_other;             /* the events' clock is not CLOCK_MONOTONIC: jitdumps untimed */
	struct proc_bins *view;       /* while a pin names a chain: what view_pid's binaries were (pin.c) */
	uint32_t view_pid;
	struct retired *retired;      /* instance lists emptied while pinned, kept for their pins */
	size_t nr_retired, cap_retired;
	bool unwind_dwfl;             /* every stack by libdwfl's walk (MAPSCOPE_UNWIND=dwfl), for checking */
	struct ms_unwind_stats unwind_stats;
	struct ms_callmemo *memo;     /* call sites named, by what their naming depends on (callsite.c) */
	struct ms_preopen *preopen;   /* binaries' files opened ahead (preopen.h), or NULL */
};

/* A process's instance list as of an epoch, emptied since, kept for the pins that name it. */
struct retired {
	const struct proc_bins *p;
	uint32_t epoch;
	struct inst *v;
	size_t n;
};

/* Empties p's instance list, keeping it where a pin names it (pin.c). */
void ms_pin_retire(struct ms_symbols *s, struct proc_bins *p);

struct ms_pin;

/*
 * The instances of pin's list (the process's while its epoch is the
 * pin's, else the one kept when it moved on) that naming chain looks up,
 * each once, into out (at most max): their count, -E2BIG, or -EAGAIN
 * where the list is no longer kept (pin.c).
 */
int ms_pin_insts(const struct ms_symbols *s, const struct ms_pin *pin, const uint64_t *chain, uint32_t len,
		 struct inst *out, size_t max);

/*
 * ms_symbols_call_site(), leaving out site where it is NULL and text
 * where it is NULL; a chain named before alike is copied from the memo
 * (callsite.c).
 */
void ms_call_site_parts(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, char *site,
			size_t site_len, char *text, size_t text_len);

/* Frees the kept lists (pin.c). */
void ms_pin_release(struct ms_symbols *s);

/* Whether a JIT's tables may name addr in p: it lies in memory p made executable (jitproc.c). */
bool ms_jit_may_name(const struct proc_bins *p, uint64_t addr);

/* libdwfl's ways to find a binary and its separate debug file (symbols.c). */
extern const Dwfl_Callbacks ms_dwfl_callbacks;

/* The binaries of process pid, made when create and missing; NULL when none (symbols.c). */
struct proc_bins *ms_symbols_proc(struct ms_symbols *s, uint32_t pid, bool create);

/*
 * Opens the regular file at path for reading, as ms_elf_open does but
 * whatever its first bytes; st is filled. The descriptor, or -ENOEXEC
 * (not a regular file), -EPERM (a place refused), or the -errno of stat
 * or open.
 */
struct stat;
int ms_file_open_regular(const char *path, struct stat *st);

/*
 * Opens the ELF file at path for reading, never blocking and never
 * reading what is not one: only a regular file whose first bytes are the
 * ELF magic, and never one under /proc, /sys or /dev, whatever a
 * recording names (elf.c). The descriptor (the caller closes it), or
 * -ENOEXEC (not a regular ELF file), -EPERM (a place refused), or the
 * -errno of stat or open.
 */
int ms_elf_open(const char *path);

/*
 * The separate debug file that .gnu_debuglink link names for the binary
 * at file_name: beside it, in its .debug folder, or under /usr/lib/debug
 * by its folder; the one with build-id id (of id_len bytes), or where
 * id_len is 0, with CRC crc. Its descriptor with *found its path
 * (malloc'd), or -ENOENT, -ENOMEM (debuginfo.c).
 */
/* The places a .gnu_debuglink is looked for, in order (ms_debuglink_place()). */
#define MS_DEBUGLINK_PLACES 3

/*
 * Place i (from 0) where the debug file that .gnu_debuglink link names
 * for the binary at file_name is looked for, into path; false past the
 * last, or where link is not a file name (debuginfo.c).
 */
bool ms_debuglink_place(const char *file_name, const char *link, int i, char *path, size_t len);

int ms_debuglink_find(const char *file_name, const char *link, uint32_t crc, const unsigned char *id,
		      size_t id_len, char **found);

/*
 * The debug file to read for fd, a separate debug file of build-id id (of
 * id_len bytes): where its DWARF is compressed, a copy kept decompressed
 * in the user's cache folder, made if missing, or where the cache is off
 * or not to be trusted, one in an unnamed file for this process (fd is
 * then closed, the copy's descriptor returned); otherwise, or where no
 * copy can be made, fd itself (debugcache.c).
 */
int ms_debugcache_swap(int fd, const unsigned char *id, size_t id_len);

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2               /* glibc's elf.h has it from 2.37 */
#endif

/*
 * The compressed section data [from, from + len) of in (after its
 * Elf64_Chdr), of type ELFCOMPRESS_ZLIB or ELFCOMPRESS_ZSTD, inflated
 * into out at at: true where it came to want bytes exactly, the stream
 * ending with the input (debugcache.c).
 */
bool ms_debugcache_inflate(int in, uint64_t from, uint64_t len, uint32_t type, int out, uint64_t at, uint64_t want);

/*
 * The decompressed copy of the debug file of build-id id, from the cache,
 * or made from /usr/lib/debug/.build-id/ where that one is compressed (as
 * ms_debugcache_swap() makes it): its descriptor, with *name its path, or
 * the debug file's for a copy of this process only (malloc'd); -1 where
 * there is none (debugcache.c).
 */
int ms_debugcache_find(const unsigned char *id, size_t id_len, char **name);

/*
 * The path the decompressed copy of build-id id has in the cache's folder,
 * the folder made where make (0700); false where there is none (debugcache.c).
 */
bool ms_debugcache_copy_path(char *path, size_t len, const unsigned char *id, size_t id_len, bool make);

/* /usr/lib/debug/.build-id/XX/REST.debug of build-id id into path; false where id is not one (debugcache.c). */
bool ms_debug_build_id_path(char *path, size_t len, const unsigned char *id, size_t id_len);

/*
 * b's file as libelf reads it, opened once for its symbols' Dwfl and
 * every process's unwinder, each of which takes a reference of its own
 * (ms_bin_elf_ref()): 0 with *elf set, or ms_elf_open()'s -errno where
 * it cannot be opened, -ENOEXEC where libelf does not read it as ELF; b
 * keeps it until ms_bin_elf_release() (elf.c).
 */
int ms_bin_elf(struct bin *b, Elf **elf);

/* A reference to elf, as libdwfl takes one from its find_elf callback: elf_end() drops it (elf.c). */
Elf *ms_bin_elf_ref(Elf *elf);

/* Drops b's own reference to its file, and closes it (elf.c). */
void ms_bin_elf_release(struct bin *b);

/* Reads b's PT_LOAD segments: state 1, or -1 (not ELF), or -2 (open_errno says why) (elf.c). */
void ms_bin_read_segments(struct bin *b);

/* The path of the binary map m names, into out: false where it names none (symbols.c). */
struct ms_event_map;
bool ms_bin_map_path(const struct ms_event_map *m, char *out, size_t len);

/* What ms_bin_read_segments() reads of a file first: its program headers lie there in nearly every binary. */
#define MS_ELF_HEAD 4096

/*
 * ms_elf_open(), with the file's first bytes read into head (up to cap;
 * *len of them): one read for the magic and, for most binaries, the ELF
 * header and program headers too (elf.c).
 */
int ms_elf_open_head(const char *path, unsigned char *head, size_t cap, size_t *len);

/*
 * ms_bin_read_segments() of a file b's path names, from what
 * ms_elf_open_head() gave for it: fd (b takes it) or its error, and the
 * file's first len bytes in head; and, where not NULL, elf, what
 * ms_bin_elf_ahead() made of fd, and written, what it said (b takes it
 * as its ELF, or ends it).
 */
void ms_bin_segments_from(struct bin *b, int fd, unsigned char *head, size_t len, Elf *elf, bool written);

/*
 * What ms_bin_elf() makes of a binary's descriptor fd, made ahead of it
 * on another thread: its ELF (fd stays open while it lives), and whether
 * libelf writes into its mapping; NULL where libelf does not read it as
 * ELF.
 */
Elf *ms_bin_elf_ahead(int fd, bool *written);

/* Whether the binaries hold fewer descriptors than they may keep (elf.c); any thread may ask. */
bool ms_bin_held_room(void);

/* Ends b's unwinding ELF, once no process's unwinder holds it (unwind.c). */
void ms_bin_unwind_release(struct bin *b);

/* p's unwinder starts again from its instances at its next stack, as at an exec (unwind.c). */
void ms_unwind_proc_reset(struct proc_bins *p);

/* Frees p's unwinder (unwind.c). */
void ms_unwind_proc_release(struct proc_bins *p);

/*
 * For checking: on, every stack is walked by libdwfl (dwfl_getthread_frames);
 * off (the default, unless MAPSCOPE_UNWIND=dwfl), by simple CFI rows where
 * every frame of the stack has one, libdwfl's walk otherwise (unwind.c).
 */
void ms_symbols_unwind_dwfl_only(struct ms_symbols *s, bool on);

/* How the stacks were unwound so far (unwind.c). */
void ms_symbols_unwind_stats(const struct ms_symbols *s, struct ms_unwind_stats *st);

/* Logs those figures (debug level), where any stack was unwound (unwind.c). */
void ms_symbols_unwind_log(const struct ms_symbols *s);

/* Opens b's symbols: state 2, or -1 with a warning (symtab.c). */
void ms_bin_load_symbols(struct bin *b);

/*
 * Opens b's symbols (state 1) where that says nothing: true where they
 * are read (state 2) or were before (or are unusable, said already);
 * false, b as it was, where reading them would warn, or where its
 * build-id is not known yet (a pipe's may come later) (symtab.c).
 */
bool ms_bin_try_symbols(struct bin *b);

/*
 * Opens b's symbols (state 1) and says nothing: true with state 2; false
 * with b as it was, its module and Dwfl gone, where they cannot be read
 * as its build-id says (symtab.c).
 */
bool ms_bin_open_symbols(struct bin *b);

/* The index of the bin of path, made where create and missing; -1 where none (symbols.c). */
ssize_t ms_bin_index(struct ms_symbols *s, const char *path, bool create);

/*
 * The name libdwfl gives vaddr in b, demangled, and the offset into it;
 * NULL where none. Where raw is not NULL, *raw is the name as the symbol
 * table has it, and *id where that string lies in its table: which table
 * (1 or 2, as the symbols list them) in the top byte, its offset in the
 * rest; two names of one binary are one string where their ids are equal,
 * and another reading of the same files gives the same; 0 where it cannot
 * be told (symtab.c).
 */
const char *ms_bin_name(struct ms_symbols *s, struct bin *b, uint64_t vaddr, uint64_t *offset, const char **raw,
			uint64_t *id);

/*
 * For checking: on, every address is resolved by libdwfl's own search
 * (dwfl_module_addrinfo(), a walk over every symbol); off (the default),
 * by the same rules over a table sorted once per binary (symtab.c).
 */
void ms_symbols_exact_only(struct ms_symbols *s, bool on);

/* qsort's order of uint64_t values, lowest first (symtab.c). */
int ms_u64_order(const void *a, const void *b);

/* Sorts v[0, n) into that order, without a callback per comparison (symtab.c). */
void ms_u64_sort(uint64_t *v, size_t n);

/* The index of the first of sorted v[0, n) not below x (n where none is). */
static inline size_t ms_u64_lower(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether sorted v[0, n) holds x. */
static inline bool ms_u64_has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t k = ms_u64_lower(v, n, x);

	return k < n && v[k] == x;
}

/* Follows the maps that can hold JIT code, and the jitdumps mapped (jitproc.c). */
void ms_jit_track(struct ms_symbols *s, const struct ms_event *ev);

/* Names addr by the JIT's tables where no binary holds it: 0 with out filled, or -ENOENT (jitproc.c). */
int ms_jit_resolve(struct ms_symbols *s, uint32_t pid, uint64_t addr, struct ms_sym *out);

/* An exec: the process's JIT state goes; and all of it, at the end (jitproc.c). */
void ms_jit_proc_clear(struct proc_bins *p);
void ms_jit_proc_release(struct proc_bins *p);

/*
 * The name dwfl_module_addrinfo() gives vaddr in mod, and the offset into
 * it, without its walk over every symbol (symgaps.c); *gaps is made on
 * the first call where the caller has not made it (ms_symgaps_begin()),
 * and freed by ms_symgaps_free().
 */
const char *ms_symgaps_name(struct ms_symgaps **gaps, Dwfl_Module *mod, uint64_t vaddr, uint64_t *offset);

/*
 * The gaps of mod made from a pass over its symbols that the caller makes
 * anyway (symtab.c's table): begin, then add each symbol i that
 * dwfl_module_getsym_info() gives a name, as it gives it, in order. The
 * caller owns what begin returns (NULL on ENOMEM) and hands it to
 * ms_symgaps_name() or ms_symgaps_free().
 */
struct ms_symgaps *ms_symgaps_begin(Dwfl_Module *mod);
void ms_symgaps_add(struct ms_symgaps *g, Dwfl_Module *mod, int i, const GElf_Sym *sym, const char *name,
		    uint64_t value, GElf_Word shndx, Elf *elf, uint64_t bias);
void ms_symgaps_free(struct ms_symgaps *g);

/*
 * Lends g (where not NULL) the table of the symbols added, by
 * ms_sized_sort(): v[0, n) must outlive g. Where it holds other symbols
 * than the sized ones g keeps (their counts differ), g makes its own.
 */
void ms_symgaps_table(struct ms_symgaps *g, const struct sized *v, size_t n);

/* Sorts v[0, n) by value, equal values in the order they came, and sets each maxend: false on ENOMEM (v unsorted). */
bool ms_sized_sort(struct sized *v, size_t n);

/* The number of entries of v[0, n), sorted by ms_sized_sort(), that start at or below addr. */
static inline size_t ms_sized_upto(const struct sized *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Whether dwfl_module_addrinfo()'s walk considers a symbol at all, the
 * address aside: named, defined (shndx: its section index as the caller
 * reads it), and no section, file or TLS symbol. symtab.c's table and
 * symgaps.c's replay keep the same symbols by it.
 */
static inline bool ms_sym_walked(const char *name, const GElf_Sym *sym, GElf_Word shndx)
{
	return name && name[0] && shndx != SHN_UNDEF && GELF_ST_TYPE(sym->st_info) != STT_SECTION &&
	       GELF_ST_TYPE(sym->st_info) != STT_FILE && GELF_ST_TYPE(sym->st_info) != STT_TLS;
}

/* How many addresses were answered by the replay made for every address at once (the tests ask). */
size_t ms_symgaps_nr_fast(const struct ms_symgaps *g);

/* The bytes g's kept answers take (the tests ask). */
size_t ms_symgaps_answer_bytes(const struct ms_symgaps *g);

/* Gaps replayed one at a time before the replay is made for every address at once (2; the tests change it). */
extern size_t ms_symgaps_fast_after;

/*
 * A C++ or Rust symbol demangled as perf prints it, without parameters:
 * malloc'd, or NULL where name is not one (or is too long) (demangle.c).
 */
char *ms_demangle(const char *name);

/* ms_demangle() of raw once per raw pointer: raw itself where it is not mangled; lives as long as s. */
const char *ms_symbols_demangled(struct ms_symbols *s, const char *raw);

/* Frees the demangled names (demangle.c). */
void ms_symbols_demangled_release(struct ms_symbols *s);

#endif
