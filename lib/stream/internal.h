/*
 * Internal to lib/stream: the stream's state, shared by its parts, one job
 * a file: stream.c takes records from a source or a push and feeds the
 * ordering; ordered.c puts records in time order; evsel.c knows the
 * events, finds a record's event and time; decode.c turns ordered records
 * into events and runs of samples; tracing.c parses the tracepoint formats
 * (TRACING_DATA) and tells which syscall an event follows; syscalls.c
 * pairs syscall entries and exits, with the maps the kernel writes between
 * them, into changes.
 */
#ifndef MS_STREAM_INTERNAL_H
#define MS_STREAM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "stream/ordered.h"
#include "stream/sample.h"
#include "stream/stream.h"
#include "util/u32map.h"

#define PAGE_ALIGN(x) (((x) + 4095) & ~4095ULL)
/* Past the largest user address space of any 64-bit Linux (x86 LA57: 2^56; arm64: 2^52). */
#define USER_END (1ULL << 57)
#define VSYSCALL_START 0xffffffffff600000ULL
#define IS_ERR_VALUE(x) ((x) >= (uint64_t)-4095)

enum { PERF_RECORD_FINISHED_ROUND_ = 68, PERF_RECORD_THREAD_MAP_ = 73, PERF_RECORD_CPU_MAP_ = 74,
       PERF_RECORD_FINISHED_INIT_ = 82 };
/*
 * The last record types the kernel and perf define (kernel 6.18's
 * CALLCHAIN_DEFERRED; perf's schedstat records), with room for a few
 * more: a record past them, or of type 0, is damage (a flipped type byte
 * turns a sample into one), counted and said, never skipped unseen.
 */
enum { STREAM_KERNEL_TYPE_LAST = 24, STREAM_PERF_TYPE_LAST = 90 };

enum sc { SC_MMAP, SC_MUNMAP, SC_MREMAP, SC_MPROTECT, SC_BRK, SC_MADVISE, SC_SHMAT, SC_SHMDT,
	  SC_MLOCK, SC_MLOCK2, SC_MUNLOCK, SC_MLOCKALL, SC_MUNLOCKALL,
	  SC_UNLINK, SC_UNLINKAT, SC_MSEAL, SC_MBIND, SC_HOME_NODE,
	  SC_IOCTL, SC_PRCTL, SC_RENAME, SC_RENAMEAT, SC_RENAMEAT2, SC_EXECVE, SC_EXECVEAT,
	  SC_IO_DESTROY, SC_PKEY_MPROTECT, SC_NR };

/* The syscalls followed, by enum sc: the name and the entry's argument fields. */
struct stream_syscall {
	const char *name;
	const char *args[5];
};
extern const struct stream_syscall stream_syscalls[SC_NR];

/* EK_ACCESS: mapscope:vma_referenced, record --referenced's accessed bits per VMA. */
/* EK_NEWTASK: task:task_newtask (a new task's clone flags); EK_CTIME: timestamp:inode_set_ctime_to_ts. */
/* EK_USTRING: mapscope:user_string, a string a syscall's entry pointed to, as record read it. */
/* EK_SYSCTL: mapscope:sysctl, a setting of the recording machine (vm.mmap_min_addr). */
/* EK_MMLOCK: mmap_lock:mmap_lock_acquire_returned (fields mm, write, success) or mmap_lock_released (mm, write). */
enum evkind { EK_OTHER, EK_DATA, EK_ENTER, EK_EXIT, EK_VMA_TREE, EK_ACCESS, EK_DAMON, EK_PREFETCH,
	      EK_NEWTASK, EK_CTIME, EK_USTRING, EK_SYSCTL, EK_MMLOCK };

