/*
 * Internal: what ms_record adds to the kernel's records, or changes in
 * them, before they are written. The kernel writes no record for two
 * things the address space holds: the [vsyscall] page, and the ELF
 * loader's trim of an image's first PT_LOAD. And a binary's build-id is
 * read once, when the binary is first seen mapped.
 */
#ifndef MS_SESSION_REWRITE_H
#define MS_SESSION_REWRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdata/format.h"
#include "stream/sample.h"          /* ms_sample_id_size */
#include "util/buf.h"

/* Whether this machine maps [vsyscall] into processes (it shows in our own maps). */
bool ms_has_vsyscall(void);

/*
 * Builds into out (cap bytes) the MMAP2 of [vsyscall] for the exec that
 * comm records: its pid, tid and trailer (the last trailer bytes of comm).
 * Returns the record's size, or 0 where comm is too short or out too small.
 */
size_t ms_vsyscall_record(const struct perf_record_comm *comm, size_t trailer, void *out, size_t cap);

/*
 * The kernel's ELF loader (binfmt_elf, elf_map) maps an image's first
 * PT_LOAD with the size of the whole image, then unmaps what lies past
 * that segment itself: no syscall, no record. Where m maps a file from its
 * start (an exec's map; the caller knows it is in the exec's window), its
 * len is cut as the loader cut it, read from the file while it is there
 * and is the one mapped (same inode). m is the caller's copy.
 */
void ms_trim_exec_map(struct perf_record_mmap2 *m);

/* The code binaries a recording has seen mapped. */
struct ms_binaries {
	struct ms_buf names;         /* char * each, owned */
};

void ms_binaries_init(struct ms_binaries *b);
void ms_binaries_release(struct ms_binaries *b);

/*
 * Notes the binary m maps, if it is code (PROT_EXEC) of a file by path.
 * Returns 1 where it is new (its name, m's own bytes, in *name: read its
 * build-id now), 0 where it is known or no code binary, -ENOMEM.
 */
int ms_binaries_note(struct ms_binaries *b, const struct perf_record_mmap2 *m, const char **name);

#endif
