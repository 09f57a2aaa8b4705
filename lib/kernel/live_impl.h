/* Internal to lib/kernel/live*.c: a live source's own state (mapscope/live.h is its API). */
#ifndef MS_KERNEL_LIVE_IMPL_H
#define MS_KERNEL_LIVE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>

#include <mapscope/live.h>

#include "perfdata/evlist.h"
#include "util/buf.h"

/* KTHREAD: opened for a kernel thread we started (a kdamond), on from its open, never for the tasks. */
enum phase { PHASE_FAULTS, PHASE_ENTER, PHASE_EXIT, PHASE_KTHREAD };

/* What live needs of an event beyond the list's attr, name and ids. */
struct evsel_use {
	char tp[128];            /* "syscalls/sys_enter_munmap", or "" */
	enum phase phase;
	const char *filter;      /* a tracepoint filter (PERF_EVENT_IOC_SET_FILTER), or NULL */
};

struct ringmerge;

struct efd {
	int fd;
	unsigned int evsel;
};

struct ring {
	int fd;                  /* -1 until the CPU's first event is opened */
	int cpu;
	struct perf_event_mmap_page *pg;
	unsigned char *data;
	size_t size;             /* of the data area, a power of two */
};

struct ms_live {
	struct ms_live_opts opts;
	struct ms_evlist ev;
	struct evsel_use *use;   /* use[i]: of ev.v[i] */
	bool oom;                /* an event could not be added */
	struct ring *rings;
	int nr_cpus;
	struct efd *fds;
	size_t nr_fds, cap_fds;
	struct ms_buf tracing_data;
	struct ringmerge *merge;         /* ms_live_drain_merged()'s arrays, or NULL before its first drain */
	unsigned char scratch[65536];    /* a record that wraps around the ring's end */
};

/* Frees what ms_live_drain_merged() allocated (kernel/ringmerge.c). */
void ms_ringmerge_free(struct ringmerge *m);

#endif
