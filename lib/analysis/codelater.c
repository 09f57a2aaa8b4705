/*
 * Code addresses named later (codelater.h). Some 20,000 (region, process,
 * address) rows of chromium's page load hold 7,000 addresses of a binary:
 * the rows of one function's code in many regions and processes are one
 * job, found by what naming them depends on (ms_pin_key()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/codelater.h"
#include "util/grow.h"

#define KEY_WORDS 3              /* one address's key: binaries, the address in it, the byte before's */

/*
 * An entry is 4 bytes: SAME and the earlier entry it is named as, or 0
 * (skipped, or named at once with no frame: a process none of whose
 * binaries is known), or the index + 1 of its code in firsts: the first
 * entry of each key, pinned (and handed to the namer) or named at once.
 */
#define SAME 0x80000000u

struct code_first {
	struct ms_name_job *job;      /* the namer's, or NULL: named through pin */
	struct ms_pin pin;
	union {                       /* named at once (the symbols' strings), malloc'd; or NULL */
		struct ms_frame *f;   /* its n frames */
		struct ms_code_sym *sym;   /* a list of symbols: the symbol a binary held */
	};
	int n;
	bool pinned;
};

/* A list of symbols' first entry: what it was added with, for naming it through its pin. */
struct code_where {
	uint32_t pid;
	uint64_t ip;
};

struct code_key {
	uint64_t w[KEY_WORDS];
	uint32_t n, first;
};

void ms_code_later_init(struct ms_code_later *c, struct ms_symbols *syms, struct ms_namer *namer)
{
	memset(c, 0, sizeof(*c));
	c->syms = syms;
	c->namer = namer;
}

void ms_code_later_init_symbols(struct ms_code_later *c, struct ms_symbols *syms, struct ms_namer *namer)
{
	ms_code_later_init(c, syms, namer);
	c->symbols = true;
}

