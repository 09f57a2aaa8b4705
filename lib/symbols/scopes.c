/*
 * dwarf_getscopes() from an index (scopes.h). libdw's answer, from its
 * walk of the unit (__libdw_visit_scopes: the root's children, and the
 * children of each DIE that may hold scopes, in file order):
 *
 *   1. Descend from the root, at each level into the first child whose
 *      ranges hold pc (dwarf_haspc), to the innermost such DIE; the
 *      deepest DW_TAG_inlined_subroutine on the way is the instance.
 *   2. No instance: the scopes are that path, innermost first, to the
 *      root. An instance: the path from the innermost to it, then the
 *      parents of its abstract origin as the walk meets it, to the root
 *      (the second walk, unpruned, over the whole unit: most of the
 *      cost); 0 where the walk never meets it; -1 where it has none.
 *
 * The index is the unit's top level, read once: step 1 scans it instead
 * of reading the DIEs again, and an origin there (a C function's
 * abstract instance) has the root alone for parent. An origin deeper (a
 * C++ one inside a namespace), a unit that imports another (dwz: the
 * walk takes its children as the unit's own, and may meet a DIE twice),
 * and any error of dwarf_haspc are left to dwarf_getscopes. A DIE with
 * no attribute a range can come from has none (may_have_pc()), so
 * dwarf_haspc is asked only of the others.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/scopes.h"
#include "util/grow.h"

#define MAX_DEPTH 256
#define ASK_LIBDW (-2)

/*
 * A unit's top level: every child's address (an abstract origin is looked
 * for among them), and whole only the children that may have ranges (the
 * types and declarations that most of a top level is are not kept).
 */
struct unit {
	void *addr;                   /* the root DIE's */
	void **all;                   /* its children's addresses, in file order */
	size_t n, cap;
	Dwarf_Die *pc;                /* its children that may have ranges, in file order */
	size_t npc, cap_pc;
	bool whole;                   /* the index answers (else dwarf_getscopes) */
};

struct ms_scopes {
	struct unit *u;
	size_t n, cap;
	uint64_t units, answers;
};

/* The DIEs libdw's walk descends into: those with addresses, and those that can own some. */
static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block: case DW_TAG_with_stmt:
	case DW_TAG_catch_block: case DW_TAG_try_block: case DW_TAG_entry_point: case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram: case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/*
 * dwarf_ranges: low_pc (with high_pc) for one range, else DW_AT_ranges;
 * with neither, none. low_pc may come from the DIE's abstract origin or
 * specification (dwarf_attr_integrate): a DIE that names one may have a
 * range. The abbreviation says, with no attribute read.
 */
static bool may_have_pc(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
	       dwarf_hasattr(die, DW_AT_abstract_origin) || dwarf_hasattr(die, DW_AT_specification);
}

/* The root's children into u: false where the index cannot answer (an import, ENOMEM). */
static bool read_top(struct unit *u, Dwarf_Die *cu)
{
	Dwarf_Die c;

	if (dwarf_child(cu, &c))
		return true;
	do {
		if (dwarf_tag(&c) == DW_TAG_imported_unit || MS_GROW(u->all, u->n + 1, u->cap, 256, SIZE_MAX, false))
			return false;
		u->all[u->n++] = c.addr;
		/* In file order: an origin is found by its address. */
		if (u->n > 1 && (char *)u->all[u->n - 2] >= (char *)c.addr)
			return false;
		if (may_have_pc(&c)) {
			if (MS_GROW(u->pc, u->npc + 1, u->cap_pc, 64, SIZE_MAX, false))
				return false;
			u->pc[u->npc++] = c;
		}
	} while (!dwarf_siblingof(&c, &c));
	return true;
}

/* The arrays cut to what they hold: they grew by doubling, and live to the end. */
static void shrink(struct unit *u)
{
	MS_SHRINK(u->all, u->n, u->cap);
	MS_SHRINK(u->pc, u->npc, u->cap_pc);
}

