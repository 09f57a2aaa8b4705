#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sites.h"
#include "util/log.h"

static int grow(struct ms_sites *t, size_t id)
{
	size_t cap = t->cap ? t->cap : 256;
	char **site, **chain;

	while (cap <= id)
		cap *= 2;
	site = realloc(t->site, cap * sizeof(*site));
	if (!site)
		return -ENOMEM;
	t->site = site;
	chain = realloc(t->chain, cap * sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	t->chain = chain;
	memset(t->site + t->cap, 0, (cap - t->cap) * sizeof(*site));
	memset(t->chain + t->cap, 0, (cap - t->cap) * sizeof(*chain));
	t->cap = cap;
	return 0;
}

int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r,
		  const struct ms_event *ev)
{
	char site[256], chain[1024];
	uint64_t unwound[64];
	const uint64_t *frames = r->alloc_chain;
	uint32_t nr = r->alloc_chain_len;
	int n;

	if (!syms)
		return 0;
	if (!nr && ev && ev->uregs && ev->ustack) {
		n = ms_symbols_unwind(syms, r->pid, ev->uregs, ev->uregs_mask, ev->ustack, ev->ustack_len,
				      unwound, 64);
		frames = unwound;
		nr = n > 0 ? (uint32_t)n : 0;
	}
	if (!nr)
		return 0;
	if (r->id >= t->cap && grow(t, r->id))
		return -ENOMEM;
	ms_symbols_call_site(syms, r->pid, frames, nr, site, sizeof(site), chain, sizeof(chain));
	free(t->site[r->id]);
	free(t->chain[r->id]);
	t->site[r->id] = site[0] ? strdup(site) : NULL;
	t->chain[r->id] = strdup(chain);
	return 0;
}

const char *ms_sites_site(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap ? t->site[r->id] : NULL;
}

const char *ms_sites_chain(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap ? t->chain[r->id] : NULL;
}

void ms_sites_release(struct ms_sites *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++) {
		free(t->site[i]);
		free(t->chain[i]);
	}
	free(t->site);
	free(t->chain);
	memset(t, 0, sizeof(*t));
}
