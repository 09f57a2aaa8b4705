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
 * whose symbols are read (so naming loads nothing and warns of nothing:
 * a pin reads them where that warns of nothing and the binary's build-id
 * is known, as naming would later; on a chromium recording the first
 * chain of each binary was otherwise named at once, 29 chains for half
 * the time of naming 2,500), or is in
 * no binary and in no memory a JIT could name; and no two instances of
 * the process overlap (so no hint changes an answer).
 * Any other chain is named at once, as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "symbols/internal.h"
#include "symbols/pin.h"
#include "util/grow.h"

/* The instance of v[0, n) holding addr, the one at *last tried first; NULL where none. */
static const struct inst *held_in(const struct inst *v, size_t n, uint64_t addr, size_t *last)
{
	size_t i;

	if (*last < n && addr >= v[*last].lo && addr < v[*last].hi)
		return &v[*last];
	for (i = 0; i < n; i++)
		if (addr >= v[i].lo && addr < v[i].hi) {
			*last = i;
			return &v[i];
		}
	return NULL;
}

static struct inst *pinned_list(const struct ms_symbols *s, const struct ms_pin *pin);

/*
 * Whether naming addr, which in holds (NULL: none), by p's instances
 * alone answers as naming it now would: its binary's symbols are read
 * (or unusable, said already), read now where read is true and that
 * says nothing; or no JIT can name it.
 */
static bool pinnable(const struct ms_symbols *s, const struct proc_bins *p, uint64_t addr, const struct inst *in,
		     bool read)
{
	if (in)
		return read ? ms_bin_try_symbols(&s->bins[in->bin]) : s->bins[in->bin].state != 1;
	return !ms_jit_may_name(p, addr);
}

/*
 * Walks chain as naming it looks it up: each address as itself and one
 * byte back (a return address is looked up so), reading binaries'
 * symbols on the way where read (pinnable()). -EAGAIN where naming it
 * could depend on more than p's instances; else, where key is not NULL,
 * what naming depends on, as words in key (at most max, or -E2BIG): for
 * each address, which binaries hold it and it less one (their index + 1,
 * 0: none; and whether one instance holds both), then the address in the
 * binary (or itself, where none holds it), and the one byte back's where
 * another instance holds that; their count.
 */
static int walk(const struct ms_symbols *s, const struct proc_bins *p, const uint64_t *chain, uint32_t len,
		bool read, uint64_t *key, size_t max)
{
	const struct inst *a, *b;
	size_t last = 0, n = 0;
	uint32_t i;

	for (i = 0; i < len; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		a = held_in(p->v, p->n, chain[i], &last);
		b = held_in(p->v, p->n, chain[i] - 1, &last);
		if (!pinnable(s, p, chain[i], a, read) || !pinnable(s, p, chain[i] - 1, b, read))
			return -EAGAIN;
		if (!key)
			continue;
		if (n + 3 > max)
			return -E2BIG;
		key[n++] = (a ? (uint64_t)a->bin + 1 : 0) << 33 | (b ? (uint64_t)b->bin + 1 : 0) << 1 | (a == b);
		key[n++] = a ? chain[i] - a->bias : chain[i];
		if (a != b)
			key[n++] = b ? chain[i] - 1 - b->bias : chain[i] - 1;
	}
	return (int)n;
}

int ms_symbols_pin(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, struct ms_pin *pin)
{
	struct proc_bins *p = ms_symbols_proc(s, pid, false);

	if (!p || p->overlap || p->n > UINT32_MAX || walk(s, p, chain, len, true, NULL, 0) < 0)
		return -EAGAIN;
	p->pinned = true;
	*pin = (struct ms_pin){ p, p->epoch, (uint32_t)p->n };
	return 0;
}

int ms_pin_key(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, uint64_t *key, size_t max)
{
	const struct proc_bins *p = ms_symbols_proc(s, pid, false);

	if (!p || p->overlap)
		return -EAGAIN;
	return walk(s, p, chain, len, false, key, max);
}

/* Puts in in out[0, *n) where it is not there yet (a chain's instances are few); false where max is reached. */
static bool put_once(const struct inst *in, struct inst *out, size_t *n, size_t max)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (out[i].bin == in->bin && out[i].bias == in->bias && out[i].lo == in->lo)
			return true;
	if (*n == max)
		return false;
	out[(*n)++] = *in;
	return true;
}

int ms_pin_insts(const struct ms_symbols *s, const struct ms_pin *pin, const uint64_t *chain, uint32_t len,
		 struct inst *out, size_t max)
{
	const struct inst *in, *v = pinned_list(s, pin);
	size_t last = 0, n = 0;
	uint32_t i;
	int k;

	if (!v && pin->n)
		return -EAGAIN;             /* the list is gone: naming through the pin says so too */
	for (i = 0; i < len; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		for (k = 0; k < 2; k++)     /* the address, and one byte back: walk()'s two lookups */
			if ((in = held_in(v, pin->n, chain[i] - (uint64_t)k, &last)) && !put_once(in, out, &n, max))
				return -E2BIG;
	}
	return (int)n;
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

/* Has s see pid's binaries as pin saw them, through *view, until s->view is set to NULL. */
static void view_begin(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid, struct proc_bins *view)
{
	*view = (struct proc_bins){ .perfmap_state = -1 };   /* no JIT: pinnable() saw none could name */
	view->v = pinned_list(s, pin);
	view->n = view->v ? pin->n : 0;
	s->view = view;
	s->view_pid = pid;
}

void ms_symbols_call_site_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid,
				 const uint64_t *chain, uint32_t len, char *site, size_t site_len, char *text,
				 size_t text_len)
{
	struct proc_bins view;

	view_begin(s, pin, pid, &view);
	ms_call_site_parts(s, pid, chain, len, site, site_len, text, text_len);
	s->view = NULL;
}

int ms_symbols_code_frames_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid, uint64_t ip,
				  struct ms_frame *out, int max)
{
	struct proc_bins view;
	int n;

	view_begin(s, pin, pid, &view);
	n = ms_symbols_code_frames(s, pid, ip, out, max);
	s->view = NULL;
	return n;
}

int ms_symbols_code_symbol_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid, uint64_t ip,
				  struct ms_code_sym *out)
{
	struct proc_bins view;
	int n;

	view_begin(s, pin, pid, &view);
	n = ms_symbols_code_symbol(s, pid, ip, out);
	s->view = NULL;
	return n;
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
