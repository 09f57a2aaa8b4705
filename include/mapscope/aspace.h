/*
 * ms_aspace: the time-aware address-space model. Events applied in time
 * order keep, per process, the mappings alive at that instant. A region is
 * one mapping's life: it keeps its identity when it grows, shrinks, moves
 * or is split, and ends when its last page is unmapped; a later mapping at
 * the same address is a new region. Each data sample is charged to the
 * region that held its address when it was taken, or to "unmapped".
 */
#ifndef MAPSCOPE_ASPACE_H
#define MAPSCOPE_ASPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_aspace;

enum ms_region_kind {
	MS_KIND_HEAP, MS_KIND_STACK, MS_KIND_THREAD_STACK, MS_KIND_ANON,
	MS_KIND_FILE, MS_KIND_SHM, MS_KIND_VDSO, MS_KIND_OTHER,
};

/* "heap", "stack", "thread-stack", "anon", "file", "shm", "vdso", "other". */
const char *ms_region_kind_name(enum ms_region_kind k);

struct ms_region {
	uint32_t id;               /* dense from 0, in order of creation */
	uint32_t pid;
	const char *comm;          /* the process's name when the region was made; the model's, for its life */
	uint64_t start, end;       /* its extent now, or when it ended */
	uint32_t prot;             /* of most of it: its biggest run of pages alike (not a guard page's) */
	uint32_t flags;            /* of the map that made it */
	uint32_t maj, min;
	uint64_t ino;
	enum ms_region_kind kind;
	const char *name;          /* repaired: "[heap]", "[stack]", "[stack:TID]", a path, "" */
	const char *proc_name;     /* as /proc/PID/maps names it */
	uint64_t created_ns, ended_ns;
	bool alive;
	bool uncertain;            /* from a file with no unmap records: perf's view */
	bool records_lost;         /* alive when records were lost (of any process: rings are shared): its extent may be wrong */
	enum ms_map_via via;
	uint64_t *alloc_chain;     /* call chain of the syscall that made it, or NULL */
	uint32_t alloc_chain_len;
};

/* What applying an event did, for the timeline. */
enum ms_aspace_op {
	MS_OP_NONE, MS_OP_MAP, MS_OP_UNMAP, MS_OP_REMAP, MS_OP_PROTECT, MS_OP_BRK,
	MS_OP_STACK_GROW, MS_OP_MADVISE, MS_OP_FORK, MS_OP_EXEC, MS_OP_EXIT, MS_OP_LOCK,
};

/* An op's name as the CLI, its JSON and the watch channel print it ("map", "stack-grow"), or NULL. */
const char *ms_aspace_op_name(enum ms_aspace_op op);

struct ms_aspace_listener {
	/* A sample charged to r, or to nothing (r NULL: no mapping held the address). */
	void (*charge)(void *ctx, const struct ms_event *sample, const struct ms_region *r);
	/*
	 * Optional: a run of samples charged at once, all to r (never NULL), in
	 * order; where set, used in place of charge for such runs. A run's
	 * samples are of one process and lie in one stretch of r that has one
	 * protection (ms_aspace_prot_at() of the first says it for all).
	 */
	void (*charge_run)(void *ctx, const struct ms_samples *run, const struct ms_region *r);
	/*
	 * Optional: an access event (MS_EV_ACCESS), charged where it lands at
	 * its instant: once per region its range overlaps, with the overlap
	 * [start, end), in address order; and once per stretch of it where
	 * nothing was mapped, with r NULL.
	 */
	void (*access)(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end);
};

/* NULL with errno set. */
struct ms_aspace *ms_aspace_new(void);

/* Installs the listener (copied) that hears sample charges. */
void ms_aspace_set_listener(struct ms_aspace *as, const struct ms_aspace_listener *l, void *ctx);

/*
 * Applies one event. A sample may be charged a little later (a stack fault
 * waits for the growth record the kernel writes right after it). *op says
 * what the event did (may be NULL). 0 or -ENOMEM.
 */
int ms_aspace_apply(struct ms_aspace *as, const struct ms_event *ev, enum ms_aspace_op *op);

/*
 * Whether applying ev, an EXIT, would end its process: it is the exit of
 * the last thread known alive (a leader that exits while its threads run
 * leaves them the maps).
 */
bool ms_aspace_exit_ends(const struct ms_aspace *as, const struct ms_event *ev);

