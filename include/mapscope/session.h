/*
 * struct ms_session: the pipeline that replays a recording, in one object.
 * It owns the file reader, the stream and the address-space model, and
 * fans what the model does out to any number of analyses, each a small
 * ops table (struct ms_analysis): report, hugepages and unmapped are three
 * (ms_report_analysis, ms_hugepages_analysis, ms_unmapped_analysis), and
 * one pass can run them all. Symbols and the time window are resolved
 * once, here, for every analysis.
 *
 *	struct ms_session *s = ms_session_open("mapscope.data", NULL);
 *	struct ms_report *rep = ms_report_new(NULL);
 *	ms_session_add(s, &ms_report_analysis, rep);
 *	ms_session_run(s);
 *	... ms_report_rows(rep, ms_session_aspace(s), ...) ...
 *
 * Nothing here prints; errors come back as negative errno values, and the
 * library's log callback (mapscope/log.h) hears warnings.
 */
#ifndef MAPSCOPE_SESSION_H
#define MAPSCOPE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_session;
struct perf_event_header;
struct ms_pdreader;
struct ms_symbols;

/* An analysis: every callback is optional; ctx is what ms_session_add() was given. */
struct ms_analysis {
	const char *name;
	/*
	 * Each event before the model applies it; samples too only with
	 * MS_ANALYSIS_SEES_SAMPLES (otherwise samples go to the model in runs).
	 * Non-zero stops the run: 1 quietly (what was wanted is known), a
	 * negative errno as an error.
	 */
	int (*event)(void *ctx, struct ms_session *s, const struct ms_event *ev);
	/* A sample the model charged to r (NULL: no mapping held its address). */
	void (*charge)(void *ctx, const struct ms_event *sample, const struct ms_region *r);
	/*
	 * Optional: a run of samples, all to r (never NULL), in place of charge;
	 * of one process, in one stretch of r with one protection (as the
	 * model's listener has it, mapscope/aspace.h).
	 */
	void (*charge_run)(void *ctx, const struct ms_samples *run, const struct ms_region *r);
	/* After the model made a change: c describes it, c->region is the region it made or changed. */
	int (*change)(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c);
	/* Once, as the run begins: the session's objects are there to keep. */
	void (*begin)(void *ctx, struct ms_session *s);
	/* Once, when the first event's time is known and the window is resolved. */
	void (*start)(void *ctx, struct ms_session *s);
	/* Once, at the end of the recording, after the model charged what waited. */
	void (*finish)(void *ctx, struct ms_session *s);
	unsigned int flags;
	/*
	 * Ongoing access (MS_EV_ACCESS: accessed bits, DAMON) the model
	 * charged to r, the overlap of ev's range with it at ev's instant
	 * being [start, end); r NULL: a stretch where nothing was mapped. A
	 * range over several regions comes once per region, so a figure for
	 * the whole range (ev->access.referenced) is the analysis's to share.
	 */
	void (*access)(void *ctx, const struct ms_event *ev, const struct ms_region *r, uint64_t start, uint64_t end);
};

#define MS_ANALYSIS_SEES_SAMPLES (1u << 0)
/* It names code or allocation sites: the session follows the binaries (as opts.symbols asks). */
#define MS_ANALYSIS_NEEDS_SYMBOLS (1u << 1)

struct ms_session_opts {
	/* Follow the binaries each process maps, for ms_session_symbols(). */
	bool symbols;
	/*
	 * The time window the analyses are asked to keep to (ms_session_window):
	 * nanoseconds on the recording's clock, or from its first event where
	 * *_rel is set; to UINT64_MAX: to the end.
	 */
	uint64_t from_ns, to_ns;
	bool from_rel, to_rel;
};

/* Opens a recording (a file, or "-" for a pipe on stdin). opts may be NULL. NULL with errno set. */
struct ms_session *ms_session_open(const char *path, const struct ms_session_opts *opts);

/*
 * The same pipeline over live ring buffers (mapscope/live.h; the caller
 * keeps l, and drains it): records go in with ms_session_push(), and
 * ms_session_flush() sends what is queued through the model and the
 * analyses. NULL with errno set.
 */
struct ms_live;
struct ms_session *ms_session_open_live(struct ms_live *l);
/* Queues one record (a drained ring's; copied). 0 or a negative errno. */
int ms_session_push(struct ms_session *s, const struct perf_event_header *rec);
/*
 * Sends the queued records up to time limit (UINT64_MAX: all) through the
 * model and the analyses, in time order. 0, or what an analysis or the
 * model returned.
 */
int ms_session_flush(struct ms_session *s, uint64_t limit);

/*
 * With symbols: name code only, from the start of the replay. No region's
 * allocation site is taken (no mmap's stack is unwound), and
 * ms_session_alloc_site() and its kin answer as for a region made with
 * none, and events carry no registers or stack copy to unwind; an
 * analysis added with MS_ANALYSIS_NEEDS_SYMBOLS, before or after, has
 * them taken all the same. For a caller that prints code but never sites
 * (mapscope unmapped). 0, or -EBUSY once the replay has begun.
 */
int ms_session_no_sites(struct ms_session *s);

