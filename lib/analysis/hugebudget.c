/*
 * Hugepage advice within a budget of memory: see hugebudget.h. The room
 * is taken greedily in rank order, so a smaller region ranked lower may
 * still fit where a larger one did not.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/hugebudget.h"

/* The figure the advice was ranked by. */
static uint64_t rank_figure(const struct ms_huge_advice *a, enum ms_huge_rank by)
{
	return by == MS_HUGE_RANK_ACCESS ? a->hot_bytes : by == MS_HUGE_RANK_TLB ? a->tlb_misses : a->benefit;
}

/* Whether a and b rank within a tenth of each other: the evidence cannot tell which deserves the room. */
static bool level(const struct ms_huge_advice *a, const struct ms_huge_advice *b, enum ms_huge_rank by)
{
	uint64_t x = rank_figure(a, by), y = rank_figure(b, by), hi = x > y ? x : y, lo = x > y ? y : x;

	return hi - lo <= hi / 10;
}

/* Appends to a's reason, within the budget's bounds. */
static void append(struct ms_huge_advice *a, const struct ms_huge_budget *b, const char *text)
{
	char *reason = (char *)a->reason;      /* one of the advisor's buffers: see reason_max */
	size_t len = strlen(reason);

	snprintf(reason + len, b->reason_max - len, "%s", text);
}

/* Left out: the reason says so first, then what made it dense. */
static void leave_out(struct ms_huge_advice *a, const struct ms_huge_budget *b, uint64_t left)
{
	char head[256], *reason = (char *)a->reason;
	size_t hl;

	snprintf(head, sizeof(head), "no room: its %" PRIu64 " MiB of hugepages do not fit in the %" PRIu64
		 " MiB the budget of %" PRIu64 " MiB has left after the regions ranked above it; ",
		 (uint64_t)(a->spans * MS_HUGE_SPAN >> 20), left >> 20, b->bytes >> 20);
	hl = strlen(head);
	if (hl >= b->reason_max)
		return;
	memmove(reason + hl, reason, b->reason_max - hl - 1);
	memcpy(reason, head, hl);
	reason[b->reason_max - 1] = '\0';
	a->advised = false;
	a->no_room = true;
	a->start = a->end = 0;
}

/* Left-out a ranks level with kept k: both say so, and how to tell them apart where nothing can now. */
static void say_level(struct ms_huge_advice *a, struct ms_huge_advice *k, const struct ms_huge_budget *b)
{
	const char *hint = b->by == MS_HUGE_RANK_FAULTS ?
			   ": record with --referenced to rank them by ongoing access" : "";
	char text[384];

	a->level_with = k->region;
	snprintf(text, sizeof(text), "; it ranks level with the region at 0x%" PRIx64 ", kept, by %s: which of "
		 "the two deserves the room cannot be told%s", k->region->start, b->evidence, hint);
	append(a, b, text);
	if (k->level_with)
		return;
	k->level_with = a->region;
	snprintf(text, sizeof(text), "; kept in the budget over the region at 0x%" PRIx64 ", which ranks level "
		 "with it by %s: the choice between them is arbitrary%s", a->region->start, b->evidence, hint);
	append(k, b, text);
}

void ms_huge_budget_fit(struct ms_huge_advice *v, size_t n, const struct ms_huge_budget *b)
{
	uint64_t used = 0, cost;
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!v[i].advised)
			continue;
		cost = (uint64_t)(v[i].spans * MS_HUGE_SPAN);
		if (cost <= b->bytes - used)
			used += cost;
		else
			leave_out(&v[i], b, b->bytes - used);
	}
	for (i = 0; i < n; i++) {
		if (!v[i].no_room)
			continue;
		for (j = 0; j < n && !(v[j].advised && level(&v[i], &v[j], b->by)); j++)
			;
		if (j < n)
			say_level(&v[i], &v[j], b);
	}
}
