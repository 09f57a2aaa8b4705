/*
 * struct ms_event: one normalised event of the stream, the only thing the
 * address-space model and the analyses see. Syscall entries and exits are
 * already paired, and each change carries its exact range.
 */
#ifndef MAPSCOPE_EVENT_H
#define MAPSCOPE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ms_event_kind {
	MS_EV_MAP,          /* a new mapping: map */
	MS_EV_UNMAP,        /* munmap, or the tail a brk shrink gives back: unmap */
	MS_EV_REMAP,        /* mremap: remap */
	MS_EV_PROTECT,      /* mprotect: protect */
	MS_EV_BRK,          /* the break moved: brk */
	MS_EV_STACK_GROW,   /* the main stack grew down: stack-grow */
	MS_EV_MADVISE,      /* madvise: pages released (DONTNEED, FREE, REMOVE) or hugepage advice */
	MS_EV_SHMDT,        /* a SysV segment detached: unmap */
	MS_EV_VMA,          /* the kernel's VMA boundary, for /proc-style output only */
	MS_EV_FORK,         /* a new process or thread: fork */
	MS_EV_EXEC,         /* exec: the process's map is reset: exec */
	MS_EV_COMM,         /* a thread's name */
	MS_EV_EXIT,         /* a thread or process ended: exit */
	MS_EV_SAMPLE,       /* a data address sample */
	MS_EV_LOST,         /* records the kernel could not write */
	MS_EV_MLOCK,        /* mlock, mlock2, munlock, mlockall, munlockall: lock */
	MS_EV_THREAD_SP,    /* a thread's user stack pointer (in sample.sp), which names its stack */
	MS_EV_ACCESS,       /* ongoing access to a range over one interval (accessed bits, DAMON): access */
	MS_EV_UNLINK,       /* a file's name was removed (unlink, or replaced by a rename): file */
	MS_EV_VMA_ATTR,     /* mseal, mbind, set_mempolicy_home_node, userfaultfd, prctl(PR_SET_VMA), a munmap
	                       refused at a sealed VMA: vma_attr;
	                       VMAs split and merge, no mapping changes */
	MS_EV_RENAME,       /* a path was renamed (rename, renameat, renameat2): rename */
};

/* What an MS_EV_VMA_ATTR sets on the VMAs of its range. */
enum ms_vma_attr {
	MS_VMA_SEAL = 1,    /* mseal: VM_SEALED */
	MS_VMA_POLICY,      /* mbind: the NUMA policy, value (mode | mode flags; 0: MPOL_DEFAULT, none) */
	MS_VMA_HOME_NODE,   /* set_mempolicy_home_node: value, the node, on VMAs with a BIND or PREFERRED_MANY policy */
	/* userfaultfd's UFFDIO_REGISTER (value: its mode, UFFDIO_REGISTER_MODE_*) and UFFDIO_UNREGISTER (value 0) */
	MS_VMA_UFFD,
	/*
	 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME): name (NULL: none), shown as
	 * [anon:NAME]; on anonymous VMAs only, stopping at the first file's
	 * (-EBADF) after naming those before it.
	 */
	MS_VMA_ANON_NAME,
	/*
	 * munmap refused (-EPERM) at a sealed VMA in its range: nothing is
	 * unmapped, but the VMA holding start, not sealed itself, was split
	 * there (mm/vma.c, vms_gather_munmap_vmas). No value.
	 */
	MS_VMA_UNMAP_REFUSED,
	/*
	 * prctl(PR_SET_MEMORY_MERGE): value 1 sets VM_MERGEABLE on every VMA
	 * KSM may merge, and on each such one made from now on (kept across
	 * fork and exec); 0 clears it on every VMA. Whole VMAs: nothing splits
	 * or merges. The range is the whole address space.
	 */
	MS_VMA_MERGE_ANY,
};

/* Which evidence an MS_EV_ACCESS carries. */
enum ms_access_source {
	MS_ACCESS_REFERENCED = 1,  /* smaps Referenced: after clear_refs, per VMA (record --referenced) */
	MS_ACCESS_DAMON = 2,       /* damon:damon_aggregated, per DAMON region (record --damon) */
};

/* The lock state mlock gives a VMA (VM_LOCKED, VM_LOCKONFAULT). */
enum { MS_LOCK_LOCKED = 1, MS_LOCK_ONFAULT = 2 };

/* Where a MAP came from. */
enum ms_map_via {
	MS_VIA_UNKNOWN,     /* a file with no syscall records (perf record -d) */
	MS_VIA_KERNEL,      /* made by the kernel (exec, vdso) outside any syscall we follow */
	MS_VIA_MMAP,
	MS_VIA_SHMAT,
	MS_VIA_SYNTH,       /* read from /proc when recording began */
};