/*
 * Names the allocation sites, and where chains their call chains as text,
 * on a thread of the session's own while the replay goes on, with symbols
 * of its own (where the process may run on two CPUs or more and hold
 * 4096 descriptors, and MAPSCOPE_NAMER is not "off"):
 * ms_session_alloc_site() then seldom waits.
 * The answers are the same. For a caller whose analyses name nothing else
 * through ms_session_symbols() (mapscope report --children 0): the thread
 * reads the binaries the sites lie in again, and where the caller names
 * code in them too, both hold them. 0, or -EBUSY once the replay has begun.
 */
int ms_session_sites_aside(struct ms_session *s, bool chains);

/* Adds an analysis (a[0] is not copied: keep it alive). 0 or -ENOMEM; at most 16. */
int ms_session_add(struct ms_session *s, const struct ms_analysis *a, void *ctx);

/*
 * Replays the whole recording through the model and the analyses. 0 at
 * the end; 1 when an analysis stopped it; -EBADMSG when the data ended in a
 * damaged record (what came before was replayed: ms_session_corrupt()
 * says so); another negative errno on failure.
 */
int ms_session_run(struct ms_session *s);

struct ms_aspace *ms_session_aspace(const struct ms_session *s);
struct ms_pdreader *ms_session_reader(const struct ms_session *s);

/* What the replay read, set aside and lost (so far, for a live session). */
struct ms_session_stats {
	uint64_t records;          /* data records read */
	uint64_t samples;          /* data-address samples emitted */
	uint64_t other_samples;    /* samples of events without a data address, tracepoints included */
	uint64_t zero_addr;        /* data samples at address 0, not accesses: set aside */
	uint64_t kernel_addr;      /* data samples at kernel addresses: set aside */
	uint64_t unknown_id;       /* samples whose id matches no event: dropped */
	uint64_t bad_samples;      /* samples that do not fit their record: dropped */
	uint64_t bad_records;      /* other records larger than their type can be: dropped */
	uint64_t lost;             /* records the kernel reported lost */
	uint64_t lost_first, lost_last;   /* the times of the first and last LOST records */
	uint32_t nr_lost_pids;     /* processes whose records were lost: ms_session_lost_pid() names them */
	uint64_t out_of_order;     /* records that came after a later one was emitted */
	uint64_t first_time, last_time;
	/* Appended, so that the fields above keep their places. */
	uint64_t unknown_records;  /* records of a type nobody defines, or none of the events writes: dropped */
	uint64_t bad_names;        /* MMAP and COMM names with no end inside their record: cut there */
};

void ms_session_stats(const struct ms_session *s, struct ms_session_stats *st);

/*
 * The LOST records that name one process: their count, the times of the
 * first and last. The kernel names the task that wrote the next record once
 * the ring had room, not the one whose records were dropped: a CPU's ring is
 * shared by every process traced, so the records lost may be any process's.
 */
struct ms_session_lost {
	uint32_t pid;
	uint64_t count, first, last;
};

/* The i-th process LOST records name, in the order first seen: false past the last. */
bool ms_session_lost_pid(const struct ms_session *s, size_t i, struct ms_session_lost *out);

/* Whether the recording has the syscalls (munmap, mremap...) and so its unmaps: perf record -d's has not. */
bool ms_session_has_syscalls(const struct ms_session *s);
/*
 * A setting of the recording machine, by sysctl's name
 * ("vm.mmap_min_addr"), as mapscope record wrote it into the recording
 * (its first records): 0, or -ENOENT where the recording has none of that
 * name (perf's own files, older mapscope recordings).
 */
int ms_session_sysctl(const struct ms_session *s, const char *name, uint64_t *value);
/* The symbols, following the binaries as the replay goes (opts.symbols), or NULL. */
struct ms_symbols *ms_session_symbols(const struct ms_session *s);

/*
 * With symbols: the function that made region r (the first frame of its
 * creating syscall's call chain outside the C library and the loader),
 * and that chain as text ("f+0x1 <- g+0x2 <- ..."). Named once, here, when
 * the region is made, while its process's binaries are known: from the
 * frame-pointer chain, or unwound from the copied stack (--call-graph
 * dwarf). NULL where the recording has no chain or the session no symbols.
 */
const char *ms_session_alloc_site(const struct ms_session *s, const struct ms_region *r);
const char *ms_session_alloc_chain(const struct ms_session *s, const struct ms_region *r);

/*
 * The user code addresses of r's creating call chain, innermost first
 * (return addresses, as the frame-pointer chain or the DWARF unwinding of
 * the copied stack gave them; no perf context markers): *ips points at
 * them, borrowed from s for its life. Returns how many; 0 with *ips NULL
 * where the chain is unknown.
 */
size_t ms_session_alloc_ips(const struct ms_session *s, const struct ms_region *r, const uint64_t **ips);

/* The time of the first event with one, or 0 before it. */
uint64_t ms_session_first_time(const struct ms_session *s);

/*
 * The window, with relative ends resolved once the first time is known;
 * false where the session was given none (all of the recording).
 */
bool ms_session_window(const struct ms_session *s, uint64_t *from_ns, uint64_t *to_ns);

/* Whether the data ended in a damaged record. */
bool ms_session_corrupt(const struct ms_session *s);

void ms_session_free(struct ms_session *s);

#ifdef __cplusplus
}
#endif
#endif