/* The index of the unit whose root is cu, made where new; NULL on ENOMEM. */
static struct unit *unit_of(struct ms_scopes *s, Dwarf_Die *cu)
{
	struct unit *u;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->u[i].addr == cu->addr)
			return &s->u[i];
	if (MS_GROW(s->u, s->n + 1, s->cap, 16, SIZE_MAX, false))
		return NULL;
	u = &s->u[s->n++];
	*u = (struct unit){ .addr = cu->addr };
	u->whole = read_top(u, cu);
	if (!u->whole) {
		free(u->all);
		free(u->pc);
		*u = (struct unit){ .addr = cu->addr };
	} else
		shrink(u);
	s->units++;
	return u;
}

/* Whether the DIE at addr is one of the root's children. */
static bool at_top(const struct unit *u, void *addr)
{
	size_t lo = 0, hi = u->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((char *)u->all[mid] < (char *)addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < u->n && u->all[lo] == addr;
}

/* The first of die's children whose ranges hold pc into *out: 1, 0 where none, ASK_LIBDW. */
static int child_holding(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out)
{
	int r, tag;

	if (dwarf_child(die, out))
		return 0;
	do {
		if ((tag = dwarf_tag(out)) == DW_TAG_imported_unit || tag < 0)
			return ASK_LIBDW;
		if (may_have_pc(out) && (r = dwarf_haspc(out, pc)))
			return r < 0 ? ASK_LIBDW : 1;
	} while (!dwarf_siblingof(out, out));
	return 0;
}

/* Step 1: the path to the innermost DIE holding pc (its length), *inlined the instance's depth; or ASK_LIBDW. */
static int descend(const struct unit *u, Dwarf_Addr pc, Dwarf_Die *path, int *inlined)
{
	int np = 0, r = 0;
	size_t i;

	*inlined = 0;
	for (i = 0; i < u->npc && !r; i++)
		if ((r = dwarf_haspc(&u->pc[i], pc)) < 0)
			return ASK_LIBDW;
	if (!r)
		return 0;
	path[np++] = u->pc[i - 1];
	for (;;) {
		if (dwarf_tag(&path[np - 1]) == DW_TAG_inlined_subroutine)
			*inlined = np;
		if (!may_have_scopes(dwarf_tag(&path[np - 1])) || dwarf_haschildren(&path[np - 1]) <= 0)
			return np;
		if (np == MAX_DEPTH)
			return ASK_LIBDW;
		if ((r = child_holding(&path[np - 1], pc, &path[np])) <= 0)
			return r ? r : np;
		np++;
	}
}

/* Steps 1 and 2 (the top of this file); ASK_LIBDW where dwarf_getscopes must answer. */
static int answer(const struct unit *u, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	Dwarf_Die path[MAX_DEPTH], origin, *v;
	int inlined, np = descend(u, pc, path, &inlined), n, k;
	Dwarf_Attribute attr;

	if (np <= 0)
		return np;
	if (inlined) {
		if (!dwarf_formref_die(dwarf_attr(&path[inlined - 1], DW_AT_abstract_origin, &attr), &origin))
			return -1;
		if (!at_top(u, origin.addr))
			return ASK_LIBDW;     /* deeper, or not in the unit: the walk says */
	}
	n = inlined ? np - inlined + 2 : np + 1;   /* to the instance and the root, or the whole path */
	if (!(v = malloc((size_t)n * sizeof(*v))))
		return -1;
	for (k = 0; k < n - 1; k++)
		v[k] = path[np - 1 - k];
	v[k] = *cu;
	*scopes = v;
	return n;
}

int ms_scopes_get(struct ms_scopes **sp, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	struct unit *u;
	int n;

	if (!*sp && !(*sp = calloc(1, sizeof(**sp))))
		return dwarf_getscopes(cu, pc, scopes);
	u = unit_of(*sp, cu);
	if (!u || !u->whole || (n = answer(u, cu, pc, scopes)) == ASK_LIBDW)
		return dwarf_getscopes(cu, pc, scopes);
	(*sp)->answers++;
	return n;
}

void ms_scopes_counts(const struct ms_scopes *s, uint64_t *units, uint64_t *answers)
{
	*units = s ? s->units : 0;
	*answers = s ? s->answers : 0;
}

void ms_scopes_free(struct ms_scopes *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->u[i].all);
		free(s->u[i].pc);
	}
	free(s->u);
	free(s);
}
