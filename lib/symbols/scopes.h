/*
 * Internal to lib/symbols: dwarf_getscopes() answered from an index of
 * each compile unit's scope tree, made once per unit. dwarf_getscopes
 * walks the unit's DIEs from its root on each call, and again, unpruned,
 * to find an inlined call's abstract origin: ~1M instructions a call on
 * ld.so's rtld.c, 9% of a report of a chromium recording for 56 calls.
 */
#ifndef MS_SYMBOLS_SCOPES_H
#define MS_SYMBOLS_SCOPES_H

#include <stdint.h>

#include <elfutils/libdw.h>

struct ms_scopes;

/*
 * What dwarf_getscopes(cu, pc, scopes) answers, and the same *scopes
 * (malloc'd, the caller frees them, where the count is > 0): from cu's
 * index, made in *sp (created where NULL) on cu's first ask; from
 * dwarf_getscopes itself where the index cannot say (a unit that imports
 * others, an address range libdw cannot read).
 */
int ms_scopes_get(struct ms_scopes **sp, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes);

/* Units indexed, and answers given from an index, for tests and measurements. */
void ms_scopes_counts(const struct ms_scopes *s, uint64_t *units, uint64_t *answers);

void ms_scopes_free(struct ms_scopes *s);

#endif
