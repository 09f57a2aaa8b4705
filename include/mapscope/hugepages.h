/*
 * ms_hugepages: which regions belong on transparent hugepages. For every
 * private anonymous or shmem region it counts, per 2 MiB-aligned span, the
 * distinct 4 KiB pages touched, the page faults, the data samples and the
 * TLB-miss samples (hardware memory samples only), and ranks the regions
 * by the faults and TLB entries hugepages would save.
 *
 * Results are borrowed, as from every analysis of the library: what it
 * hands out belongs to the advisor and stays valid until the next call that
 * makes them again or ms_hugepages_free(); the caller frees none of it. Regions
 * they point to belong to the address-space model (the session's).
 */
#ifndef MAPSCOPE_HUGEPAGES_H
#define MAPSCOPE_HUGEPAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MS_HUGE_SPAN (2ULL << 20)

struct ms_hugepages;

struct ms_hugepages_opts {
	uint32_t min_pages;        /* pages of 512 a span needs to be dense (0: 256) */
	uint64_t min_benefit;      /* benefit below this is not advised (0: 1) */
	uint64_t min_life_ns;      /* regions that lived less are too short-lived (0: 10 ms) */
};

struct ms_huge_advice {
	const struct ms_region *region;
	uint64_t start, end;       /* the 2 MiB-aligned range to advise; 0, 0 when not advised */
	uint32_t spans;            /* dense spans in it */
	uint32_t aligned_spans;    /* 2 MiB-aligned spans inside the region */
	uint64_t pages, faults, samples, tlb_misses;  /* in the dense spans, or the whole region if none */
	uint64_t faults_saved;     /* pages touched minus one per hugepage */
	uint64_t tlb_entries_now, tlb_entries_huge;
	uint64_t benefit;          /* faults saved plus TLB misses */
	bool advised;
	const char *reason;        /* why, in words */
};

/* NULL with errno set. opts may be NULL for the defaults. */
struct ms_hugepages *ms_hugepages_new(const struct ms_hugepages_opts *opts);

/*
 * The hugepage advisor as an analysis of a session (ctx: hp): it counts
 * the charged samples by 2 MiB span and notes hugepage advice and the
 * memory that moves.
 */
extern const struct ms_analysis ms_hugepages_analysis;

/*
 * The advice for every candidate region that was touched, advised ones first
 * by benefit. end_ns: the recording's end, for the lifetimes of regions still
 * alive. Borrowed: *out and its reasons stay valid until the next
 * ms_hugepages_advice() or ms_hugepages_free(). 0, or -ENOMEM with the
 * advice of the call before released.
 */
int ms_hugepages_advice(struct ms_hugepages *hp, const struct ms_aspace *as, uint64_t end_ns,
			const struct ms_huge_advice **out, size_t *n);

/* Whether any TLB-miss samples were seen (hardware memory events). */
bool ms_hugepages_have_tlb(const struct ms_hugepages *hp);

/* Accepts NULL. */
void ms_hugepages_free(struct ms_hugepages *hp);

#ifdef __cplusplus
}
#endif
#endif
