/*
 * Internal: where each region was allocated, named when the region is made
 * (while its process's binaries are known), for report and hugepages.
 */
#ifndef MS_ANALYSIS_SITES_H
#define MS_ANALYSIS_SITES_H

#include <stddef.h>

#include <mapscope/aspace.h>
#include <mapscope/symbols.h>

struct ms_site {
	char *site;               /* the allocating function, or NULL */
	char *chain;              /* the call chain as text, or NULL */
	uint64_t *ips;            /* the chain's code addresses, innermost first, or NULL */
	uint32_t nr_ips;
};

struct ms_sites {
	struct ms_site *by_region;   /* region id -> its site; both owned */
	size_t cap;
};

/*
 * Names r's allocation site from its frame-pointer chain, or by unwinding
 * ev's copied stack (--call-graph dwarf). 0 or -ENOMEM.
 */
int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r,
		  const struct ms_event *ev);
const char *ms_sites_site(const struct ms_sites *t, const struct ms_region *r);
const char *ms_sites_chain(const struct ms_sites *t, const struct ms_region *r);
/* r's chain's code addresses (borrowed from t); 0 with *ips NULL where none was noted. */
size_t ms_sites_ips(const struct ms_sites *t, const struct ms_region *r, const uint64_t **ips);
void ms_sites_release(struct ms_sites *t);

#endif