/* Applies evs[0, n) in order, as n calls of ms_aspace_apply would, runs of samples at once. 0 or -ENOMEM. */
int ms_aspace_apply_run(struct ms_aspace *as, const struct ms_event *evs, size_t n);

/* A change as the timeline and the watch channel describe it. */
struct ms_change {
	enum ms_aspace_op op;
	uint64_t time_ns;
	uint32_t pid, tid;
	uint64_t start, end;          /* the range concerned (brk: old and new break; 0, 0: none) */
	uint64_t new_start, new_end;  /* remap: where it went */
	uint32_t child_pid, child_tid;/* fork */
	/*
	 * What was in [release_start, release_end) is gone: unmapped, moved
	 * away, replaced by a new map, released by madvise or a brk shrink.
	 * An exec or a process exit releases everything (release_all).
	 */
	uint64_t release_start, release_end;
	bool release_all;
	/*
	 * The region concerned; fork: "child P/T"; exec: the new name; "" when
	 * none, never NULL. The model owns it: valid until the next event is
	 * applied to the aspace. Whoever keeps a change longer copies it.
	 */
	const char *name;
	int prot;                     /* map, protect, remap: the protection now (PROT_*); else -1 */
	int advice;                   /* madvise: the advice (MADV_*); else -1 */
	int lock;                     /* lock: the lock state the range takes (MS_LOCK_*, 0: unlocked); else -1 */
	/*
	 * The region the change made (map), moved (remap), grew (brk, stack-grow),
	 * changed (protect, madvise, lock) or unmapped from (unmap: the one that
	 * held the range's start, which may have ended); NULL for the others.
	 */
	const struct ms_region *region;
};

/*
 * Applies ev like ms_aspace_apply() and describes what it changed. 1 with
 * *out filled when the address space changed, 0 when not, -ENOMEM.
 * out->name is borrowed from as until the next event is applied.
 */
int ms_aspace_apply_change(struct ms_aspace *as, const struct ms_event *ev, struct ms_change *out);

/*
 * The call chain of the syscall behind ev (ev->chain, without perf's
 * context markers, with the wrapper's caller put back from ev->stack).
 * out must hold ev->chain_len + 1 entries. Returns how many it wrote.
 */
uint32_t ms_aspace_call_chain(const struct ms_aspace *as, const struct ms_event *ev, uint64_t *out);

/* Charges the samples still waiting. Call once at the end of the stream. */
void ms_aspace_finish(struct ms_aspace *as);

/* The region holding addr in process pid now, or NULL. O(log n) in live mappings. */
const struct ms_region *ms_aspace_lookup(const struct ms_aspace *as, uint32_t pid, uint64_t addr);

/* The protection (PROT_*) of the page holding addr now, or -1 when none does. */
int ms_aspace_prot_at(const struct ms_aspace *as, uint32_t pid, uint64_t addr);

/* Whether process pid's region (by id) holds all of [start, end) now. */
bool ms_aspace_holds(const struct ms_aspace *as, uint32_t pid, uint32_t region, uint64_t start, uint64_t end);

/* Whether processes a and b share one address space now (a vfork or clone(CLONE_VM) child and its parent). */
bool ms_aspace_shares(const struct ms_aspace *as, uint32_t a, uint32_t b);

/* The process's main stack and heap regions now, or NULL. */
const struct ms_region *ms_aspace_stack(const struct ms_aspace *as, uint32_t pid);
const struct ms_region *ms_aspace_heap(const struct ms_aspace *as, uint32_t pid);

size_t ms_aspace_nr_regions(const struct ms_aspace *as);
const struct ms_region *ms_aspace_region(const struct ms_aspace *as, size_t id);

/* One VMA as the kernel would list it, for /proc/PID/maps-style output. */
struct ms_vma {
	uint64_t start, end, offset, ino;
	uint32_t prot, flags, maj, min;
	const char *name;
};

/* Calls fn for each VMA of pid in address order. 0, or -ESRCH for an unknown pid. */
int ms_aspace_for_each_vma(const struct ms_aspace *as, uint32_t pid,
			   void (*fn)(const struct ms_vma *v, void *ctx), void *ctx);

/* Accepts NULL. */
void ms_aspace_free(struct ms_aspace *as);

#ifdef __cplusplus
}
#endif
#endif