struct ms_event_map {
	uint64_t start, end;        /* the new mapping, exactly */
	uint64_t vma_start, vma_end;/* the kernel's VMA holding it (may be merged, larger) */
	uint64_t pgoff;             /* file offset of start, in bytes */
	uint32_t prot, flags;       /* PROT_*, MAP_SHARED/MAP_PRIVATE */
	uint32_t maj, min;
	uint64_t ino;
	const char *name;           /* as the kernel named it: "//anon", "[stack]", a path */
	enum ms_map_via via;
	bool fixed;                 /* MAP_FIXED: overlaps were replaced */
	bool noreserve;             /* MAP_NORESERVE: no swap reserved (VM_NORESERVE) */
	bool populate;              /* MAP_POPULATE (not MAP_NONBLOCK): faulted in before the call returned */
	const uint64_t *alloc_chain;/* user call chain of the creating syscall, or NULL */
	uint32_t alloc_chain_len;
	const uint64_t *alloc_stack;/* the top words of the user stack at that syscall, or NULL */
	uint32_t alloc_stack_len;
};

struct ms_event {
	enum ms_event_kind kind;
	uint64_t time;              /* ns, the recording's clock */
	uint32_t pid, tid, cpu;
	/* A change made by a syscall: its user call chain (record --call-graph fp), or NULL,
	 * and the top words of the user stack then (to find the wrapper's caller). */
	const uint64_t *chain;
	uint32_t chain_len;
	const uint64_t *stack;
	uint32_t stack_len;
	/* record --call-graph dwarf: the user registers (perf's order, uregs_mask says which) and
	 * the user stack from SP up, at that syscall or sample, for unwinding; a session's events
	 * carry them only where it takes allocation sites (symbols, and no ms_session_no_sites()). */
	const uint64_t *uregs;
	uint64_t uregs_mask;
	const unsigned char *ustack;
	uint32_t ustack_len;
	union {
		struct ms_event_map map;
		/*
		 * unmap: tree says that the range is the VMA tree's write of NULL
		 * (a call in flight when the recording began), which takes in the
		 * gaps beside what the call removed: the change is what was mapped.
		 */
		struct { uint64_t start, end; bool tree; } unmap;
		struct { uint64_t start, end; } vma;
		/*
		 * remap, madvise, mlock: tree says that the VMA tree's writes follow
		 * (MS_EV_VMA): they, not the kernel's merge rules, set the VMAs.
		 */
		struct { uint64_t old_start, old_end, new_start, new_end; uint32_t flags; bool tree; } remap;
		struct { uint64_t start, end; uint32_t prot; } protect;
		struct { uint64_t old_brk, new_brk, vma_start, vma_end; } brk;
		struct { uint64_t start, end; } stack_grow;
		struct { uint64_t start, end; uint32_t advice; bool tree; } madvise;
		/*
		 * [start, end) takes the lock state `lock` (MS_LOCK_*; 0: unlocked);
		 * all: every VMA does (mlockall with MCL_CURRENT, munlockall); def:
		 * what new maps get from now on (mlockall, munlockall), or -1.
		 * to_gap: the call failed at a gap in the range (-ENOMEM), having
		 * changed the VMAs before it only.
		 */
		struct { uint64_t start, end; uint32_t lock; bool all, tree, to_gap; int32_t def; } mlock;
		struct { uint64_t addr; } shmdt;
		/*
		 * share_vm: a second FORK of the same child, from the kernel's
		 * task:task_newtask, saying that it shares the parent's address
		 * space (clone(CLONE_VM) without CLONE_THREAD, vfork) instead of
		 * holding the copy the first made.
		 */
		struct { uint32_t child_pid, child_tid; bool share_vm; } fork;
		/* The file whose name went: /proc now names its maps "PATH (deleted)". */
		struct { uint32_t maj, min; uint64_t ino; } file;
		/* tree: the VMA tree's writes follow and set the VMAs (as for madvise). */
		struct { uint64_t start, end; enum ms_vma_attr what; uint32_t value; bool tree; const char *name; } vma_attr;
		/*
		 * old_path is new_path now (both absolute, as /proc prints them);
		 * what was new_path lost its name, or with exchange is old_path.
		 * files[0, nr_files): the (dev_t as the kernel has it, inode) of
		 * each file whose ctime the rename set, the renamed one among them;
		 * 0: not recorded, the paths alone decide.
		 */
		struct {
			const char *old_path, *new_path;
			bool exchange;
			uint32_t nr_files;
			const uint64_t (*files)[2];
		} rename;
		struct { const char *comm; } comm;     /* EXEC and COMM */
		struct {
			uint64_t addr, ip, sp;
			uint64_t data_src;      /* PERF_SAMPLE_DATA_SRC, 0 when absent */
			/* the events this sample stands for: PERIOD, else the event's fixed
			 * sample_period (record -c N); 0 when unknown (a frequency without PERIOD) */
			uint64_t period;
			uint64_t weight;        /* PERF_SAMPLE_WEIGHT: the access's cost in cycles (PEBS, IBS, SPE), 0 when absent */
			bool has_addr, has_sp;
			bool fault;             /* from a page-fault event */
			uint32_t evsel;                 /* index of the event that sampled */
			const uint64_t *chain;
			uint32_t chain_len;
		} sample;
		struct { uint64_t count; } lost;
		/*
		 * [start, end) of process pid over the interval_ns that ended at
		 * time. REFERENCED: referenced, rss, anon, anon_huge are smaps'
		 * bytes for that VMA. DAMON: nr_accesses (0..max_nr_accesses, how
		 * many of the interval's checks found the region accessed) and age
		 * (aggregation intervals it kept that count).
		 */
		struct {
			uint64_t start, end, interval_ns;
			uint64_t referenced, rss, anon, anon_huge;
			uint32_t nr_accesses, max_nr_accesses, age;
			enum ms_access_source source;
		} access;
	};
};