struct evinfo {
	const struct perf_event_attr *attr;
	enum evkind kind;
	int time_off;                /* TIME's offset in a sample body, or -1 */
	int time_from_end;           /* TIME's offset back from a trailer's end, or -1 */
	enum sc sc;
	int nr_fields;
	uint16_t off[8], size[8];    /* from its format in the tracing data */
	struct ms_sample_layout lay; /* fixed offsets, where its samples have them */
	uint16_t fixed_size;         /* a data sample of this size decodes by lay; 0: never */
	bool fault;                  /* a page-fault software event */
	uint64_t period;             /* what a sample without PERIOD stands for: sample_period, 0 with a frequency */
};

struct pending_map {
	struct ms_event_map m;
	char *name;
	uint32_t pid;
};

struct thread {
	int sc;                       /* the open syscall, or -1 */
	uint64_t args[5];
	uint64_t *chain;
	uint32_t chain_len;
	size_t chain_cap;
	uint64_t stack[8];            /* the top of the user stack at the entry */
	uint32_t stack_len;
	uint64_t regs[32];            /* --call-graph dwarf: registers and stack at the entry */
	uint64_t regs_mask;
	unsigned char *ustack;        /* the copy, where the record's bytes do not last */
	const unsigned char *ustack_at;   /* the stack at the entry: the record's bytes, or the copy */
	uint32_t ustack_len;
	struct pending_map *maps;
	size_t nr_maps, cap_maps;
	uint64_t (*vmas)[2];          /* VMA tree writes in the open syscall: [start, end) */
	size_t nr_vmas, cap_vmas;
	uint64_t files[8][2];         /* in an open unlink or rename: the inodes whose ctime it set, (dev, ino) */
	uint32_t nr_files;
	char *strs[2];                /* in an open prctl or rename: its strings (mapscope:user_string), or NULL */
	bool entered;                 /* a followed entry of it was seen: no call of its is in flight unseen */
	uint32_t pid;                 /* the process of the open syscall */
	bool sp_told;                 /* a main thread's stack pointer told, since its exec (where its stack began) */
	bool unmapped;                /* its open munmap applied already: another thread's map overtook it */
	/*
	 * In an execve, before its exec: what the kernel maps and writes into a
	 * VMA tree then is the new program's stack, in the address space the
	 * exec will put in place (or drop, where it fails), not this one's.
	 */
	bool in_exec;
	uint32_t exec_pid;            /* in_exec: of this process (its exec's record names the leader, not this thread) */
	uint64_t locked_mm;           /* the mm whose write lock it holds (mmap_lock:*), or 0 (mmlock.c) */
	uint64_t outer_mm;            /* the one it holds too, locked_mm nested in it (a fork's), or 0 */
	uint64_t new_mm;              /* a fork's child's mm, locked nested, for its FORK record */
	bool wrote_tree;              /* a VMA tree write under locked_mm since it was taken */
};

/* A VMA tree write [start, end) in mm, whose process is not known yet (mmlock.c). */
struct stream_foreign {
	uint64_t mm, start, end;
};

/* An AIO ring of process pid at [start, end), mapped by io_setup. */
struct stream_aio {
	uint32_t pid;
	uint64_t start, end;
};

/* The VMA tree's write of NULL over [start, end) by a thread in a call whose entry was not seen (inflight.c). */
struct stream_hole {
	uint32_t pid, tid;
	uint64_t start, end;
};

struct idmap {
	uint64_t id;
	uint32_t evsel;
};

