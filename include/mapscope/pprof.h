/*
 * The samples as a pprof profile (profile.proto, gzipped), for go tool
 * pprof and the fleet profilers that take it (Pyroscope, Parca), as an
 * analysis of a session (mapscope/session.h; open it with symbols for
 * named code). One pprof sample per (region, process, code address): its
 * stack is the code that touched the data, with the functions inlined
 * there where the binary's DWARF has them, topped by a frame naming the
 * data region ("[heap]", a file's path, "anon 24 MiB (alloc: make_buffers)",
 * "[unmapped]"). Values: samples and distinct pages (each counted once in
 * its region, under the code that touched it first, so that the totals are
 * the report's), plus faults and
 * tlb_misses where the recording has page-fault events or hardware memory
 * samples with TLB data. Labels: pid, comm and the region's kind. Samples
 * outside the session's window are left out. Where the session's sites
 * are named aside (ms_session_sites_aside()), the code is named on that
 * thread too, and the profile is the same bytes.
 */
#ifndef MAPSCOPE_PPROF_H
#define MAPSCOPE_PPROF_H

#include <stdint.h>

#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_pprof;

/* NULL with errno set. */
struct ms_pprof *ms_pprof_new(void);

/* The analysis (ctx: the profile). */
extern const struct ms_analysis ms_pprof_analysis;

/*
 * After the run: writes the profile of process pid's samples (0: every
 * process) of processes named comm (NULL: any name) to fd, which stays the
 * caller's. duration_ns: the recording's. 0 or a negative errno.
 */
int ms_pprof_write(struct ms_pprof *pp, int fd, uint32_t pid, const char *comm, uint64_t duration_ns);

/*
 * Adds a comment to the profile (pprof -comments shows them), such as
 * what the recording lost. text is copied. 0, -ENOSPC past the fourth, or
 * -ENOMEM.
 */
int ms_pprof_add_comment(struct ms_pprof *pp, const char *text);

/* Accepts NULL. */
void ms_pprof_free(struct ms_pprof *pp);

#ifdef __cplusplus
}
#endif
#endif
