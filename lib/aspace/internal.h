/*
 * Internal to lib/aspace: the model's state, shared by the files that
 * each do one of its jobs (aspace.c: objects and lookups; pieces.c: the
 * sorted piece array; vmarules.c: the kernel's VMA rules; apply.c:
 * applying changes; charge.c: charging samples; stacks.c: stacks). The
 * helpers the quick path of charging uses are inline here.
 */
#ifndef MS_ASPACE_INTERNAL_H
#define MS_ASPACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <mapscope/aspace.h>

#include "util/log.h"
#include "util/u32map.h"

#define PAGE_ALIGN(x) (((x) + 4095) & ~4095ULL)
#define STACK_REACH (1ULL << 30)   /* how far below [stack] a fault may grow it */
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

struct piece {
	uint64_t start, end;
	uint64_t pgoff;          /* file offset of start */
	uint32_t prot, flags;
	uint32_t region;
	bool join;               /* same kernel VMA as the piece before it */
	uint16_t vmflags;        /* VF_*: VMA flags no record shows, which split and merge VMAs */
	uint32_t anon;           /* its VMA's anon_vma: 0 none yet, else an id (ANON_FORKED: a fork's copy) */
	uint32_t mpol;           /* its NUMA policy (mbind): mode and mode flags, home node + 1 above; 0 none */
	uint32_t name;           /* its anon_vma_name (prctl PR_SET_VMA_ANON_NAME): as->anon_names[name - 1]; 0 none */
};

/*
 * anon_vma: a private writable VMA gets one at its first fault (anon_vma_prepare),
 * taking a compatible neighbour's where that one is not shared with a fork
 * (find_mergeable_anon_vma). Two VMAs with different ones never merge, nor
 * does a fork's copy with one that has none (mm/vma.c, is_mergeable_anon_vma).
 * Only faults show when one is made: a sampled fault makes it here, so a
 * read fault (the zero page, no anon_vma) or one not sampled (-c above 1)
 * is not told apart. On a machine whose read faults take pages of their
 * own (the recording says so: fault_makes_anon), a read fault makes one too.
 */
#define ANON_FORKED 0x80000000u

/*
 * The VMA flags that madvise advice sets and clears (mm/madvise.c,
 * madvise_update_vma), and those of mlock (mm/mlock.c, mlock_fixup).
 */
enum { VF_DONTFORK = 1, VF_MERGEABLE = 2, VF_HUGEPAGE = 4, VF_NOHUGEPAGE = 8, VF_DONTDUMP = 16,
       VF_WIPEONFORK = 32, VF_LOCKED = 64, VF_LOCKONFAULT = 128,
       /*
        * Accounting: VM_NORESERVE from MAP_NORESERVE, and VM_ACCOUNT, which a
        * private writable map has unless NORESERVE (accountable_mapping),
        * and which mprotect adds and takes away only from anonymous memory
        * not faulted yet: a RELRO segment made read-only keeps it, and never
        * merges with the read-only one before it.
        */
       VF_NORESERVE = 256, VF_ACCOUNT = 512,
       VF_SEALED = 1024 /* mseal (mm/mseal.c): VM_SEALED, inherited by a fork */,
       /* userfaultfd's VM_UFFD_MISSING, _WP, _MINOR (UFFDIO_REGISTER_MODE_* shifted by 11) */
       VF_UFFD_MISSING = 2048, VF_UFFD_WP = 4096, VF_UFFD_MINOR = 8192,
       /* madvise's read-ahead hints: VM_SEQ_READ, VM_RAND_READ */
       VF_SEQ_READ = 16384, VF_RAND_READ = 32768 };
#define VF_LOCKS (VF_LOCKED | VF_LOCKONFAULT)
#define VF_UFFD (VF_UFFD_MISSING | VF_UFFD_WP | VF_UFFD_MINOR)

