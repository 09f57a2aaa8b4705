/*
 * Internal: the stream turns perf records into normalised events (struct
 * ms_event) in time order. It is built from an event list and tracing data
 * and knows no source: the session binds a file to it (ms_stream_run, with
 * a struct ms_stream_source) or pushes the live rings' records into it
 * (ms_stream_push, ms_stream_flush). Records of different CPUs are merged
 * by perf's FINISHED_ROUND rule; syscall tracepoint entries and exits are
 * paired per thread, and a change is emitted when its syscall succeeds,
 * with its exact range.
 */
#ifndef MAPSCOPE_STREAM_H
#define MAPSCOPE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include <mapscope/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_stream;
struct ms_evlist;

/* What the stream read, set aside and lost (so far, for pushed records). */
struct ms_stream_stats {
	uint64_t records;          /* data records read */
	uint64_t samples;          /* data-address samples emitted */
	uint64_t other_samples;    /* samples of events without a data address, tracepoints included */
	uint64_t zero_addr;        /* data samples at address 0, not accesses: set aside */
	uint64_t kernel_addr;      /* data samples at kernel addresses: set aside */
	uint64_t unknown_id;       /* samples whose id matches no event: dropped */
	uint64_t bad_samples;      /* samples that do not fit their record: dropped */
	uint64_t bad_records;      /* other records larger than their type can be: dropped */
	uint64_t unknown_records;  /* records of a type nobody defines, or none of the events writes: dropped */
	uint64_t bad_names;        /* MMAP and COMM names with no end inside their record: cut there */
	uint64_t lost;             /* records the kernel reported lost */
	uint64_t lost_first, lost_last;   /* the times of the first and last LOST records */
	uint32_t nr_lost_pids;     /* processes whose records were lost (ms_stream_lost_pid) */
	uint64_t out_of_order;     /* records that came after a later one was emitted */
	uint64_t first_time, last_time;
};

/* The records of one process that were lost. */
struct ms_stream_lost {
	uint32_t pid;
	uint64_t count, first, last;   /* records; the times of its first and last LOST record */
};

/* Called for each event; ev is valid during the call only. Non-zero stops the run. */
typedef int (*ms_stream_fn)(const struct ms_event *ev, void *ctx);

/*
 * Called, where set, with runs of data samples in place of fn for each:
 * run's samples in time order, valid during the call only, all of one
 * event (so of one layout: each has a stack pointer, or none does; a run
 * over the recording's bytes, run->evs NULL, has none), each with a user
 * address. It must do what fn would do for each in turn and return what
 * fn would have returned at the first non-zero (the samples after it are
 * dropped, as the run stops).
 */
typedef int (*ms_stream_samples_fn)(const struct ms_samples *run, void *ctx);

/*
 * Prepares a stream for the events of ev, whose tracepoints the tracing
 * data [tracing, tracing + len) describes (NULL, 0: none). ev stays the
 * caller's and must outlive the stream (the attrs are used in place); the
 * tracing data is read here only. copy: the records it is given are the
 * caller's during the call only (live rings), so those it holds are
 * copied. NULL with errno set; EBADMSG where there are no events.
 */
struct ms_stream *ms_stream_new(const struct ms_evlist *ev, const void *tracing, size_t len, bool copy);

/*
 * A source that holds its records until told (a file's reader): the one
 * reading protocol of lib/perfdata/reader.h, and its ctx.
 */
struct ms_stream_source {
	void *ctx;
	/* As ms_pdreader_span(): the first record whole and checked, the bytes after it not. */
	int (*span)(void *ctx, const void **start, size_t *len, uint64_t *off);
	void (*consume)(void *ctx, size_t len, size_t last);
	/* The records that start before byte offset upto are no longer needed. */
	void (*release)(void *ctx, uint64_t upto);
	/* The byte offset of a record taken, for what is logged. */
	uint64_t (*offset_of)(void *ctx, const void *rec);
	/*
	 * Where set: records' bytes in [lasting_lo, lasting_hi) stay as they
	 * are for as long as the stream's events are taken, released or not
	 * (a file's mapping), so a syscall's stack copy there is pointed at,
	 * not copied.
	 */
	const void *lasting_lo, *lasting_hi;
};

/*
 * Whether the n bytes at p lie where src's records stay as they are. As
 * numbers: p may be anywhere (a decompressed block above the mapping),
 * and both ends bound it.
 */
static inline bool ms_stream_lasting(const struct ms_stream_source *src, const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, lo, hi;

	if (!src || !src->lasting_lo)
		return false;
	lo = (uintptr_t)src->lasting_lo;
	hi = (uintptr_t)src->lasting_hi;
	return a >= lo && a <= hi && n <= hi - a;
}

/*
 * Reads every record of src and emits its events. 0 at the end of the
 * data; -EBADMSG if the data is corrupt (the events before the bad record
 * have been emitted; the cause is logged with its byte offset); or what fn
 * returned, or what src->span returned.
 */
int ms_stream_run(struct ms_stream *s, const struct ms_stream_source *src, ms_stream_fn fn, void *ctx);

