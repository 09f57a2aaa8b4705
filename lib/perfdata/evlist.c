/* The events of a recording, for the file reader and the live source alike. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/evlist.h"
#include "util/grow.h"

struct ms_evsel *ms_evlist_add(struct ms_evlist *l, const void *attr, size_t size)
{
	struct ms_evsel *e;

	if (MS_ALLOC_GROW(l->v, l->n + 1, l->cap))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	memcpy(&e->attr, attr, size < sizeof(e->attr) ? size : sizeof(e->attr));
	e->attr.size = sizeof(e->attr);
	l->v[l->n++] = e;
	return e;
}

int ms_evsel_add_id(struct ms_evlist *l, struct ms_evsel *e, uint64_t id)
{
	if (MS_GROW(e->ids, e->nr_ids + 1, e->cap_ids, 8, SIZE_MAX, false))
		return -ENOMEM;
	e->ids[e->nr_ids++] = id;
	l->nr_ids++;
	return 0;
}

int ms_evsel_set_name(struct ms_evsel *e, const char *name, size_t len)
{
	char *s = strndup(name, len);

	if (!s)
		return -ENOMEM;
	free(e->name);
	e->name = s;
	return 0;
}

int ms_evlist_by_id(const struct ms_evlist *l, uint64_t id)
{
	size_t i, j;

	for (i = 0; i < l->n; i++)
		for (j = 0; j < l->v[i]->nr_ids; j++)
			if (l->v[i]->ids[j] == id)
				return (int)i;
	return -1;
}

void ms_evlist_release(struct ms_evlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i]->name);
		free(l->v[i]->ids);
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