struct proc {
	uint32_t pid;
	struct piece *p;         /* p[0, n): room for `head` pieces before p[0] and cap - head - n after */
	size_t n, cap, head;
	uint64_t moved_lo, moved_hi;   /* where pieces were put since the last settle (ms_pieces_settle) */
	uint64_t cuts[8];        /* where pieces met anew since the last settle: it joins those alike there */
	size_t nr_cuts;
	uint64_t cut_lo, cut_hi; /* past eight: the others lie in [cut_lo, cut_hi) (none where lo >= hi) */
	/*
	 * A VMA known whole, [vma_lo, vma_hi) (none where lo >= hi): its pieces
	 * are contiguous, each after the first joined, all with anon vma_anon.
	 * ms_pieces_set_vma() passes over them. Pieces change only after
	 * ms_pieces_carve(), ms_pieces_vma() or ms_pieces_clear() of their
	 * range, which cut or forget it.
	 */
	uint64_t vma_lo, vma_hi;
	uint32_t vma_anon;
	struct bigheap *big;     /* its regions of many pieces, each with its pieces by size (settle.c) */
	size_t nr_big;
	size_t hint;             /* the piece the last lookup found: samples cluster */
	size_t near;             /* the piece lower_from() found last: a change searches near one place */
	char comm[16];
	const char *comm_str;    /* comm as the regions made last hold it (one of as->comms) */
	int64_t heap, stack;     /* region ids, or -1 */
	/*
	 * Where the main stack began (mm->start_stack: /proc names [stack] the
	 * VMA that holds it alone): the stack pointer at the execve's exit,
	 * or in a recording with no execve the main thread's first at a
	 * followed call, a few frames below. 0: not known (all of the stack
	 * region is named).
	 */
	uint64_t start_stack;
	bool stack_new;          /* an exec was seen, where its stack began not known yet */
	/*
	 * The break where it started and where it is (mm->start_brk, mm->brk:
	 * /proc names [heap] each anonymous VMA over [start_brk, brk)), from
	 * the first brk after an exec (glibc's loader asks for the break with
	 * brk(0) before anything moves it) on. brk_known false: not known.
	 */
	uint64_t start_brk, brk;
	bool brk_known, brk_new;     /* brk_new: an exec seen, its first brk to come */
	uint16_t def_vmflags;    /* VF_LOCKS that new maps get: mlockall(MCL_FUTURE) */
	bool merge_any;          /* prctl(PR_SET_MEMORY_MERGE): VF_MERGEABLE on new maps KSM may merge (MMF_VM_MERGE_ANY) */
	struct ms_u32map named;  /* tids whose stack has been named */
	uint32_t last_named;     /* the tid named (or found named) last: samples come in runs */
	uint32_t users;          /* processes whose pids lead here: more than 1 share one mm (tasks.c) */
};

struct pending {
	struct ms_event ev;
	uint64_t *chain;
};

/* Regions are made in blocks of this many, zeroed: one allocation, not one each with its header. */
#define REGION_BLOCK 1024

struct ms_aspace {
	struct ms_u32map procs;
	struct proc *last_proc;      /* samples come in runs from one process */
	struct ms_region **regions;
	size_t nr, cap;
	struct ms_region **blocks;   /* region id lies in blocks[id / REGION_BLOCK] */
	size_t nr_blocks, cap_blocks;
	char **comms;                /* the regions' comms, each string shared by the regions of a process */
	size_t nr_comms, cap_comms;
	struct ms_u32map pending;    /* tid -> struct pending */
	struct ms_u32map threads;    /* tid -> its pid, for the live threads seen that do not lead (tasks.c) */
	struct ms_u32map groups;     /* pid -> struct group, for the processes that have such threads */
	struct ms_aspace_listener listener;
	void *ctx;
	uint32_t last_anon;          /* the last anon_vma id given */
	uint32_t *touched;           /* regions a change touched, for their extents (settle.c) */
	char change_name[256];       /* the last ms_change's name: 256 as the timeline has always cut it */
	char **anon_names;           /* the names prctl gave VMAs, each once (struct piece's name) */
	size_t nr_anon_names, cap_anon_names;
	size_t nr_touched, cap_touched;
	bool overflow;               /* the list could not grow: every region of the process is settled */
	uint64_t file_ids[1024];     /* a filter of the devices and inodes regions were made of (names.c) */
	size_t file_ids_upto;        /* the regions in it: ids below this */
	uint64_t path_keys[16384];   /* a filter of the /proc names and their directories (names.c) */
	size_t path_keys_upto;       /* the regions in it as made: ids below this (renamed ones added as renamed) */
	size_t path_walks_wasted;    /* regions walked for renames it let through that found none */
	size_t lost_from;            /* regions from this id on were made after the last LOST record */
	bool read_fault_page;        /* a read fault takes a page of its own, not the zero page (samples.h) */
};

