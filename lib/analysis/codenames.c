/*
 * The names of code named later (codenames.h). Some 23,000 entries of
 * chromium's page load, for 6,000 code addresses in binaries: each entry
 * its pair, the first of a symbol's the one its others share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/codenames.h"
#include "util/grow.h"
#include "util/hash.h"

/* Whether e has the string (raw, id) of a binary's table. */
static bool same_string(const struct ms_code_name *e, const char *raw, uint64_t id)
{
	if (id || e->id)
		return id == e->id;
	return raw ? e->raw && !strcmp(e->raw, raw) : !e->raw;
}

/* The slot of (dso, raw, id) in t's table: the entry that has it + 1, or the empty one where it would go. */
static uint32_t *pair_slot(struct ms_code_names *t, const char *dso, const char *raw, uint64_t id)
{
	uint64_t h = ms_hash_str(dso) * 0x9e3779b97f4a7c15ULL ^ (id ? id : raw ? ms_hash_str(raw) : 0);
	size_t mask = t->nslot - 1, i;
	const struct ms_code_name *e;

	for (i = ms_hash64(h, t->nslot); t->slot[i]; i = (i + 1) & mask) {
		e = &t->e[t->slot[i] - 1];
		if (!strcmp(e->dso, dso) && same_string(e, raw, id))
			break;
	}
	return &t->slot[i];
}

/* Room in t's table for one more pair. 0 or -ENOMEM. */
static int pair_room(struct ms_code_names *t)
{
	size_t n = t->nslot ? 2 * t->nslot : 1024, old_n = t->nslot, k;
	uint32_t *old = t->slot, e;

	if ((t->npairs + 1) * 2 <= t->nslot)
		return 0;
	if (!(t->slot = calloc(n, sizeof(*t->slot)))) {
		t->slot = old;
		return -ENOMEM;
	}
	t->nslot = n;
	for (k = 0; k < old_n; k++)
		if ((e = old[k]))
			*pair_slot(t, t->e[e - 1].dso, t->e[e - 1].raw, t->e[e - 1].id) = e;
	free(old);
	return 0;
}

/* Entry i named as sym (held: a binary holds it), or as the entry of the same pair before it. 0 or -ENOMEM. */
static int name_entry(struct ms_code_names *t, size_t i, int held, const struct ms_code_sym *sym)
{
	uint32_t *slot;

	if (held <= 0) {                 /* as ms_code_name(): no binary, and no JIT could name it (the pin said) */
		t->e[i] = (struct ms_code_name){ ms_code_unknown, ms_code_unknown, NULL, 0 };
		return 0;
	}
	if (pair_room(t))
		return -ENOMEM;
	slot = pair_slot(t, sym->dso, sym->raw, sym->id);
	if (*slot) {
		t->e[i] = t->e[*slot - 1];
		return 0;
	}
	t->e[i] = (struct ms_code_name){ sym->name ? sym->name : ms_code_unknown, sym->dso, sym->raw, sym->id };
	*slot = (uint32_t)i + 1;
	t->npairs++;
	return 0;
}

int ms_code_names_take(struct ms_code_names *t, struct ms_code_later *later)
{
	struct ms_code_sym sym;
	size_t same;
	int held;

	if (MS_GROW(t->e, later->n, t->cap, 256, SIZE_MAX, false))
		return -ENOMEM;
	for (; t->n < later->n; t->n++) {
		if (ms_code_later_none(later, t->n))     /* never asked: its slot has its own name */
			t->e[t->n] = (struct ms_code_name){ ms_code_unknown, ms_code_unknown, NULL, 0 };
		else if ((held = ms_code_later_symbol(later, t->n, &sym, &same)) < 0)
			t->e[t->n] = t->e[same];
		else if (name_entry(t, t->n, held, &sym))
			return -ENOMEM;
	}
	return 0;
}

void ms_code_names_rename(void *t, const char **symbol, const char **dso)
{
	ms_code_names_get(t, symbol, dso);
}

void ms_code_names_release(struct ms_code_names *t)
{
	free(t->e);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
