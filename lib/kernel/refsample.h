/*
 * Internal: record --referenced. Per followed process, each interval, the
 * accessed bits are read back per VMA from smaps and cleared again
 * (kernel/smaps.h); each VMA's figures go into the recording as a sample
 * of a tracepoint the kernel does not have, mapscope:vma_referenced,
 * whose format travels in the TRACING_DATA like the kernel's, so that perf
 * script prints its fields. Its tracepoint id is one no recorded
 * tracepoint has, and its samples' IDENTIFIER one the kernel never gives.
 */
#ifndef MS_KERNEL_REFSAMPLE_H
#define MS_KERNEL_REFSAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include <mapscope/live.h>

#include "kernel/tpcommon.h"
#include "util/buf.h"

#define MS_REFERENCED_SYS "mapscope"
#define MS_REFERENCED_EVENT "vma_referenced"
#define MS_REFERENCED_NAME MS_REFERENCED_SYS ":" MS_REFERENCED_EVENT
/* The kernel numbers its events from 1 up: it never gets near this. */
#define MS_REFERENCED_ID ((1ULL << 62) | 0x6d73726566ULL)

/* What one sample says of one VMA over one interval; sizes in bytes. */
struct ms_referenced {
	uint32_t pid;
	uint64_t time;                 /* when smaps was read (CLOCK_MONOTONIC ns) */
	uint64_t start, end, interval_ns;
	uint64_t referenced, rss, anon, anon_huge;
};

/* A sample of the event as it lies in the recording: perf's layout, the tracepoint's data included. */
struct ms_referenced_record {
	MS_TP_SAMPLE_HEAD;
	/* The tracepoint's data (the format's offsets count from here). */
	MS_TP_COMMON_FIELDS;
	uint32_t vma_pid, pad;
	uint64_t start, end, interval_ns, referenced, rss, anon, anon_huge;
	uint32_t pad_raw;              /* the data padded so that the sample ends on 8 bytes */
} __attribute__((packed, aligned(8)));

/* The event's attr: a tracepoint's (type, id, the sample fields every mapscope event has). */
void ms_referenced_attr(uint16_t tp_id, struct perf_event_attr *a);

/* Appends the event's format file text, as tracefs would write it, with id tp_id. */
void ms_referenced_format(uint16_t tp_id, struct ms_buf *out);

/* v as a sample record of event tp_id. */
void ms_referenced_encode(const struct ms_referenced *v, uint16_t tp_id, struct ms_referenced_record *out);

struct ms_refsampler;

/* A sampler of the processes under proc ("/proc"), every interval_ns. NULL with errno. */
struct ms_refsampler *ms_refsampler_new(const char *proc, uint64_t interval_ns, uint16_t tp_id);

/* Follows tgid from now (now: CLOCK_MONOTONIC ns): its accessed bits are cleared. 0 or a negative errno. */
int ms_refsampler_add(struct ms_refsampler *rs, pid_t tgid, uint64_t now);

/* Stops following tgid (it exited). */
void ms_refsampler_remove(struct ms_refsampler *rs, pid_t tgid);

/* When the next interval ends (CLOCK_MONOTONIC ns). */
uint64_t ms_refsampler_due(const struct ms_refsampler *rs);

/*
 * Where an interval has ended by now: for each process, a record per VMA
 * to fn (stamped now), then its bits cleared. A process gone is dropped.
 * 0, or what fn returned.
 */
int ms_refsampler_tick(struct ms_refsampler *rs, uint64_t now, ms_live_fn fn, void *ctx);

/* Accepts NULL. */
void ms_refsampler_free(struct ms_refsampler *rs);

#endif
