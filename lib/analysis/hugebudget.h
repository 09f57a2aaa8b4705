/*
 * Internal: hugepage advice within a budget of memory (hugepages --budget),
 * for a machine whose free 2 MiB pages, or a cgroup's limit, leave room for
 * only some of what is dense. The advice is ranked already; the budget
 * keeps the best-ranked regions whose spans fit, leaves out the rest with
 * the reason, and says where the evidence could not tell a region kept
 * from one left out: two equal tables, both touched in full once, rank
 * level by first touches alone, and only ongoing access parts them.
 */
#ifndef MS_ANALYSIS_HUGEBUDGET_H
#define MS_ANALYSIS_HUGEBUDGET_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/hugepages.h>

/* What ranked the advice: the figure two regions are compared by. */
enum ms_huge_rank {
	MS_HUGE_RANK_FAULTS,      /* benefit: faults saved (first touches) */
	MS_HUGE_RANK_TLB,         /* TLB-miss samples */
	MS_HUGE_RANK_ACCESS,      /* hot_bytes: ongoing access (accessed bits, DAMON) */
};

struct ms_huge_budget {
	uint64_t bytes;           /* room for hugepages: each advised span takes 2 MiB of it */
	enum ms_huge_rank by;
	const char *evidence;     /* what ranked them, in words ("first touches (page faults)") */
	size_t reason_max;        /* each v[i].reason is a writable buffer of this many bytes */
};

/*
 * Walks v[0, n), best first: an advised region whose spans fit in what is
 * left of b->bytes is kept; one that does not is no longer advised, its
 * no_room set and its reason prefixed with why. A region left out whose
 * rank figure is within a tenth of a kept one's is level with it: both
 * say so (level_with), as the choice between them is the order's, not the
 * evidence's. The reasons are written in place.
 */
void ms_huge_budget_fit(struct ms_huge_advice *v, size_t n, const struct ms_huge_budget *b);

#endif
