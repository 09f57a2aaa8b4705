/*
 * The do: line of hugepage advice: a thing a user can type or change to
 * put an advised region on hugepages, from what the recording says of it.
 */
#ifndef MS_HUGEPAGES_DO_H
#define MS_HUGEPAGES_DO_H

#include <stddef.h>

#include <mapscope/hugepages.h>
#include <mapscope/session.h>

/* How a region is best put on hugepages: hugepages_how_name() names each in JSON. */
enum hugepages_how {
	HOW_NONE,        /* not advised */
	HOW_TUNABLE,     /* glibc malloc's memory: GLIBC_TUNABLES=glibc.malloc.hugetlb=1 */
	HOW_JVM,         /* a JVM's memory: -XX:+UseTransparentHugePages */
	HOW_SITE,        /* madvise(MADV_HUGEPAGE) after the mmap in the function that made it */
	HOW_UNNAMED,     /* the same, but the recording does not say where it is made */
};

/*
 * The action for a (the advice of session s's recording) in buf, and how
 * (its kind). A region it holds at the end says its range, and --apply.
 */
enum hugepages_how hugepages_do(const struct ms_huge_advice *a, struct ms_session *s, char *buf, size_t len);

/*
 * Who made r: its allocation site where the recording names one, else, for
 * glibc malloc's memory, malloc, said so; NULL when nothing is known.
 */
const char *hugepages_alloc(const struct ms_region *r, struct ms_session *s);

/* "glibc-tunable", "jvm-option", "madvise-at-site", "madvise-where-made" or NULL for HOW_NONE. */
const char *hugepages_how_name(enum hugepages_how how);

/* For the advise column of a region with no range held: what to do, in a few words. */
const char *hugepages_how_short(enum hugepages_how how);

#endif
