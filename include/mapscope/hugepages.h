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
	uint64_t min_benefit;      /* benefit below this is not advised (0: any benefit) */
	uint64_t min_life_ns;      /* regions that lived less are too short-lived (0: 10 ms) */
	/*
	 * Room for hugepages, in bytes (0: no limit): the best-ranked advised
	 * regions whose spans fit are kept, the rest left out (no_room).
	 */
	uint64_t budget;
};

/*
 * Pages, faults, TLB misses and what follows from them are scaled by the
 * recording's sampling (record -c N, perf's -F: a sampled fault stands for
 * its period's faults, each a page first touched); estimated says so, and
 * period with what resolution. Dense spans are whole 2 MiB-aligned spans
 * inside the region with at least min_pages pages touched, so spans <=
 * aligned_spans and faults_saved <= spans * 511.
 */
struct ms_huge_advice {
	const struct ms_region *region;
	uint64_t start, end;       /* the 2 MiB-aligned range to advise; 0, 0 when not advised or none held now */
	uint32_t spans;            /* dense spans advised: in [start, end), or all of them where it is made */
	uint32_t aligned_spans;    /* whole 2 MiB-aligned spans inside the region */
	uint64_t pages, faults, samples, tlb_misses;  /* of the whole region (samples: as seen, unscaled) */
	uint64_t faults_saved;     /* pages touched in the advised spans minus one per hugepage */
	uint64_t tlb_entries_now, tlb_entries_huge;
	uint64_t benefit;          /* faults saved plus TLB misses, in the advised spans */
	uint64_t period;           /* 1: every event seen; else 1 sample in period (on average) */
	bool estimated;            /* the figures are estimates from sampling */
	bool advised;
	const char *reason;        /* why, in words */
	/*
	 * Ongoing access, where the recording has it (record --referenced,
	 * --damon): the bytes of the region found accessed per interval, on
	 * average; advised regions are then ranked by it, and the reason says so.
	 */
	uint64_t hot_bytes;
	/*
	 * With a budget: dense, but left out for lack of room (advised false);
	 * and the region across the budget's line that ranks level with this
	 * one by the evidence the recording has (within a tenth), where one
	 * does: the choice between them is arbitrary. NULL where none.
	 */
	bool no_room;
	const struct ms_region *level_with;
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
 * The advice for every candidate region that was touched, one at a time:
 * for many regions, where an array of every entry (144 bytes each) would
 * cost more than the counts. ms_hugepages_sort() judges and ranks them
 * and says how many there are: advised ones first by benefit (by TLB
 * misses where the recording has them, by ongoing access where it has
 * that), and those a budget left out for lack of room among them, where
 * they ranked; then the rest, in the same order of their figures. end_ns:
 * the recording's end, for the lifetimes of regions still alive. 0, or
 * -ENOMEM with the results of the sort before released.
 * ms_hugepages_advice_at() gives entry i of that order (NULL past the
 * end). Borrowed: an entry and its reason stay valid until the next
 * ms_hugepages_advice_at(), the order until the next sort,
 * ms_hugepages_advice() or ms_hugepages_free(). Counting more samples
 * afterwards needs a new sort.
 */
int ms_hugepages_sort(struct ms_hugepages *hp, const struct ms_aspace *as, uint64_t end_ns, size_t *n);
const struct ms_huge_advice *ms_hugepages_advice_at(struct ms_hugepages *hp, size_t i);

/*
 * The same advice as one array, in the same order. Borrowed: *out and its
 * reasons stay valid until the next ms_hugepages_advice(),
 * ms_hugepages_sort() or ms_hugepages_free(). 0, or -ENOMEM with the
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