/* --- aspace.c --- */

/* Process pid's state, made where there is none; NULL on ENOMEM. It becomes as->last_proc. */
struct proc *ms_aspace_proc_make(struct ms_aspace *as, uint32_t pid);

/* A new region for map m of process p (named name): its id, or -ENOMEM. Regions may move: ids stay. */
int ms_region_new(struct ms_aspace *as, struct proc *p, const struct ms_event *ev,
		  const struct ms_event_map *m, const char *name);

/* The name of every region with none (anonymous memory): one string, not a copy of "" each. */
extern const char ms_region_no_name[];

/* Frees a region's name, or its /proc name, where it is a string of its own. */
static inline void ms_region_name_free(const char *name)
{
	if (name != ms_region_no_name)
		free((char *)name);
}

/* Whether r is of a file (an inode: a regular file, shmem, a device): what a record names by maj:min and ino. */
static inline bool region_has_file(const struct ms_region *r)
{
	return r->ino || r->maj || r->min;
}

/* Gives r a name of its own (its proc_name stays) and a kind. */
void ms_region_rename(struct ms_region *r, const char *name, enum ms_region_kind kind);

static inline struct proc *proc_get(struct ms_aspace *as, uint32_t pid)
{
	return as->last_proc && as->last_proc->pid == pid ? as->last_proc : ms_aspace_proc_make(as, pid);
}

/* Drops one process's hold on p; the last frees it. */
void ms_aspace_proc_put(struct proc *p);

/* --- tasks.c: which processes share an address space, and which threads keep it --- */

/* A thread of process pid seen alive: it keeps the address space when the leader exits first. */
void ms_tasks_note_thread(struct ms_aspace *as, uint32_t pid, uint32_t tid);

/* The state of a new process pid (a FORK's child), to fill with its parent's copy. NULL on ENOMEM. */
struct proc *ms_tasks_new_process(struct ms_aspace *as, uint32_t pid);

/* A FORK with share_vm: the child's pid leads to the parent's address space from now on. 0 or -ENOMEM. */
int ms_tasks_share(struct ms_aspace *as, struct proc *parent, const struct ms_event *ev);

