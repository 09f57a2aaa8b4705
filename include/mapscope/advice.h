/*
 * ms_advice: hugepage advice that survives into a new run of the program
 * (profile-guided hugepages). Addresses change from run to run; what made
 * the memory does not. So each advised region becomes a rule keyed by its
 * creating call chain (from the first frame outside the C library, the
 * loader and the allocator: a few frames, each a binary's build-id and an
 * address in that binary), its kind and its size class. The rules are
 * written to a file (docs/mapscope-run.1 gives its format), read back by
 * `mapscope run --hugepages`, and handed to the LD_PRELOAD shim that
 * advises each new mapping that matches as it is made.
 *
 *	struct ms_advice *adv = ms_advice_new();
 *	ms_session_add(s, &ms_advice_analysis, adv);     (beside the hugepages analysis)
 *	ms_session_run(s);
 *	ms_hugepages_advice(hp, ..., &v, &n);
 *	ms_advice_add(adv, s, v, n);
 *	ms_advice_write(adv, f);
 *
 * Strings handed out are borrowed from adv and live until ms_advice_free().
 */
#ifndef MAPSCOPE_ADVICE_H
#define MAPSCOPE_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mapscope/hugepages.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_advice;

/* NULL with errno set. */
struct ms_advice *ms_advice_new(void);

/*
 * The analysis that keys each new region of a session as it is made, while
 * its process's binaries are known (ctx: an ms_advice). It needs the
 * session's symbols and the creating call chains the recording has
 * (record --call-graph).
 */
extern const struct ms_analysis ms_advice_analysis;

/*
 * Turns the advised entries of v[0, n) into rules, one per distinct key.
 * Returns how many rules adv holds, or -ENOMEM. Advised regions that have
 * no key (no call chain recorded, or one made by the C library or the
 * loader alone) are counted in ms_advice_unkeyed(). Where s's recording
 * lost records or was damaged, the file ms_advice_write() writes says so
 * (its "losses"), n 0 included.
 */
int ms_advice_add(struct ms_advice *adv, const struct ms_session *s, const struct ms_huge_advice *v, size_t n);

size_t ms_advice_nr_rules(const struct ms_advice *adv);
size_t ms_advice_unkeyed(const struct ms_advice *adv);

/* Whether a rule is for glibc malloc's heap: the child needs GLIBC_TUNABLES=glibc.malloc.hugetlb=1. */
bool ms_advice_wants_malloc_hugetlb(const struct ms_advice *adv);

/* The i-th rule's site ("make_table"), where known, for people; NULL past the last or where unknown. */
const char *ms_advice_rule_site(const struct ms_advice *adv, size_t i);

/* Writes the rules as JSON to f. 0 or -EIO. */
int ms_advice_write(const struct ms_advice *adv, FILE *f);

/*
 * Reads the rules of an advice file's text (len bytes) into adv, after any
 * it holds. 0, -EINVAL where it is not an advice file (*line: the line of
 * the fault), -ENOMEM.
 */
int ms_advice_read(struct ms_advice *adv, const char *text, size_t len, int *line);

/*
 * The rules in the compact form the shim reads from its environment
 * (lib/analysis/advice-key.h). A string to free(), or NULL with errno.
 */
char *ms_advice_encode(const struct ms_advice *adv);

/* Accepts NULL. */
void ms_advice_free(struct ms_advice *adv);

#ifdef __cplusplus
}
#endif
#endif
