/*
 * Internal: the names of the code a report's memo left for later
 * (codememo.h), taken once the replay is over: one (symbol, binary) pair
 * of strings for each symbol, so that whoever tells names apart by their
 * address, as the report's children do, tells apart what naming at once
 * did.
 */
#ifndef MS_ANALYSIS_CODENAMES_H
#define MS_ANALYSIS_CODENAMES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/codelater.h"
#include "analysis/codememo.h"

/* An entry's names: its pair, and what tells its symbol apart. */
struct ms_code_name {
	const char *symbol, *dso;
	const char *raw;               /* its symbol-table name, or NULL */
	uint64_t id;                   /* where that lies in its binary's string tables, or 0 */
};

/* Zeroed to start; ms_code_names_release() after. */
struct ms_code_names {
	struct ms_code_name *e;        /* entry i's */
	size_t n, cap;
	uint32_t *slot;                /* the first entry of each string of a binary + 1, by hash */
	size_t nslot, npairs;
};

/*
 * Names later's entries from t->n on, each as ms_code_name() would have
 * named it when it was added. Entries held by a binary are one pair where
 * their binary's path and their symbol-table string are the same: the
 * same place in the same string table (ms_code_sym's id), or the same text
 * where no id could be told; as naming at once gave one string for each
 * string of a binary's table (demangle.c), and one binary for each path.
 * The strings are the symbols', the namer's or its cache's, living until
 * ms_namer_free(). 0, or -ENOMEM with the entries named so far kept.
 */
int ms_code_names_take(struct ms_code_names *t, struct ms_code_later *later);

/* *symbol and *dso where they are an entry's answer (dso is ms_code_later_tag, symbol the entry + 1): its names. */
static inline void ms_code_names_get(const struct ms_code_names *t, const char **symbol, const char **dso)
{
	size_t i = (size_t)(uintptr_t)*symbol - 1;

	if (*dso == ms_code_later_tag && i < t->n) {
		*symbol = t->e[i].symbol;
		*dso = t->e[i].dso;
	}
}

/* ms_code_names_get() of t (ctx), for a callback. */
void ms_code_names_rename(void *t, const char **symbol, const char **dso);

void ms_code_names_release(struct ms_code_names *t);

#endif
