/*
 * Internal: the mapping calls an attached process's threads are blocked
 * in when its maps are read, as entry records (blocked.c).
 */
#ifndef MS_KERNEL_BLOCKED_H
#define MS_KERNEL_BLOCKED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>
#include <mapscope/live.h>

/* A call a task is blocked in. */
struct ms_blocked {
	uint32_t pid, tid;
	uint64_t time;               /* the entry's stamp: the maps' */
	long nr;                     /* the syscall's number */
	int nargs;
	uint64_t args[6];
	uint64_t pc;                 /* where the task will return to */
};

/* Parses /proc/TID/syscall: 0 for a task blocked in a call (nr, args, pc set), -EINVAL otherwise ("running"). */
int ms_blocked_parse(const char *text, long *nr, uint64_t args[6], uint64_t *pc);

/* The name of mapping call nr as its tracepoints have it, and its arguments' count; NULL if not followed. */
const char *ms_blocked_call(long nr, int *nargs);

/*
 * The entry sample of b in the layout of attr (a syscall entry's
 * tracepoint, whose samples carry id) into out: its size, or 0 where it
 * does not fit in cap or attr asks for a field not written here.
 */
size_t ms_blocked_entry(const struct perf_event_attr *attr, uint64_t id, const struct ms_blocked *b,
			void *out, size_t cap);

/* Where ms_blocked_task() hands on the entries it makes, and what it stamps them with. */
struct ms_blocked_to {
	struct ms_live *live;        /* whose syscall entry events lay the records out */
	pid_t tgid;
	uint64_t time;
	ms_live_fn fn;
	void *ctx;
};

/*
 * An entry record, stamped to->time, where thread tid of to->tgid is
 * blocked in a mapping call: an ms_task_fn for the walk that synthesises
 * the process (ms_proc_synthesize). 0 or what fn returned.
 */
int ms_blocked_task(pid_t tid, void *to);

#endif