/*
 * Has data samples of a fixed layout (the usual kind) handed over in runs
 * to fn, with the ctx of ms_stream_run, rather than one by one: a call per
 * run instead of per sample. NULL goes back to one by one. 0 or -ENOMEM.
 */
int ms_stream_set_samples_fn(struct ms_stream *s, ms_stream_samples_fn fn);

/* Queues one record (copied where the stream was made with copy). 0 or -ENOMEM. */
int ms_stream_push(struct ms_stream *s, const struct perf_event_header *rec);

/* Emits the queued records with time <= limit, in time order. 0 or what fn returned. */
int ms_stream_flush(struct ms_stream *s, uint64_t limit, ms_stream_fn fn, void *ctx);

/*
 * The source's records all lie in time order (its file says so): each
 * FINISHED_ROUND lets out everything before it, and nothing is held for
 * the round after, as perf's rule has it for rings that overlap in time.
 */
void ms_stream_set_in_order(struct ms_stream *s, bool in_order);

/*
 * Nothing will unwind the events' stacks: a syscall's user registers and
 * stack copy (record's, 4 KiB a mapping call) are not kept for its events.
 */
void ms_stream_set_no_stacks(struct ms_stream *s, bool no_stacks);

/* Whether the recording has the syscall records that make unmaps exact. */
bool ms_stream_has_syscalls(const struct ms_stream *s);
/*
 * A setting of the recording machine the file carries (mapscope:sysctl,
 * written by record: "vm.mmap_min_addr"), as read so far. 0, or -ENOENT
 * where the file has none of that name (perf's own files have none).
 */
int ms_stream_sysctl(const struct ms_stream *s, const char *name, uint64_t *value);

/* The settings of mapscope:sysctl a stream keeps: how many, and their names' longest (with the NUL). */
#define MS_STREAM_MAX_FACTS 8
#define MS_STREAM_FACT_NAME_MAX 64

/*
 * Those settings as read so far, a value to copy: a stream run on a
 * thread of its own hands a copy to its caller's thread where they
 * changed among its events (session/ahead.h). changes grows with each
 * setting written.
 */
struct ms_stream_facts {
	size_t n;
	uint64_t changes;
	struct { char name[MS_STREAM_FACT_NAME_MAX]; uint64_t value; } v[MS_STREAM_MAX_FACTS];
};

/* The stream's own, which it writes as it runs. */
const struct ms_stream_facts *ms_stream_facts(const struct ms_stream *s);
/* ms_stream_sysctl() in f. */
int ms_stream_facts_find(const struct ms_stream_facts *f, const char *name, uint64_t *value);
/*
 * Whether f says a read fault on private anonymous memory takes a page of
 * its own, not the zero page (MS_FACT_READ_ZERO_PAGE 0): false where f
 * has no such setting, as Linux does.
 */
bool ms_stream_facts_read_fault_page(const struct ms_stream_facts *f);
/*
 * A setting of the machine told as a mapscope:sysctl sample would tell it
 * (a live stream's, read on the machine itself): name, at most
 * MS_STREAM_FACT_NAME_MAX bytes with its NUL.
 */
void ms_stream_set_fact(struct ms_stream *s, const char *name, uint64_t value);

void ms_stream_stats(const struct ms_stream *s, struct ms_stream_stats *st);
/* The i-th process whose records were lost, in the order first seen: false past the last. */
bool ms_stream_lost_pid(const struct ms_stream *s, size_t i, struct ms_stream_lost *out);
/* All of them, a copy (malloc'd): NULL with *n 0 where there are none, or no memory for them. */
struct ms_stream_lost *ms_stream_lost_copy(const struct ms_stream *s, size_t *n);

/*
 * With on, s notes the index of each of those entries a LOST record makes
 * or changes, until ms_stream_lost_changes() takes them: for a thread that
 * hands the statistics on as they change, an entry a record, not the whole
 * list each time (a recording may name thousands of processes there).
 */
void ms_stream_note_lost_changes(struct ms_stream *s, bool on);
/* The indices noted since the last call, in *idx until s reads on (repeats possible); then none. */
size_t ms_stream_lost_changes(struct ms_stream *s, const size_t **idx);
/* Whether any are noted, not yet taken. */
bool ms_stream_lost_changed(const struct ms_stream *s);

/*
 * With on, a record other than the fast event's usual sample, and a
 * sample set aside (kernel or zero address), lets out the run of samples
 * gathered before it before it is counted, not only before the events it
 * makes: a replay stopped in that run (at an instant) reads statistics
 * that count nothing after it. Runs are shorter where such records come
 * between samples; off by default.
 */
void ms_stream_set_stats_in_order(struct ms_stream *s, bool on);

/* Accepts NULL. */
void ms_stream_free(struct ms_stream *s);

#ifdef __cplusplus
}
#endif
/*
 * Sets s's statistics (lost copied) to those a replay left, as an index
 * holds them, for a stream that is not run. Where the copy cannot be
 * made, the processes of the lost records are left out.
 */
void ms_stream_restore_stats(struct ms_stream *s, const struct ms_stream_stats *st,
			     const struct ms_stream_lost *lost, size_t nr_lost);

#endif
