/*
 * Internal: a recording's events (perf's "evsels"): each one's attr, name
 * and the ids its fds had. The file reader fills one from the attrs section
 * (or pipe-mode ATTR records) and the live source from the events it opens;
 * the stream reads either the same way.
 */
#ifndef MS_PERFDATA_EVLIST_H
#define MS_PERFDATA_EVLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

struct ms_evsel {
	struct perf_event_attr attr;
	char *name;                  /* as perf names it ("syscalls:sys_enter_munmap"), or NULL */
	uint64_t *ids;
	size_t nr_ids, cap_ids;
};

/* Whether a is a page-fault event (page-faults, minor-faults or major-faults). */
static inline bool ms_attr_page_faults(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_PAGE_FAULTS || a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
}

struct ms_evlist {
	/* Each evsel on its own: a stream keeps pointers to their attrs while more come in. */
	struct ms_evsel **v;
	size_t n, cap;
	uint64_t nr_ids;             /* of every evsel together */
};

/* Appends an evsel with a copy of attr (size bytes of it; the rest zero). NULL on no memory. */
struct ms_evsel *ms_evlist_add(struct ms_evlist *l, const void *attr, size_t size);

/* Adds an id to e. 0 or -ENOMEM. */
int ms_evsel_add_id(struct ms_evlist *l, struct ms_evsel *e, uint64_t id);

/* Sets e's name (a copy of len bytes of name; a second name replaces the first). 0 or -ENOMEM. */
int ms_evsel_set_name(struct ms_evsel *e, const char *name, size_t len);

/* The index of the evsel that has this id, or -1. */
int ms_evlist_by_id(const struct ms_evlist *l, uint64_t id);

void ms_evlist_release(struct ms_evlist *l);

#endif