/* An EXIT: true when it ended the process (its last thread), whose maps went with it unless shared. */
bool ms_tasks_exit(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* An exec: one thread is left, in an address space of its own. The process's state, or NULL on ENOMEM. */
struct proc *ms_tasks_exec(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* Frees the table's state. */
void ms_tasks_release(struct ms_aspace *as);

/* --- names.c --- */

/* A file's name removed: the maps of it that bore that name are "NAME (deleted)" now, as /proc says. */
void ms_names_unlink(struct ms_aspace *as, const struct ms_event *ev);

/* A rename: the maps /proc named by the old path (or a path under it) bear the new one. */
void ms_names_rename(struct ms_aspace *as, const struct ms_event *ev);

/* The id of an anon_vma_name (1 on; 0 for NULL), kept from now on: -ENOMEM where it cannot be. */
int64_t ms_names_anon_id(struct ms_aspace *as, const char *name);

/* /proc's name of the VMA that piece pc begins: [anon:NAME] or [anon_shmem:NAME] where prctl named it. */
const char *ms_names_vma(const struct ms_aspace *as, const struct piece *pc, char *buf, size_t len);

/* Frees the names. */
void ms_names_release(struct ms_aspace *as);

/* --- pieces.c --- */

/*
 * The first piece whose end lies above addr, where none before piece lo is
 * one, without keeping it: p->near and the piece next to it are tried
 * first, each comparison deciding the next, and a miss gallops from there.
 */
static inline size_t lower_from_c(const struct proc *p, size_t lo, uint64_t addr)
{
	const struct piece *v = p->p;
	size_t hi = p->n, h = p->near, step, q, mid;

	/*
	 * Galloping from p->near, then a binary search of what it brackets:
	 * a change's searches land on the last piece or the next (carving its
	 * ends, marking the VMA, settling), or near it (an mprotect inside a
	 * runtime's reservation of thousands of pieces), at O(log distance).
	 */
	if (h >= lo && h < hi) {
		if (v[h].end > addr) {
			if (h == lo || v[h - 1].end <= addr)
				return h;
			for (hi = h, step = 1; step <= h - lo && (q = h - step) >= lo; step *= 2) {
				if (v[q].end <= addr) {
					lo = q + 1;
					break;
				}
				hi = q;
			}
		} else {
			if (h + 1 == hi || v[h + 1].end > addr)
				return h + 1;
			for (lo = h + 2, step = 2; (q = h + step) < hi; step *= 2) {
				if (v[q].end > addr) {
					hi = q;
					break;
				}
				lo = q + 1;
			}
		}
	} else if (h == hi && h >= lo && (h == lo || v[h - 1].end <= addr)) {
		return h;
	} else if (h + 1 == lo && (lo == hi || v[lo].end > addr)) {
		return lo;
	}
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first piece whose end lies above addr in a process the caller may not change. */
static inline size_t lower_c(const struct proc *p, uint64_t addr)
{
	return lower_from_c(p, 0, addr);
}

/*
 * lower_from_c(), kept in p->near: the searches of one change (carve its
 * ends, insert, mark the VMA, settle the regions) land on the same piece
 * or the next, and a binary search over 600-800 pieces, most of its steps
 * mispredicted, topped the timeline's profile.
 */
static inline size_t lower_from(struct proc *p, size_t lo, uint64_t addr)
{
	return p->near = lower_from_c(p, lo, addr);
}

/* The first piece whose end lies above addr. */
static inline size_t lower(struct proc *p, uint64_t addr)
{
	return lower_from(p, 0, addr);
}

/* Inserts pc as piece i. 0 or -ENOMEM. */
int ms_pieces_insert(struct proc *p, size_t i, const struct piece *pc);

/* Takes pieces [from, to) out of p's array, with no look at what they were: the shorter side moves. */
void ms_pieces_close_gap(struct proc *p, size_t from, size_t to);

/* Frees p's pieces. */
void ms_pieces_release(struct proc *p);

/* Makes [start, end) a run of whole pieces, [*i, *j). 0 or -ENOMEM. */
int ms_pieces_carve(struct proc *p, uint64_t start, uint64_t end, size_t *i, size_t *j);

/* --- settle.c --- */

/* Notes that a change touched region: ms_pieces_settle() recomputes its extent. */
void ms_pieces_touch(struct ms_aspace *as, uint32_t region);

/* Recomputes the extents of the regions a change touched; ends those left with no pages. */
void ms_pieces_settle(struct ms_aspace *as, struct proc *p, uint64_t time);

/* Piece pc was put in, or cut: its size goes to its region's heap, if it keeps one. */
void ms_big_note(struct proc *p, const struct piece *pc);

/* Frees every heap of p's regions. */
void ms_big_drop_all(struct proc *p);

/* Region r ends at time (its last page gone), where it has not yet. */
void ms_region_end(struct ms_region *r, uint64_t time);

/* Unmaps [start, end) (only region `only`'s pages, unless it is -1), and settles. 0 or -ENOMEM. */
int ms_pieces_unmap(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end, int64_t only, uint64_t time);

/* The kernel VMA that piece i belongs to: its first and last pieces. */
void ms_pieces_vma(struct proc *p, size_t i, size_t *first, size_t *last);

/* Marks [start, end) as one kernel VMA, as an MMAP2 record or the VMA tree reported it. */
void ms_pieces_set_vma(struct proc *p, uint64_t start, uint64_t end);

/*
 * ms_pieces_carve() and ms_pieces_set_vma() of [start, end) where it is
 * the known VMA as its pieces lie (a VMA reported again, unchanged), with
 * what they would do done at once: true. false where it is not.
 */
bool ms_pieces_vma_again(struct proc *p, uint64_t start, uint64_t end);

/* The same for a VMA other than the known one, as its pieces already are: it becomes the known one. */
bool ms_pieces_vma_whole(struct proc *p, uint64_t start, uint64_t end);

/* Adds region r's pages in [start, end) where nothing is mapped (growth). 0 or -ENOMEM. */
int ms_pieces_fill(struct proc *p, uint64_t start, uint64_t end, const struct ms_region *r,
		   uint32_t prot, uint32_t flags, uint16_t vmflags);

/* Ends every region of p: an exec, an exit, a fork's child made anew. */
void ms_pieces_clear(struct ms_aspace *as, struct proc *p, uint64_t time);

/* Whether piece i (any index: past the last, none) holds addr. */
static inline bool piece_holds(const struct proc *p, size_t i, uint64_t addr)
{
	return i < p->n && p->p[i].start <= addr && addr < p->p[i].end;
}

/* The region at addr in p: the piece found last first, as samples cluster (p->hint is left at it). */
static inline const struct ms_region *find(const struct ms_aspace *as, struct proc *p, uint64_t addr)
{
	size_t i = p->hint;

	if (!piece_holds(p, i, addr)) {
		i = lower(p, addr);
		if (i == p->n || p->p[i].start > addr)
			return NULL;
		p->hint = i;
	}
	return as->regions[p->p[i].region];
}

/* --- vmarules.c --- */

/* Whether a fault in this piece makes its VMA's anon_vma: private, writable, none yet. */
static inline bool wants_anon(const struct piece *pc)
{
	return !pc->anon && (pc->prot & PROT_WRITE) && !(pc->flags & MAP_SHARED);
}

/* Whether a read fault in piece pc takes an anonymous page: pc's VMA is anonymous and may be read, none yet. */
bool ms_vma_read_fault_anon(const struct ms_aspace *as, const struct piece *pc);

/*
 * Whether a fault in this piece makes its VMA's anon_vma: wants_anon(),
 * or, where a read fault takes a page of its own, not the zero page
 * (as->read_fault_page), a read fault in an anonymous VMA too.
 */
static inline bool fault_makes_anon(const struct ms_aspace *as, const struct piece *pc)
{
	return wants_anon(pc) || (as->read_fault_page && ms_vma_read_fault_anon(as, pc));
}

/* One VMA has one anon_vma: after a merge, the one that had it gives it to the rest. */
void ms_vma_share_anon(struct proc *p, size_t i);

/* Piece k joins the VMA before it where the kernel would merge the two; they then share one anon_vma. */
void ms_vma_join_if_mergeable(struct ms_aspace *as, struct proc *p, size_t k);

/* vma_is_anonymous(): private memory of no file. */
bool ms_vma_is_anonymous(const struct ms_aspace *as, const struct piece *pc);

/* VM_NORESERVE and VM_ACCOUNT of a new map. */
uint16_t ms_vma_map_accounting(const struct ms_event_map *m);

/* madvise advice that changes VMA flags (other advice changes nothing here). 0 or -ENOMEM. */
int ms_vma_advise(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* mlock, munlock, mlockall, munlockall. 0 or -ENOMEM. */
int ms_vma_lock(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* mseal, mbind, set_mempolicy_home_node, userfaultfd, anon names (MS_EV_VMA_ATTR). 0 or -ENOMEM. */
int ms_vma_set_attr(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/*
 * The VMAs of [start, end) whose flags have (vmflags & mask) == want are
 * populated (faulted in by the kernel for the caller, no fault sample):
 * the write fault of each private writable one makes its anon_vma.
 */
void ms_vma_populate(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end, uint16_t mask,
		     uint16_t want);

/* Whether KSM may merge pc's VMA (ksm_compatible): not shared, not hugetlb, not [vdso] or [vvar]. */
bool ms_vma_ksm_may_merge(const struct ms_aspace *as, const struct piece *pc);

/* The first fault in piece i's VMA: it takes a neighbour's anon_vma, or a new one. */
void __attribute__((noinline)) ms_vma_make_anon(struct ms_aspace *as, struct proc *p, size_t i);

/*
 * shmdt: the VMAs of the attach at the address, where it put them; c
 * (may be NULL) says what went: the attach's region, from the first VMA
 * detached to the last. 0 or -ENOMEM.
 */
int ms_vma_shmdt(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c);

/* --- remap.c --- */

/* mremap ev applied to p's pieces, its regions settled. 0 or -ENOMEM. */
int ms_remap_apply(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* --- apply.c --- */

/*
 * ms_aspace_apply() for an event that is not a sample: *opp (may be NULL)
 * says what it did, and c (may be NULL; zeroed, with prot, advice and lock
 * -1) describes it, filled as the change is applied. 0 or -ENOMEM.
 */
int __attribute__((noinline)) ms_aspace_apply_event(struct ms_aspace *as, const struct ms_event *ev,
						    enum ms_aspace_op *opp, struct ms_change *c);

/* --- charge.c, stacks.c --- */

static inline void charge(struct ms_aspace *as, const struct ms_event *ev, const struct ms_region *r)
{
	if (as->listener.charge)
		as->listener.charge(as->ctx, ev, r);
}

/* An access event's range, charged to the regions it overlaps now (and where none is, to none). */
void ms_aspace_charge_access(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* Names the stack of ev's thread (not the main one) from its stack pointer, once. */
void __attribute__((noinline)) ms_stack_name_thread(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* Holds a fault just below [stack] for the growth record that follows it; false: charge it now. */
bool __attribute__((noinline)) ms_stack_defer_fault(struct ms_aspace *as, struct proc *p, const struct ms_event *ev);

/* A brk's result: where the break started and where it is, if an exec was seen (p->start_brk, p->brk). */
void ms_heap_note_brk(struct proc *p, const struct ms_event *ev);

/* The name /proc gives the VMA [start, end) of region r, named name: [heap] is that of the VMAs over the break's range. */
const char *ms_heap_vma_name(const struct proc *p, const struct ms_region *r, uint64_t start, uint64_t end,
			     const char *name);

/* The main thread's stack pointer: where the stack began, if not known yet (p->start_stack). */
void ms_stack_note_start(struct ms_aspace *as, struct proc *p, uint64_t sp);

/* The name /proc gives the VMA [start, end) of region r, named name: [stack] is that of one VMA alone. */
const char *ms_stack_vma_name(const struct proc *p, const struct ms_region *r, uint64_t start, uint64_t end,
			      const char *name);

/* Charges the fault of thread tid held back, if any. */
void ms_stack_resolve_pending(struct ms_aspace *as, uint32_t tid);

static inline void resolve_pending(struct ms_aspace *as, uint32_t tid)
{
	if (as->pending.len)              /* rare: the usual case is that nothing waits */
		ms_stack_resolve_pending(as, tid);
}

#endif
