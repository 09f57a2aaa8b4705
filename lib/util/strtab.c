/* A table of distinct strings by index (strtab.h). */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"
#include "util/strtab.h"

int64_t ms_strtab_intern(struct ms_strtab *t, const char *s)
{
	size_t i, k, *slot;

	if (t->n * 2 >= t->nslot) {
		size_t n = t->nslot ? 2 * t->nslot : 1024;

		slot = calloc(n, sizeof(*slot));
		if (!slot)
			return -1;
		for (k = 0; k < t->n; k++) {
			for (i = ms_hash_str(t->s[k]) & (n - 1); slot[i]; i = (i + 1) & (n - 1))
				;
			slot[i] = k + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->nslot = n;
	}
	for (i = ms_hash_str(s) & (t->nslot - 1); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->s[t->slot[i] - 1], s))
			return (int64_t)(t->slot[i] - 1);
	if (MS_GROW(t->s, t->n + 1, t->cap, 256, SIZE_MAX, false))
		return -1;
	if (!(t->s[t->n] = strdup(s)))
		return -1;
	t->slot[i] = t->n + 1;
	return (int64_t)t->n++;
}

void ms_strtab_release(struct ms_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
	*t = (struct ms_strtab){ 0 };
}
