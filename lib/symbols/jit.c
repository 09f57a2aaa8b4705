/*
 * A JIT's code as a table: entries by start address, each live over an
 * interval of time, names interned so that every compilation of one
 * function ("JS:*work n1.js:1:14", written once per tier) is one name, one
 * pointer, one row in a report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/jit.h"
#include "util/grow.h"
#include "util/hash.h"

#define MAX_WALK 65536                /* entries looked at below an address: bounds a hostile table */

struct jit_table *ms_jit_new(const char *path)
{
	struct jit_table *t = calloc(1, sizeof(*t));

	if (t && !(t->path = strdup(path))) {
		free(t);
		t = NULL;
	}
	return t;
}

static size_t name_hash(const char *s, size_t cap)
{
	uint64_t h = ms_hash_str(s);

	return (size_t)(h ^ h >> 29) & (cap - 1);
}

static size_t name_slot(const struct jit_table *t, const char *name)
{
	size_t i = name_hash(name, t->cap_names);

	while (t->names[i] && strcmp(t->names[i], name))
		i = (i + 1) & (t->cap_names - 1);
	return i;
}

static int names_grow(struct jit_table *t)
{
	char **old = t->names;
	size_t cap = t->cap_names, i;

	t->cap_names = cap ? 2 * cap : 256;
	t->names = calloc(t->cap_names, sizeof(*t->names));
	if (!t->names) {
		t->names = old;
		t->cap_names = cap;
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++)
		if (old[i])
			t->names[name_slot(t, old[i])] = old[i];
	free(old);
	return 0;
}

/* The one copy of name in t; NULL on ENOMEM. */
static const char *intern(struct jit_table *t, const char *name)
{
	size_t i;

	if ((t->nr_names + 1) * 2 > t->cap_names && names_grow(t))
		return NULL;
	i = name_slot(t, name);
	if (!t->names[i]) {
		if (!(t->names[i] = strdup(name)))
			return NULL;
		t->nr_names++;
	}
	return t->names[i];
}

int ms_jit_add(struct jit_table *t, uint64_t start, uint64_t size, uint64_t from, uint64_t index, const char *name)
{
	const char *in = intern(t, name);

	if (!in || t->n >= UINT32_MAX || MS_GROW(t->v, t->n + 1, t->cap, 256, SIZE_MAX, false))
		return -ENOMEM;
	t->v[t->n] = (struct jit_entry){ .start = start, .end = start + size < start ? UINT64_MAX : start + size,
					 .from = from, .until = UINT64_MAX, .name = in, .index = index,
					 .seq = (uint32_t)t->n };
	t->n++;
	t->sorted = false;
	return 0;
}

int ms_jit_move(struct jit_table *t, uint64_t index, uint64_t old_start, uint64_t new_start, uint64_t size,
		uint64_t at)
{
	struct jit_entry *e;
	size_t i;

	/* The latest load of that code: moves are rare, and follow their load closely. */
	for (i = t->n; i-- > 0;) {
		e = &t->v[i];
		if (e->start != old_start || e->index != index || e->until != UINT64_MAX || e->from > at)
			continue;
		e->until = at;
		return ms_jit_add(t, new_start, size, at, index, e->name);
	}
	return -ENOENT;
}

static int by_start(const void *a, const void *b)
{
	const struct jit_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void ms_jit_sort(struct jit_table *t)
{
	size_t i;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), by_start);
	for (i = 0; i < t->n; i++)
		t->v[i].maxend = i && t->v[i - 1].maxend > t->v[i].end ? t->v[i - 1].maxend : t->v[i].end;
	t->sorted = true;
}

/*
 * Of two entries holding an address, the one loaded later names the code:
 * it was written over the other (a reused address), whose end nothing
 * records.
 */
static bool later(const struct jit_entry *a, const struct jit_entry *b)
{
	return !b || a->from > b->from || (a->from == b->from && a->seq > b->seq);
}

const struct jit_entry *ms_jit_find(const struct jit_table *t, uint64_t addr, uint64_t at)
{
	const struct jit_entry *best = NULL, *e;
	size_t lo = 0, hi = t->n, mid, walked = 0;

	if (!t->sorted)
		return NULL;
	while (lo < hi) {                     /* lo: the entries starting at or below addr */
		mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && t->v[lo].maxend > addr && walked++ < MAX_WALK) {
		e = &t->v[lo];
		if (addr < e->end && e->from <= at && later(e, best))
			best = e;
	}
	return best && at < best->until ? best : NULL;   /* moved away: nothing is there */
}

void ms_jit_free(struct jit_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->cap_names; i++)
		free(t->names[i]);
	free(t->names);
	free(t->v);
	free(t->path);
	free(t);
}