struct ms_stream {
	const struct ms_stream_source *src;   /* while ms_stream_run() reads one, or NULL */
	struct idmap *ids;            /* sorted by id */
	size_t nr_ids;
	int32_t *id_table;            /* the event of each id in [id_base, id_base + id_span), or -1 (evsel.c) */
	uint64_t id_base, id_span;
	struct evinfo *ev;
	size_t nr_ev;
	int id_pos;                   /* the id's offset in every sample body, or -1 */
	int id_from_end;              /* the id's offset back from every trailer's end, or -1 */
	bool has_syscalls;
	bool has_tree;                /* the file has the VMA tree's writes (maple_tree:ma_write) */
	bool has_enter[SC_NR], has_exit[SC_NR];   /* which halves of each syscall the file has */
	struct ms_ordered ord;
	/* With one event whose data samples have a fixed layout: their size and TIME's offset. */
	uint16_t fast_size;
	/*
	 * The event whose samples those are; multi: the file has others too,
	 * told apart by the IDENTIFIER every sample starts with (fast_id: the
	 * last id found to be the fast event's).
	 */
	int fast_ev;
	bool multi;
	uint64_t fast_id;
	int16_t fast_time;
	uint64_t next_flush, last_emitted;
	uint64_t round_off;           /* byte offset of the FINISHED_ROUND before the last one */
	bool in_order;                /* ms_stream_set_in_order() */
	bool no_stacks;               /* ms_stream_set_no_stacks() */
	/* normalising */
	struct ms_u32map threads;                 /* tid -> struct thread */
	struct ms_u32map brks;                    /* pid -> uint64_t* last break */
	struct stream_hole *holes;                /* in the order written; none but just after an attach */
	size_t nr_holes, cap_holes;
	struct ms_u32map mms;                     /* pid -> its mm, as its own calls locked it (mmlock.c) */
	struct stream_foreign *foreign;           /* writes waiting for their mm's process */
	size_t nr_foreign, cap_foreign;
	uint32_t *unmapping;                      /* tids whose munmap may be open (a stale one is passed over) */
	size_t nr_unmapping, cap_unmapping;
	struct stream_aio *aio;                   /* AIO rings mapped, until their io_destroy (unmaps.c) */
	size_t nr_aio, cap_aio;
	struct ms_stream_stats st;
	struct ms_stream_facts facts;             /* mapscope:sysctl's */
	struct ms_stream_lost *lost;              /* by process, in the order first seen */
	size_t cap_lost;
	size_t *lost_changed;                     /* ms_stream_note_lost_changes(): indices in lost since taken */
	size_t nr_lost_changed, cap_lost_changed;
	bool note_lost;
	bool stats_in_order;                      /* ms_stream_set_stats_in_order() */
	ms_stream_fn fn;
	void *ctx;
	struct ms_event sev;          /* a data sample's event: what never changes is set once */
	/* Runs of data samples for sfn, where it is set: at most BATCH, their fixed parts set once. */
	ms_stream_samples_fn sfn;
	struct ms_event *batch;
	size_t nbatch;
	/*
	 * Where the fast event's samples have an IP, TID, TIME and ADDR and no
	 * stack pointer, sfn gets its runs as they lie in the recording: view
	 * holds their layout (view.n 0: not so), vproto what they share.
	 */
	struct ms_samples view;
	struct ms_event vproto;
};

#define BATCH 64

int stream_flush_batch(struct ms_stream *s);

/* The samples gathered before ev go first, so that nothing goes out of order. */
static inline int emit(struct ms_stream *s, struct ms_event *ev)
{
	int err;

	if (s->nbatch && (err = stream_flush_batch(s)))
		return err;
	return s->fn(ev, s->ctx);
}

/* Where a record lies in its source, for what is logged: known only while a source is read (s->src). */
static inline uint64_t stream_offset_of(const struct ms_stream *s, const struct perf_event_header *rec)
{
	return s->src->offset_of(s->src->ctx, rec);
}

static inline void base_event(struct ms_event *ev, enum ms_event_kind k, const struct ms_sample *smp)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = k;
	ev->time = smp->time;
	ev->pid = smp->pid;
	ev->tid = smp->tid;
	ev->cpu = smp->cpu;
}