static uint64_t key_hash(const uint64_t *w, int n)
{
	uint64_t h = (uint64_t)n;
	int i;

	for (i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

/* The slot of key w[0, n) in the table by hash: where it is, or the empty one where it would go. */
static uint32_t *key_slot(struct ms_code_later *c, const uint64_t *w, int n)
{
	size_t mask = c->nslot - 1, i;
	const struct code_key *k;

	for (i = key_hash(w, n) & mask; c->slot[i]; i = (i + 1) & mask) {
		k = &c->keys[c->slot[i] - 1];
		if (k->n == (uint32_t)n && !memcmp(k->w, w, (size_t)n * sizeof(*w)))
			break;
	}
	return &c->slot[i];
}

/* Room for one more key. 0 or -ENOMEM. */
static int key_room(struct ms_code_later *c)
{
	size_t n = c->nslot ? 2 * c->nslot : 1024, i, k;
	uint32_t *t;

	if ((c->nkeys + 1) * 2 > c->nslot) {
		if (!(t = calloc(n, sizeof(*t))))
			return -ENOMEM;
		for (k = 0; k < c->nkeys; k++) {
			for (i = key_hash(c->keys[k].w, (int)c->keys[k].n) & (n - 1); t[i]; i = (i + 1) & (n - 1))
				;
			t[i] = (uint32_t)k + 1;
		}
		free(c->slot);
		c->slot = t;
		c->nslot = n;
	}
	return MS_GROW(c->keys, c->nkeys + 1, c->cap_keys, 64, SIZE_MAX, false);
}

/* Whether code of key w[0, n) (none where n is not above 0) is named as an earlier entry's: *ref set. */
static bool same_code(struct ms_code_later *c, uint32_t *ref, const uint64_t *w, int n)
{
	uint32_t *slot;

	if (n <= 0 || !c->slot)
		return false;
	slot = key_slot(c, w, n);
	if (!*slot)
		return false;
	*ref = SAME | c->keys[*slot - 1].first;
	return true;
}

/* Entry i as the first of key w[0, n) (none where n is not above 0). 0 or -ENOMEM. */
static int first_code(struct ms_code_later *c, size_t i, const uint64_t *w, int n)
{
	uint32_t *slot;

	if (n <= 0)
		return 0;
	if (key_room(c))
		return -ENOMEM;
	slot = key_slot(c, w, n);
	if (*slot)
		return 0;
	memcpy(c->keys[c->nkeys].w, w, (size_t)n * sizeof(*w));
	c->keys[c->nkeys].n = (uint32_t)n;
	c->keys[c->nkeys].first = (uint32_t)i;
	*slot = (uint32_t)++c->nkeys;
	return 0;
}

/* The next entry, 0: NULL on no memory. */
static uint32_t *next(struct ms_code_later *c)
{
	if (c->n >= SAME - 1 || MS_GROW(c->at, c->n + 1, c->cap, 256, SIZE_MAX, false))
		return NULL;
	c->at[c->n] = 0;
	return &c->at[c->n++];
}

int ms_code_later_skip(struct ms_code_later *c)
{
	return next(c) ? 0 : -ENOMEM;
}

bool ms_code_later_none(const struct ms_code_later *c, size_t i)
{
	return !c->at[i];
}

size_t ms_code_later_first(const struct ms_code_later *c, size_t i)
{
	return c->at[i] & SAME ? c->at[i] & ~SAME : i;
}

/* A new first entry for *ref: NULL on no memory. */
static struct code_first *first(struct ms_code_later *c, uint32_t *ref)
{
	if (c->nfirst >= SAME - 1 || MS_GROW(c->firsts, c->nfirst + 1, c->cap_firsts, 64, SIZE_MAX, false) ||
	    (c->symbols && MS_GROW(c->where, c->nfirst + 1, c->cap_where, 64, SIZE_MAX, false)))
		return NULL;
	c->firsts[c->nfirst] = (struct code_first){ 0 };
	*ref = (uint32_t)++c->nfirst;
	return &c->firsts[c->nfirst - 1];
}

int ms_code_later_add(struct ms_code_later *c, uint32_t pid, uint64_t ip)
{
	struct ms_frame f[MS_NAMER_FRAMES];
	uint64_t w[KEY_WORDS];
	struct code_first *a;
	struct ms_pin pin;
	uint32_t *ref = next(c);
	int n = ms_pin_key(c->syms, pid, &ip, 1, w, KEY_WORDS), known = n;

	if (!ref)
		return -ENOMEM;
	if (same_code(c, ref, w, n))
		return 0;
	if (!ms_symbols_pin(c->syms, pid, &ip, 1, &pin)) {
		if (!(a = first(c, ref)))
			return -ENOMEM;
		a->pinned = true;
		a->pin = pin;
		if (c->symbols)
			c->where[c->nfirst - 1] = (struct code_where){ pid, ip };
		if (c->namer)
			a->job = c->symbols ? ms_namer_submit_symbol(c->namer, c->syms, &a->pin, pid, ip) :
					      ms_namer_submit_frames(c->namer, c->syms, &a->pin, pid, ip);
		if (known <= 0)            /* a binary the pin has just read: its key is known now */
			n = ms_pin_key(c->syms, pid, &ip, 1, w, KEY_WORDS);
		return first_code(c, c->n - 1, w, n);
	}
	/* Named now: it cannot be pinned. Without a frame or a symbol (no binary of the process held it) it stays 0. */
	if (c->symbols) {
		struct ms_code_sym sym;

		if (!ms_symbols_code_symbol(c->syms, pid, ip, &sym))
			return 0;
		if (!(a = first(c, ref)) || !(a->sym = malloc(sizeof(sym))))
			return -ENOMEM;
		*a->sym = sym;
		return 0;
	}
	if ((n = ms_symbols_code_frames(c->syms, pid, ip, f, MS_NAMER_FRAMES)) <= 0)
		return 0;
	if (!(a = first(c, ref)) || !(a->f = malloc((size_t)n * sizeof(*f))))
		return -ENOMEM;
	a->n = n;
	memcpy(a->f, f, (size_t)n * sizeof(*f));
	return 0;
}

int ms_code_later_frames(struct ms_code_later *c, size_t i, uint32_t pid, uint64_t ip, struct ms_frame *f, int max,
			 size_t *same)
{
	struct code_first *a;
	int n;

	if (c->at[i] & SAME) {
		*same = c->at[i] & ~SAME;
		return -1;
	}
	if (!c->at[i])
		return 0;                 /* skipped (the caller's own), or named now with no frame */
	a = &c->firsts[c->at[i] - 1];
	if (!a->pinned) {
		n = a->n < max ? a->n : max;
		if (n > 0)
			memcpy(f, a->f, (size_t)n * sizeof(*f));
		free(a->f);
		a->f = NULL;
		return n;
	}
	if (!a->job || (n = ms_namer_wait_frames(c->namer, a->job, f, max)) < 0)
		n = ms_symbols_code_frames_pinned(c->syms, &a->pin, pid, ip, f, max);
	a->job = NULL;
	return n;
}

int ms_code_later_symbol(struct ms_code_later *c, size_t i, struct ms_code_sym *out, size_t *same)
{
	const struct code_where *w;
	struct code_first *a;
	int held;

	if (c->at[i] & SAME) {
		*same = c->at[i] & ~SAME;
		return -1;
	}
	*out = (struct ms_code_sym){ 0 };
	if (!c->at[i])
		return 0;                 /* skipped, or named now with no binary's symbol */
	a = &c->firsts[c->at[i] - 1];
	if (!a->pinned) {
		*out = *a->sym;
		free(a->sym);
		a->sym = NULL;
		return 1;
	}
	w = &c->where[c->at[i] - 1];
	if (!a->job || (held = ms_namer_wait_symbol(c->namer, a->job, out)) < 0)
		held = ms_symbols_code_symbol_pinned(c->syms, &a->pin, w->pid, w->ip, out);
	a->job = NULL;
	return held;
}

void ms_code_later_release(struct ms_code_later *c)
{
	size_t i;

	for (i = 0; i < c->nfirst; i++)
		if (!c->firsts[i].pinned)
			free(c->symbols ? (void *)c->firsts[i].sym : (void *)c->firsts[i].f);
	free(c->at);
	free(c->where);
	free(c->firsts);
	free(c->keys);
	free(c->slot);
	memset(c, 0, sizeof(*c));
}
