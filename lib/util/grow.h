/*
 * Internal: one way to grow an array (git's ALLOC_GROW), with the checks a
 * hand-written realloc makes or forgets: the byte count cannot overflow,
 * and an array whose length comes from untrusted input can be capped
 * (curl's dynbuf "toobig"). The array stays its owner's; on failure it and
 * its allocated count are left as they were.
 *
 *	if (MS_ALLOC_GROW(v->items, v->nr + 1, v->alloc))
 *		return -ENOMEM;
 *	v->items[v->nr++] = item;
 */
#ifndef MS_UTIL_GROW_H
#define MS_UTIL_GROW_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Reallocates p, an array of *alloc elements of elem bytes, to hold at
 * least nr: doubling *alloc (from first where it is 0) until nr fit, never
 * past max elements. New elements are zeroed where zero. The new array,
 * *alloc updated; or NULL, p and *alloc untouched, where nr is over max,
 * its bytes would overflow, or memory ran out.
 */
void *ms_grow(void *p, size_t elem, size_t nr, size_t *alloc, size_t first, size_t max, bool zero);

/*
 * calloc(n, size), its bytes written as it is handed out. glibc's calloc
 * leaves memory fresh from the kernel unwritten (it reads as zeros): a
 * table read before it is written, as a hash table is looked up before
 * each insert, then maps the kernel's zero page, and the first write to
 * each page copies it and flushes the TLB of every other CPU the process
 * runs on, an interrupt sent and waited for (tens of microseconds on a
 * virtual machine). Written first, each page is faulted in once. NULL
 * where the bytes would overflow or memory ran out.
 */
void *ms_calloc_written(size_t n, size_t size);

/*
 * Grows array p (an lvalue; alloc a size_t lvalue) to hold nr elements
 * where it does not yet: 0, or -ENOMEM with p and alloc as they were.
 */
#define MS_GROW(p, nr, alloc, first, max, zero) __extension__({				\
	size_t ms_nr_ = (nr), *ms_alloc_ = &(alloc);						\
	int ms_err_ = 0;									\
	if (ms_nr_ > *ms_alloc_) {								\
		void *ms_p_ = ms_grow((p), sizeof(*(p)), ms_nr_, ms_alloc_, (first), (max), (zero)); \
		if (ms_p_)									\
			(p) = ms_p_;								\
		else										\
			ms_err_ = -ENOMEM;							\
	}											\
	ms_err_;										\
})

/*
 * Cuts array p (an lvalue; alloc a size_t lvalue) to its nr elements where
 * it has room for more: an array grown by doubling that lives on gives
 * the rest back. Where realloc fails, or nr is 0, p and alloc stay.
 */
#define MS_SHRINK(p, nr, alloc) __extension__({							\
	size_t ms_n_ = (nr);									\
	if (ms_n_ && ms_n_ < (alloc)) {								\
		void *ms_p_ = realloc((p), ms_n_ * sizeof(*(p)));				\
		if (ms_p_) {									\
			(p) = ms_p_;								\
			(alloc) = ms_n_;							\
		}										\
	}											\
})

#define MS_ALLOC_GROW(p, nr, alloc) MS_GROW(p, nr, alloc, 16, SIZE_MAX, false)
/* The same, the new elements zeroed. */
#define MS_ALLOC_GROW_ZERO(p, nr, alloc) MS_GROW(p, nr, alloc, 16, SIZE_MAX, true)

#endif
