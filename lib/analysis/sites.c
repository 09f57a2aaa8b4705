#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sites.h"
#include "util/grow.h"
#include "util/log.h"

int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r,
		  const struct ms_event *ev)
{
	char site[256], chain[1024];
	uint64_t unwound[64];
	const uint64_t *frames = r->alloc_chain;
	uint32_t nr = r->alloc_chain_len;
	struct ms_site *s;
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
	if (MS_GROW(t->by_region, (size_t)r->id + 1, t->cap, 256, SIZE_MAX, true))
		return -ENOMEM;
	ms_symbols_call_site(syms, r->pid, frames, nr, site, sizeof(site), chain, sizeof(chain));
	s = &t->by_region[r->id];
	free(s->site);
	free(s->chain);
	s->site = site[0] ? strdup(site) : NULL;
	s->chain = strdup(chain);
	return 0;
}

const char *ms_sites_site(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap ? t->by_region[r->id].site : NULL;
}

const char *ms_sites_chain(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap ? t->by_region[r->id].chain : NULL;
}

void ms_sites_release(struct ms_sites *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++) {
		free(t->by_region[i].site);
		free(t->by_region[i].chain);
	}
	free(t->by_region);
	memset(t, 0, sizeof(*t));
}
