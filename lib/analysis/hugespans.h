/*
 * Internal: the hugepage advisor's counts per (region, 2 MiB span), in an
 * array. A region's first span is found through an array by region id
 * (samples come in runs of regions made one after another: its reads go
 * in order), its others through a hash index. A span of one page keeps
 * that page itself; its 512-bit page map is made at its second page, so
 * 500,000 mappings touched once cost 60 bytes each, not a 120-byte entry
 * in a table twice their number.
 */
#ifndef MS_ANALYSIS_HUGESPANS_H
#define MS_ANALYSIS_HUGESPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct span {
	uint64_t key;             /* (region id + 1) << 32 | the span's index (address / 2 MiB): never 0 */
	uint16_t pages;           /* pages sampled */
	uint16_t page;            /* with no map: the one page sampled (pages 1) */
	uint32_t map;             /* its page map in maps, + 1; 0: none (pages 0 or 1) */
	uint64_t est;             /* pages touched, estimated: the periods of the faults that found new pages */
	uint64_t upper;           /* the most pages the samples could stand for: every new page's period */
	uint64_t faults, samples, tlb;  /* faults and TLB misses by the periods, samples as seen */
};

/* Zeroed to start. */
struct ms_hugespans {
	struct span *t;           /* the spans, in the order made, or by key after ms_hugespans_sort() */
	size_t len, cap_t;
	uint32_t *first;          /* region id + 1 -> its first span + 1, 0: none */
	size_t cap_first;
	uint32_t *idx;            /* hash of the spans not first in their region: key -> span + 1 */
	size_t cap, nr_idx;
	bool stale;               /* sorted since: first and idx are to be made again */
	uint64_t (*maps)[8];      /* page maps of the spans with more than one page */
	size_t nr_maps, cap_maps;
};

/*
 * The span of key, made (zero) where new and create: NULL where absent, or
 * without memory. Making one moves the others: pointers to spans last
 * until the next span is made.
 */
struct span *ms_hugespans_find(struct ms_hugespans *hs, uint64_t key, bool create);

/* Whether page (0 to 511) of span s was touched. */
bool ms_hugespans_has(const struct ms_hugespans *hs, const struct span *s, uint32_t page);

/* Marks page of s touched (it was not) and counts it in s->pages. 0, or -ENOMEM with s as it was. */
int ms_hugespans_add(struct ms_hugespans *hs, struct span *s, uint32_t page);

/* Takes touched page off s (it was touched), and off s->pages. */
void ms_hugespans_drop(struct ms_hugespans *hs, struct span *s, uint32_t page);

/*
 * mremap moved [os, oe) of region id to new_start: the pages touched there
 * go with the memory, into the spans of its new home, and their counts in
 * proportion, so that the advice follows the memory, not the address.
 * 0, or -ENOMEM with some moved.
 */
int ms_hugespans_move(struct ms_hugespans *hs, uint32_t id, uint64_t os, uint64_t oe, uint64_t new_start);

/* Sorts the spans by key, in place: each region's together, in address order. */
void ms_hugespans_sort(struct ms_hugespans *hs);

void ms_hugespans_release(struct ms_hugespans *hs);

#endif
