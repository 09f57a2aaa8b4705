/*
 * The growth helper behind MS_ALLOC_GROW: doubling, so that n appends
 * cost O(n) copies, capped at both the caller's limit and PTRDIFF_MAX bytes
 * (past which pointer differences in the array would overflow).
 */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

void *ms_grow(void *p, size_t elem, size_t nr, size_t *alloc, size_t first, size_t max, bool zero)
{
	size_t limit = (size_t)PTRDIFF_MAX / (elem ? elem : 1), cap;
	void *grown;

	if (max < limit)
		limit = max;
	if (nr > limit)
		return NULL;
	cap = *alloc ? *alloc : (first ? first : 1);
	while (cap < nr)
		cap = cap > limit / 2 ? limit : cap * 2;
	if (cap > limit)
		cap = limit;
	grown = realloc(p, cap * elem);
	if (!grown)
		return NULL;
	if (zero && cap > *alloc)
		memset((char *)grown + *alloc * elem, 0, (cap - *alloc) * elem);
	*alloc = cap;
	return grown;
}

void *ms_calloc_written(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	if ((p = malloc(bytes ? bytes : 1)))
		memset(p, 0, bytes);
	return p;
}