/* mmlock.c: whose VMA tree a write is in */
int stream_on_mmlock(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
int stream_tree_owner(struct ms_stream *s, struct thread *t, const struct ms_sample *smp, uint64_t start,
		      uint64_t end);
void stream_mm_forget(struct ms_stream *s, uint32_t pid);
void stream_mm_forked(struct ms_stream *s, uint32_t ptid, uint32_t ppid, uint32_t child);
void stream_mm_unlock(struct thread *t);
void stream_mm_lost(struct ms_stream *s);
void stream_mm_free(struct ms_stream *s);
/* The state of thread tid, made where there is none. NULL: no memory. */
struct thread *stream_thread_get(struct ms_stream *s, uint32_t tid);

/* inflight.c: syscalls in flight when the recording began */
int stream_hole_note(struct ms_stream *s, const struct ms_sample *smp, uint64_t start, uint64_t end);
/* A store into pid's tree over [start, end): no hole there any more. 0 or -ENOMEM. */
int stream_holes_cut(struct ms_stream *s, uint32_t pid, uint64_t start, uint64_t end);
/* Forgets the holes of thread tid of pid, or of every thread of pid where tid is 0. */
void stream_holes_drop(struct ms_stream *s, uint32_t pid, uint32_t tid);
/* The exit of an unmapping call of smp's thread, its entry unseen: its holes become unmaps. */
int stream_holes_unmap(struct ms_stream *s, const struct ms_sample *smp);

/* evsel.c */
/* The events of ev, classified (tracepoints by the tracing data td[0, len)). 0 or -errno. */
int stream_setup_evsels(struct ms_stream *s, const struct ms_evlist *ev, const void *td, size_t len);
/* The event of a sample (-1: none), and of another record's trailer (the first where not known). */
int stream_sample_evsel(struct ms_stream *s, const struct perf_event_header *rec);
int stream_trailer_evsel(struct ms_stream *s, const struct perf_event_header *rec);
bool stream_fast_id_slow(struct ms_stream *s, uint64_t id);
uint64_t stream_record_time_slow(struct ms_stream *s, const struct perf_event_header *rec);

/* Whether rec is a sample of the fast event: its size, and where the file has other events, its id. */
static inline bool fast_sample(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t id;

	if (rec->size != s->fast_size || rec->type != PERF_RECORD_SAMPLE)
		return false;
	if (!s->multi)
		return true;
	memcpy(&id, rec + 1, 8);
	return id == s->fast_id || stream_fast_id_slow(s, id);
}

/* The time a record is ordered by; the usual case, a sample of the only event, inline. */
static inline uint64_t record_time(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t t;

	if (fast_sample(s, rec)) {
		memcpy(&t, (const char *)rec + s->fast_time, 8);
		return t;
	}
	return stream_record_time_slow(s, rec);
}

/* decode.c */
/* Emits the ordered records with time <= limit. 0 or what fn returned. */
int stream_flush(struct ms_stream *s, uint64_t limit);
/* Counts a record of a type nobody defines, and says where the first few lie (off: its offset). */
void stream_unknown_record(struct ms_stream *s, const struct perf_event_header *rec, uint64_t off);
/*
 * A name in a record (MMAP's file, COMM's comm) from name up to the
 * sample_id trailer the record ends with (end: where the trailer
 * begins), copied; one with no NUL before the trailer is cut there,
 * counted and said, never read into the trailer. NULL: no memory.
 */
char *stream_record_name(struct ms_stream *s, const struct perf_event_header *rec, const char *name,
			 const char *end);

/* tracing.c */
/*
 * Each tracepoint event of s->ev (attrs set) is classified by its format in
 * the tracing data td[0, len): a syscall's entry or exit, or the VMA tree's
 * writes. Damage is warned of. 0 or -ENOMEM.
 */
int stream_classify_tracepoints(struct ms_stream *s, const void *td, size_t len);

/* syscalls.c: a syscall tracepoint's sample, a VMA tree write, a thread's stack pointer, an MMAP2. */
int stream_on_syscall(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
int stream_on_vma_tree(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
/* Field k of a tracepoint sample as its format places it (4 bytes: signed), 0 where it does not fit. */
uint64_t stream_field(const struct evinfo *ei, const struct ms_sample *smp, int k);

/* lifecycle.c */
int stream_on_newtask(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
int stream_on_ctime(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
/* mapscope:user_string, in thread's open prctl or rename: the string it pointed to. 0 or -ENOMEM. */
int stream_on_ustring(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
/* At a userfaultfd (un)register's entry: its range and mode, from the user stack the sample copied. */
void stream_uffd_enter(struct thread *t, const struct ms_sample *smp);
/* The exit (result ret) of thread t's unlink, rename, uffd ioctl or prctl: what it changed. 0 or -errno. */
int stream_lifecycle_exit(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret);
/* The exit of thread t's mlock family call (result ret): the lock change. 0 or -errno. */
int stream_exit_mlock(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret);
/* The exit of thread t's mseal, mbind or set_mempolicy_home_node that succeeded: the attribute set. */
int stream_exit_vma_attr(struct ms_stream *s, const struct ms_sample *smp, struct thread *t);

/* A change of a syscall's thread t, with its call chain and stack; the VMA tree's writes t holds (syscalls.c). */
int stream_emit_with_chain(struct ms_stream *s, struct thread *t, struct ms_event *ev);
int stream_emit_vma_writes(struct ms_stream *s, const struct ms_sample *smp, struct thread *t);

/* Unmaps that a syscall's exit does not place (unmaps.c): a munmap overtaken, io_destroy's ring. */
int stream_unmapping_open(struct ms_stream *s, const struct thread *t, uint32_t tid);
void stream_unmapping_closed(struct ms_stream *s, uint32_t tid);
int stream_unmaps_overtaken(struct ms_stream *s, const struct ms_sample *smp, uint64_t start, uint64_t end);
/* The change of thread tid's munmap, or of its mremap, its memory now at to. */
int stream_emit_unmap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint32_t tid);
int stream_emit_remap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint32_t tid, uint64_t to);
int stream_aio_note(struct ms_stream *s, const struct pending_map *pm);
int stream_aio_destroyed(struct ms_stream *s, const struct ms_sample *smp, struct thread *t);
void stream_unmaps_free(struct ms_stream *s);
int stream_thread_sp(struct ms_stream *s, const struct ms_sample *smp);
int stream_on_mmap(struct ms_stream *s, const struct perf_event_header *rec, const struct ms_sample *smp);
/* damonagg.c: damon:damon_aggregated, known by its format (find reads f's fields), and its samples. */
bool stream_classify_damon(struct evinfo *ei, const char *sys, const char *name,
			   bool (*find)(const void *f, const char *field, uint16_t *off, uint16_t *size),
			   const void *f);
int stream_on_damon(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
/* sysfacts.c: mapscope:sysctl, known by its format (as damon's), and its samples: the settings kept. */
bool stream_classify_sysctl(struct evinfo *ei, const char *sys, const char *name,
			    bool (*find)(const void *f, const char *field, uint16_t *off, uint16_t *size),
			    const void *f);
int stream_on_sysctl(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
/* pfprobe.c: a prefetch's uprobe (record --prefetches), known by its group and fields; its sample's address. */
bool stream_classify_prefetch(struct evinfo *ei, const char *sys,
			      bool (*find)(const void *f, const char *field, uint16_t *off, uint16_t *size),
			      const void *f);
void stream_prefetch_address(const struct evinfo *ei, struct ms_sample *smp);
/* At the end: the maps of syscalls whose exit never came go out as the kernel's. */
int stream_flush_threads(struct ms_stream *s);

/* Process pid exec'd (its COMM record): its threads' execve marks are cleared, whichever called it. */
void stream_exec_done(struct ms_stream *s, uint32_t pid);

/* referenced.c: a sample of mapscope:vma_referenced (EK_ACCESS; its fields in stream_referenced_fields order). */
extern const char *const stream_referenced_fields[8];
int stream_on_referenced(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp);
/* A thread ended, or the stream does: its state goes. */
void stream_thread_gone(struct ms_stream *s, uint32_t pid, uint32_t tid);
void stream_free_threads(struct ms_stream *s);

#endif
