/*
 * Internal: the protection of the memory a region's samples touched. A
 * region keeps its identity through mprotect, so the perms it was made
 * with (a V8 cage's or a glibc arena's ---p) can differ from those of the
 * pages its samples were in (rw-p where it was committed). Per region and
 * per protection: the samples that touched memory of that protection, and
 * the time of the first. Only regions with samples cost memory.
 */
#ifndef MS_ANALYSIS_TOUCHED_H
#define MS_ANALYSIS_TOUCHED_H

#include <stdbool.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

/* PROT_READ | PROT_WRITE | PROT_EXEC: eight protections. */
#define MS_TOUCHED_PROTS 8

struct ms_touched_stat {
	uint64_t samples[MS_TOUCHED_PROTS];    /* by protection (PROT_* bits) */
	uint64_t first_ns[MS_TOUCHED_PROTS];   /* the first such sample's time */
};

struct ms_touched;

/* NULL on no memory. Counts the samples in the session's window only. */
struct ms_touched *ms_touched_new(void);
void ms_touched_free(struct ms_touched *t);

extern const struct ms_analysis ms_touched_analysis;

/* The model whose protections the samples are looked up in: the session's, as the run begins (or a test's). */
void ms_touched_bind(struct ms_touched *t, const struct ms_aspace *as);

/* Region id's figures, copied into *out: true; false where no sample touched it (*out untouched). */
bool ms_touched_region(const struct ms_touched *t, uint32_t id, struct ms_touched_stat *out);

/*
 * The protection most of the samples touched (the earliest first where
 * two tie), or -1 where there were none; *kinds: how many protections
 * they touched.
 */
int ms_touched_main_prot(const struct ms_touched_stat *st, int *kinds);

/*
 * ms_touched_main_prot() of region id's figures, read in place: a report
 * asks it of each of its rows, where copying out the whole figures (128
 * bytes) cost more than the answer. -1 (*kinds 0) where no sample touched it.
 */
int ms_touched_region_main(const struct ms_touched *t, uint32_t id, int *kinds);

#endif
