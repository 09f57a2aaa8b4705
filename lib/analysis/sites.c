#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "analysis/sites.h"
#include "util/grow.h"
#include "util/log.h"

#define SITE_LEN 768             /* a site's text at most: the memo's answers are by this too */
#define TEXT_LEN 1024            /* a chain's */

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

struct ms_namer *ms_sites_namer(struct ms_sites *t, const struct ms_symbols *syms)
{
	if (t->aside && !t->namer_tried) {
		t->namer_tried = true;
		t->namer = ms_namer_new(syms, SITE_LEN, t->aside_chains ? TEXT_LEN : 0);
	}
	return t->namer;
}

int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r,
		  const struct ms_event *ev)
{
	char site[SITE_LEN], chain[TEXT_LEN];
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
	t->syms = syms;
	s = &t->by_region[r->id];
	free(s->site);
	free(s->chain);
	s->site = s->chain = NULL;
	s->pid = r->pid;
	s->site_named = s->chain_named = false;
	if (s->job)
		ms_namer_drop(t->namer, s->job);
	s->job = NULL;
	s->pinned = !ms_symbols_pin(syms, r->pid, frames, nr, &s->pin);
	if (!s->pinned) {
		ms_symbols_call_site(syms, r->pid, frames, nr, site, sizeof(site), chain, sizeof(chain));
		s->site = site[0] ? strdup(site) : NULL;
		s->chain = strdup(chain);
	}
	if (keep_ips(s, frames, nr))
		return -ENOMEM;
	if (s->pinned && ms_sites_namer(t, syms))
		s->job = ms_namer_submit(t->namer, syms, &s->pin, s->pid, s->ips, s->nr_ips);
	return 0;
}

/* r's site (and chain, where the namer names chains) named by the namer's thread: true where it named them. */
static bool from_namer(struct ms_sites *t, struct ms_site *s)
{
	char *site, *text;
	bool named = s->job && ms_namer_wait(t->namer, s->job, &site, &text);

	s->job = NULL;
	if (!named)
		return false;
	s->site_named = true;
	s->site = site[0] ? site : NULL;
	if (!site[0])
		free(site);
	if (text) {
		s->chain_named = true;
		s->chain = text;
	}
	return true;
}

void ms_sites_aside(struct ms_sites *t, bool chains)
{
	t->aside = true;
	t->aside_chains = chains;
}

void ms_sites_ask(struct ms_sites *t, const struct ms_region *r)
{
	struct ms_site *s;

	if (!r || r->id >= t->cap || !t->syms)
		return;
	s = &t->by_region[r->id];
	if (!s->pinned || s->job || s->site_named)
		return;
	if (!t->namer_tried)
		ms_sites_aside(t, true);     /* after the replay: a namer of sites and chains, made now */
	if (ms_sites_namer(t, t->syms))
		s->job = ms_namer_submit(t->namer, t->syms, &s->pin, s->pid, s->ips, s->nr_ips);
}

/*
 * r's site, its site or chain (which) named now where it was pinned and
 * is not named yet: the other is named only when asked for (a text report
 * prints sites alone). NULL where r has none.
 */
static const struct ms_site *named(struct ms_sites *t, const struct ms_region *r, bool chain)
{
	char site[SITE_LEN], text[TEXT_LEN];
	struct ms_site *s;

	if (!r || r->id >= t->cap)
		return NULL;
	s = &t->by_region[r->id];
	if (!s->pinned || (chain ? s->chain_named : s->site_named))
		return s;
	if (from_namer(t, s) && (chain ? s->chain_named : s->site_named))
		return s;
	/* The code addresses kept: the chain without perf's markers names the same. */
	ms_symbols_call_site_pinned(t->syms, &s->pin, s->pid, s->ips, s->nr_ips, chain ? NULL : site, sizeof(site),
				    chain ? text : NULL, sizeof(text));
	if (chain) {
		s->chain_named = true;
		s->chain = strdup(text);
	} else {
		s->site_named = true;
		s->site = site[0] ? strdup(site) : NULL;
	}
	return s;
}

bool ms_sites_noted(const struct ms_sites *t, const struct ms_region *r)
{
	return r && r->id < t->cap && (t->by_region[r->id].pinned || t->by_region[r->id].chain);
}

const char *ms_sites_site(struct ms_sites *t, const struct ms_region *r)
{
	const struct ms_site *s = named(t, r, false);

	return s ? s->site : NULL;
}

const char *ms_sites_chain(struct ms_sites *t, const struct ms_region *r)
{
	const struct ms_site *s = named(t, r, true);

	return s ? s->chain : NULL;
}

size_t ms_sites_ips(const struct ms_sites *t, const struct ms_region *r, const uint64_t **ips)
{
	const struct ms_site *s = r && r->id < t->cap ? &t->by_region[r->id] : NULL;

	*ips = s && s->nr_ips ? s->ips : NULL;
	return *ips ? s->nr_ips : 0;
}

void ms_sites_stop(struct ms_sites *t)
{
	ms_namer_stop(t->namer);
}

void ms_sites_release(struct ms_sites *t)
{
	size_t i;

	ms_namer_free(t->namer);          /* its jobs go with it */
	for (i = 0; i < t->cap; i++) {
		free(t->by_region[i].site);
		free(t->by_region[i].chain);
		free(t->by_region[i].ips);
	}
	free(t->by_region);
	memset(t, 0, sizeof(*t));
}