/*
 * A run of n samples of one event, side by side: sample i's fields lie at
 * base + i * stride + their offsets (addr, ip, time: 64 bits; pid: 32 bits,
 * the tid's 32 right after). The model hands runs this way to the
 * listener's charge_run. Where the event's samples have a fixed layout the
 * run lies over the recording's own bytes, unread until here; otherwise
 * over an array of ms_event (evs). Read the fields with ms_samples_addr()
 * and its kin, or a whole sample with ms_samples_event().
 */
struct ms_samples {
	const unsigned char *base;
	size_t n, stride;
	uint16_t addr, ip, time, pid;
	int16_t cpu, data_src;           /* 32 and 64 bits, or -1: absent (0) */
	int16_t period;                  /* 64 bits, or -1: every sample has proto->sample.period */
	int16_t weight;                  /* 64 bits (the low 32 with WEIGHT_STRUCT), or -1: absent (0) */
	bool weight_struct;
	const struct ms_event *evs;      /* base as an ms_event array, or NULL */
	const struct ms_event *proto;    /* where evs is NULL: what the samples share */
};

static inline uint64_t ms_samples_u64(const struct ms_samples *v, size_t i, size_t off)
{
	uint64_t x;

	memcpy(&x, v->base + i * v->stride + off, 8);
	return x;
}

static inline uint64_t ms_samples_addr(const struct ms_samples *v, size_t i)
{
	return ms_samples_u64(v, i, v->addr);
}

static inline uint64_t ms_samples_time(const struct ms_samples *v, size_t i)
{
	return ms_samples_u64(v, i, v->time);
}

static inline uint64_t ms_samples_ip(const struct ms_samples *v, size_t i)
{
	return ms_samples_u64(v, i, v->ip);
}

/* The events sample i stands for (struct ms_event's sample.period). */
static inline uint64_t ms_samples_period(const struct ms_samples *v, size_t i)
{
	return v->period >= 0 ? ms_samples_u64(v, i, (size_t)v->period) : v->proto->sample.period;
}

static inline uint32_t ms_samples_pid(const struct ms_samples *v, size_t i)
{
	return (uint32_t)ms_samples_u64(v, i, v->pid);
}

/* Samples [from, from + n) of v, as a run of their own. */
static inline struct ms_samples ms_samples_sub(const struct ms_samples *v, size_t from, size_t n)
{
	struct ms_samples w = *v;

	w.base += from * v->stride;
	w.n = n;
	if (w.evs)
		w.evs += from;
	return w;
}

/* evs[0, n) as a run. */
struct ms_samples ms_samples_of(const struct ms_event *evs, size_t n);

/* Sample i whole: &evs[i] where the run lies over events, else *tmp, filled. */
const struct ms_event *ms_samples_event(const struct ms_samples *v, size_t i, struct ms_event *tmp);

/* madvise's advice as the timeline prints it ("dontneed", "hugepage"), or NULL where unknown. */
const char *ms_event_advice_name(uint32_t advice);

/* Whether a data source (PERF_SAMPLE_DATA_SRC of hardware memory samples) says the access missed the TLB. */
static inline bool ms_data_src_tlb_miss(uint64_t data_src)
{
	return data_src && ((data_src >> PERF_MEM_TLB_SHIFT) & PERF_MEM_TLB_MISS);
}

/* Whether a sample's data source says the access missed the TLB. */
static inline bool ms_event_tlb_miss(const struct ms_event *ev)
{
	return ms_data_src_tlb_miss(ev->sample.data_src);
}

#ifdef __cplusplus
}
#endif
#endif
