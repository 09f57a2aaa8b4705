/*
 * Internal to the library: names of code that a JIT wrote, as perf's
 * conventions publish them. A perf map (/tmp/perf-PID.map: node
 * --perf-basic-prof, JVM agents, -XX:+DumpPerfMapAtExit, python -X perf)
 * says "START SIZE name" per line and nothing of time: a later line wins
 * where two hold an address. A jitdump (jit-PID.dump, perf inject --jit's
 * input) says when each piece of code was loaded or moved: a sample is
 * named by the entry live at its time. Both are read where perf reads
 * them, when the recording is read.
 */
#ifndef MS_SYMBOLS_JIT_H
#define MS_SYMBOLS_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ms_symbols;

struct jit_entry {
	uint64_t start, end;          /* the code: [start, end) */
	uint64_t from, until;         /* the instants it is there: [from, until); 0, UINT64_MAX: untimed */
	uint64_t maxend;              /* sorted by start: the largest end of this entry and all before it */
	const char *name;             /* interned in the table */
	uint64_t index;               /* jitdump's code_index (CODE_MOVE names it); 0 in a perf map */
	uint32_t seq;                 /* the order written: of two live entries, the later wins */
};

struct jit_table {
	char *path;                   /* the file, as ms_sym.dso names it */
	struct jit_entry *v;
	size_t n, cap;
	char **names;                 /* interned names, by hash; NULL: empty */
	size_t nr_names, cap_names;
	bool sorted;
};

/* An empty table for the file at path: NULL on ENOMEM. */
struct jit_table *ms_jit_new(const char *path);

/* Adds code [start, start + size) named name from instant from (0: always). 0 or -ENOMEM. */
int ms_jit_add(struct jit_table *t, uint64_t start, uint64_t size, uint64_t from, uint64_t index, const char *name);

/*
 * jitdump's CODE_MOVE: the code of index at old_start leaves it at instant
 * at and is at new_start from then. 0, or -ENOENT (no such code), -ENOMEM.
 */
int ms_jit_move(struct jit_table *t, uint64_t index, uint64_t old_start, uint64_t new_start, uint64_t size,
		uint64_t at);

/* Sorts the table for ms_jit_find(); entries added after need another call. */
void ms_jit_sort(struct jit_table *t);

/*
 * The entry naming addr at instant at: of those loaded by then, the latest
 * (code written over older code); NULL where none, or where that one had
 * moved away by then.
 */
const struct jit_entry *ms_jit_find(const struct jit_table *t, uint64_t addr, uint64_t at);

/* Accepts NULL. */
void ms_jit_free(struct jit_table *t);

/*
 * Reads the perf map at path into a new table (jitfiles.c). NULL with
 * errno: ENOENT (none), EPERM (not a regular file, or owned by neither
 * this user nor root: perf's rule, as a map in /tmp could be anyone's),
 * ENOMEM; lines that do not parse are skipped.
 */
struct jit_table *ms_perfmap_read(const char *path);

/*
 * Reads the jitdump at path, written by process pid (jitfiles.c). timed:
 * its timestamps are on the recording's clock (CLOCK_MONOTONIC, unless
 * the dump says they are the CPU's counter); otherwise every entry is
 * untimed. NULL with errno: ENOENT, EPERM (not a regular file), ENOEXEC
 * (not a jitdump of pid: another process's, or another byte order),
 * ENOMEM. A record cut short ends the reading; what came before stays.
 */
struct jit_table *ms_jitdump_read(const char *path, uint32_t pid, bool timed);

/* Whether path names a jitdump: its last component is jit-<digits>.dump. */
bool ms_jitdump_path(const char *path);

/*
 * The instant symbols are resolved at: where a jitdump's code changed
 * since the last instant, the generation moves. ms_symbols_track() sets it
 * from each event; a caller with samples in runs sets it per sample past
 * ms_symbols_next_change() (symbols.c).
 */
void ms_symbols_set_time(struct ms_symbols *s, uint64_t t);

/* The first instant after the current one at which a JIT's name may change; UINT64_MAX: none known. */
uint64_t ms_symbols_next_change(const struct ms_symbols *s);

/* Whether the events' timestamps are CLOCK_MONOTONIC, a jitdump's clock (the default: mapscope's). */
void ms_symbols_clock_monotonic(struct ms_symbols *s, bool yes);

#endif
