/*
 * Internal: where each region was allocated, for report and hugepages:
 * the chain is taken when the region is made (while its process's
 * binaries are known), and named then, or pinned and named when first
 * asked for (most regions never are: no row shows them), or where the
 * caller names nothing else (ms_sites_aside()), pinned and handed to the
 * namer's thread at once (symbols/namer.h).
 */
#ifndef MS_ANALYSIS_SITES_H
#define MS_ANALYSIS_SITES_H

#include <stdbool.h>
#include <stddef.h>

#include <mapscope/aspace.h>
#include <mapscope/symbols.h>

#include "symbols/namer.h"
#include "symbols/pin.h"

struct ms_site {
	char *site;               /* the allocating function, or NULL */
	char *chain;              /* the call chain as text, or NULL */
	uint64_t *ips;            /* the chain's code addresses, innermost first, or NULL */
	uint32_t nr_ips;
	uint32_t pid;
	bool pinned;              /* named when asked for: pin says how */
	bool site_named, chain_named;   /* pinned: which of site and chain are named so far */
	struct ms_pin pin;
	struct ms_name_job *job;  /* pinned: its site as the namer's thread names it, or NULL */
};

struct ms_sites {
	struct ms_site *by_region;   /* region id -> its site; both owned */
	size_t cap;
	struct ms_symbols *syms;     /* the symbols pins name through */
	struct ms_namer *namer;      /* names pinned sites on a thread of its own, or NULL */
	bool aside, aside_chains;    /* ms_sites_aside(): a namer for sites, and for chains too */
	bool namer_tried;            /* a namer was asked for (there may be none) */
};

/*
 * Names r's allocation site from its frame-pointer chain, or by unwinding
 * ev's copied stack (--call-graph dwarf). 0 or -ENOMEM.
 */
int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r,
		  const struct ms_event *ev);
/*
 * Pinned sites, and their chains as text where chains, named on a thread
 * with symbols of its own as they are noted (symbols/namer.h), for a
 * caller that names nothing else: otherwise both would read the binaries.
 */
void ms_sites_aside(struct ms_sites *t, bool chains);
/*
 * r's site and chain, pinned and neither named nor handed to the namer
 * yet, handed to it now: for a caller that will print them, once the
 * replay is over (where the namer was not made for the replay, it is
 * made now, for sites and chains; where none can be, nothing is done).
 * Its answers are the ones naming through the pin gives.
 */
void ms_sites_ask(struct ms_sites *t, const struct ms_region *r);

/*
 * Where the sites are aside: the namer that names them (made now, the
 * first time, by syms: NULL where none could be), which may name other
 * pinned code too (ms_namer_submit_frames()); otherwise NULL.
 */
struct ms_namer *ms_sites_namer(struct ms_sites *t, const struct ms_symbols *syms);
/* Whether r has a site noted, named or not. */
bool ms_sites_noted(const struct ms_sites *t, const struct ms_region *r);
/* r's site and chain as text, named now if it was pinned (so t changes); NULL where none. */
const char *ms_sites_site(struct ms_sites *t, const struct ms_region *r);
const char *ms_sites_chain(struct ms_sites *t, const struct ms_region *r);
/* r's chain's code addresses (borrowed from t); 0 with *ips NULL where none was noted. */
size_t ms_sites_ips(const struct ms_sites *t, const struct ms_region *r, const uint64_t **ips);
/* Stops the namer's thread taking jobs (ms_namer_stop()): for a process about to exit. Only release may follow. */
void ms_sites_stop(struct ms_sites *t);
void ms_sites_release(struct ms_sites *t);

#endif
