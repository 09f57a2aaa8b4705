#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "analysis/sites.h"
#include "util/grow.h"
#include "util/log.h"

/* The chain's code addresses, perf's context markers left out: what a caller matches new runs by. */
static int keep_ips(struct ms_site *s, const uint64_t *frames, uint32_t nr)
{
	uint32_t i;

	free(s->ips);
	s->nr_ips = 0;
	s->ips = malloc(nr * sizeof(*s->ips));
	if (!s->ips)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		if (frames[i] < (uint64_t)PERF_CONTEXT_MAX)
			s->ips[s->nr_ips++] = frames[i];
	return 0;
}

int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r,
		  const struct ms_event *ev)
{
	char site[768], chain[1024];
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
	return keep_ips(s, frames, nr);
}

const char *ms_sites_site(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap ? t->by_region[r->id].site : NULL;
}

const char *ms_sites_chain(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap ? t->by_region[r->id].chain : NULL;
}

size_t ms_sites_ips(const struct ms_sites *t, const struct ms_region *r, const uint64_t **ips)
{
	const struct ms_site *s = r && r->id < t->cap ? &t->by_region[r->id] : NULL;

	*ips = s && s->nr_ips ? s->ips : NULL;
	return *ips ? s->nr_ips : 0;
}

void ms_sites_release(struct ms_sites *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++) {
		free(t->by_region[i].site);
		free(t->by_region[i].chain);
		free(t->by_region[i].ips);
	}
	free(t->by_region);
	memset(t, 0, sizeof(*t));
}
