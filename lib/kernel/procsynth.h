/*
 * Internal: the one place that walks /proc for the live source. It finds a
 * process's threads (for record -p, the launched command, attach and
 * watch alike) and builds the records that describe what existed before
 * we attached, in the same layout the kernel uses, so readers need not
 * tell them apart.
 */
#ifndef MS_KERNEL_PROCSYNTH_H
#define MS_KERNEL_PROCSYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <mapscope/live.h>

#include "util/buf.h"
#include "util/u32map.h"

struct ms_maps_entry {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	uint32_t prot;           /* PROT_* */
	uint32_t flags;          /* MAP_SHARED or MAP_PRIVATE */
	char name[4096];         /* "" for anonymous memory */
};

/*
 * The sample_id_all trailer every record carries: of TID, TIME, ID,
 * STREAM_ID (0), CPU and IDENTIFIER, those sample_type holds, in that
 * order (all where it is 0), as the event the records are charged to
 * (identifier's) lays them out.
 */
struct ms_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu, res;
	uint64_t identifier;
	uint64_t sample_type;
};

/* Parses one line of /proc/PID/maps. 0 or -EINVAL. */
int ms_maps_parse_line(const char *line, struct ms_maps_entry *e);

/* Appends an MMAP2 record for e (anonymous memory is named "//anon", as the kernel does). */
void ms_synth_mmap2(struct ms_buf *out, const struct ms_maps_entry *e,
		    const struct ms_sample_id *sid);

/* Appends a COMM record. */
void ms_synth_comm(struct ms_buf *out, const char *comm, const struct ms_sample_id *sid);

/* The threads a walk has handed out, over one or more processes. */
struct ms_tidset {
	struct ms_u32map tids;   /* tid -> the set itself: a set, as fast for a browser's thousands */
};

void ms_tidset_init(struct ms_tidset *t);
void ms_tidset_release(struct ms_tidset *t);
bool ms_tidset_has(const struct ms_tidset *t, pid_t tid);

/* Called once for each thread a walk finds. 0 goes on; -ESRCH (it has gone) is passed over. */
typedef int (*ms_task_fn)(pid_t tid, void *ctx);

/*
 * The most passes a walk makes: a process that makes threads without end
 * would otherwise hold it forever. Its threads made after fn ran for their
 * creator inherit the creator's events, so a bound loses nothing there.
 */
#define MS_PROC_WALK_PASSES 8

/*
 * Calls fn for each thread of tgid under root ("/proc", or a test's copy)
 * that seen does not hold yet, and adds it there. A pass reads the whole
 * task directory before calling fn; passes repeat until one finds no new
 * thread (or MS_PROC_WALK_PASSES), so that a thread made while fn ran for
 * the others is found by the next pass. 0, the -errno of opening the task
 * directory (-ENOENT: tgid has gone), -ENOMEM, or what fn returned.
 */
int ms_proc_walk_tasks(const char *root, pid_t tgid, struct ms_tidset *seen, ms_task_fn fn, void *ctx);

/*
 * Opens l's events on every thread of the running process tgid, threads
 * made during the walk included (ms_proc_walk_tasks on /proc). seen: the
 * threads already followed, over the processes attached so far. 0 or a
 * negative errno (-ESRCH: the process has gone).
 */
int ms_proc_attach(struct ms_live *l, pid_t tgid, struct ms_tidset *seen);

/*
 * Hands to fn the records of a process that already runs, read under root:
 * a COMM for each of its threads (each followed by what each(tid,
 * each_ctx) hands on, where each is not NULL), then an MMAP2 for each line
 * of root/TGID/task/TGID/maps; sid is the trailer they carry (its pid the
 * process, its tid overwritten per thread). 0 or a negative errno (from
 * /proc, fn or each).
 */
int ms_proc_synthesize(const char *root, pid_t tgid, const struct ms_sample_id *sid, ms_task_fn each,
		       void *each_ctx, ms_live_fn fn, void *ctx);

#endif
