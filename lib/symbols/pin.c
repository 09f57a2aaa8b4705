/*
 * Call chains named later, as things were when they were made.
 *
 * A report names the allocation site of every region as it is made (its
 * process's binaries are known then), yet prints only the regions with
 * samples: on a chromium recording 73% of the regions have no row, and
 * naming their sites was most of the symbol layer's time. A pin keeps
 * what naming a chain later needs: the process's instance list as of
 * now (its length, and its epoch; instances are only ever added to a
 * list, and a list emptied by exec or fork is kept while pinned). Naming
 * through a pin looks addresses up in that list alone, so it gives what
 * naming at once would have given, where that answer could not depend
 * on anything but the list: every address of the chain is in a binary
 * whose symbols are read already (so naming loads nothing and warns of
 * nothing), or is in no binary and in no memory a JIT could name; and no
 * two instances of the process overlap (so no hint changes an answer).
 * Any other chain is named at once, as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "symbols/internal.h"
#include "symbols/pin.h"
#include "util/grow.h"

/* The instance of p[0, n) holding addr, the one at *last tried first; NULL where none. */
static const struct inst *held_by(const struct proc_bins *p, size_t n, uint64_t addr, size_t *last)
{
	size_t i;

	if (*last < n && addr >= p->v[*last].lo && addr < p->v[*last].hi)
		return &p->v[*last];
	for (i = 0; i < n; i++)
		if (addr >= p->v[i].lo && addr < p->v[i].hi) {
			*last = i;
			return &p->v[i];
		}
	return NULL;
}

/* Whether naming addr through a pin of p answers as naming it now would. */
static bool pinnable(const struct ms_symbols *s, const struct proc_bins *p, uint64_t addr, size_t *last)
{
	const struct inst *in = held_by(p, p->n, addr, last);

	if (in)
		return s->bins[in->bin].state != 1;   /* symbols read (or unreadable, said already) */
	return !ms_jit_may_name(p, addr);
}

int ms_symbols_pin(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, struct ms_pin *pin)
{
	struct proc_bins *p = ms_symbols_proc(s, pid, false);
	size_t last = 0;
	uint32_t i;

	if (!p || p->overlap || p->n > UINT32_MAX)
		return -EAGAIN;
	/* Each address as itself and one byte back: a return address is looked up so. */
	for (i = 0; i < len; i++)
		if (chain[i] < (uint64_t)PERF_CONTEXT_MAX &&
		    (!pinnable(s, p, chain[i], &last) || !pinnable(s, p, chain[i] - 1, &last)))
			return -EAGAIN;
	p->pinned = true;
	*pin = (struct ms_pin){ p, p->epoch, (uint32_t)p->n };
	return 0;
}

/* The instances pin names: the process's list if it is still of that epoch, else the one kept. */
static struct inst *pinned_list(const struct ms_symbols *s, const struct ms_pin *pin)
{
	size_t i;

	if (pin->p->epoch == pin->epoch)
		return pin->p->v;
	for (i = 0; i < s->nr_retired; i++)
		if (s->retired[i].p == pin->p && s->retired[i].epoch == pin->epoch)
			return s->retired[i].v;
	return NULL;
}

void ms_symbols_call_site_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid,
				 const uint64_t *chain, uint32_t len, char *site, size_t site_len, char *text,
				 size_t text_len)
{
	struct proc_bins view = { .perfmap_state = -1 };   /* no JIT: pinnable() saw none could name */

	view.v = pinned_list(s, pin);
	view.n = view.v ? pin->n : 0;
	s->view = &view;
	s->view_pid = pid;
	ms_symbols_call_site(s, pid, chain, len, site, site_len, text, text_len);
	s->view = NULL;
}

void ms_pin_retire(struct ms_symbols *s, struct proc_bins *p)
{
	if (p->pinned && p->n && !MS_GROW(s->retired, s->nr_retired + 1, s->cap_retired, 16, SIZE_MAX, false)) {
		s->retired[s->nr_retired++] = (struct retired){ p, p->epoch, p->v, p->n };
		p->v = NULL;
		p->cap = 0;
	}
	p->n = 0;
	p->hint = 0;
	p->overlap = false;
	p->pinned = false;
	p->epoch++;
}

void ms_pin_release(struct ms_symbols *s)
{
	size_t i;

	for (i = 0; i < s->nr_retired; i++)
		free(s->retired[i].v);
	free(s->retired);
	s->retired = NULL;
	s->nr_retired = s->cap_retired = 0;
}
