/*
 * record --referenced: the sampler, and the tracepoint its figures travel
 * as. An interval is read and cleared per process, one after another, each
 * process's samples stamped with the time its smaps read began; the
 * interval is the time since its bits were last cleared.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/refsample.h"
#include "kernel/smaps.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/log.h"

/* Fields of the tracepoint's data, at their offsets in ms_referenced_record after raw_size. */
static const char format_fields[] =
	MS_TP_COMMON_FORMAT
	"\n"
	"\tfield:unsigned int pid;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long start;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long end;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long interval_ns;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long referenced;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long rss;\toffset:48;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long anon;\toffset:56;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long anon_huge;\toffset:64;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"pid=%u start=0x%lx end=0x%lx interval_ns=%lu referenced=%lu rss=%lu anon=%lu "
	"anon_huge=%lu\", REC->pid, REC->start, REC->end, REC->interval_ns, REC->referenced, REC->rss, "
	"REC->anon, REC->anon_huge\n";

_Static_assert(sizeof(struct ms_referenced_record) % 8 == 0, "a sample ends on 8 bytes");
_Static_assert(offsetof(struct ms_referenced_record, anon_huge) -
	       offsetof(struct ms_referenced_record, common_type) == 64, "the format's offsets");

void ms_referenced_attr(uint16_t tp_id, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = tp_id;
	a->sample_period = 1;
	/* As every mapscope event: IDENTIFIER first, TID and TIME; ADDR (0) as perf script -F addr wants. */
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	a->exclude_guest = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

void ms_referenced_format(uint16_t tp_id, struct ms_buf *out)
{
	ms_tp_format(MS_REFERENCED_EVENT, tp_id, format_fields, sizeof(format_fields) - 1, out);
}

void ms_referenced_encode(const struct ms_referenced *v, uint16_t tp_id, struct ms_referenced_record *out)
{
	memset(out, 0, sizeof(*out));
	out->header = (struct perf_event_header){ .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
						  .size = sizeof(*out) };
	out->identifier = MS_REFERENCED_ID;
	out->pid = out->tid = v->pid;
	out->time = v->time;
	out->raw_size = (uint32_t)(sizeof(*out) - offsetof(struct ms_referenced_record, common_type));
	out->common_type = tp_id;
	out->common_pid = (int32_t)v->pid;
	out->vma_pid = v->pid;
	out->start = v->start;
	out->end = v->end;
	out->interval_ns = v->interval_ns;
	out->referenced = v->referenced;
	out->rss = v->rss;
	out->anon = v->anon;
	out->anon_huge = v->anon_huge;
}

struct proc_state {
	pid_t pid;
	uint64_t cleared;            /* when its bits were last cleared */
};

struct ms_refsampler {
	const char *proc;
	uint64_t interval_ns, due;
	uint16_t tp_id;
	bool flush_tlb;              /* clearing the bits also flushes the TLB (no soft-dirty here) */
	struct proc_state *procs;
	size_t n, cap;
	struct ms_buf text;          /* smaps, read whole */
	/* The process being read, for each VMA's record. */
	struct ms_referenced cur;
	ms_live_fn fn;
	void *ctx;
};

struct ms_refsampler *ms_refsampler_new(const char *proc, uint64_t interval_ns, uint16_t tp_id)
{
	struct ms_refsampler *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->proc = proc;
	rs->interval_ns = interval_ns ? interval_ns : 100000000ULL;
	rs->tp_id = tp_id;
	rs->flush_tlb = !ms_smaps_kernel_has_soft_dirty();
	rs->due = ms_monotonic_ns() + rs->interval_ns;
	ms_buf_init(&rs->text);
	return rs;
}

int ms_refsampler_add(struct ms_refsampler *rs, pid_t tgid, uint64_t now)
{
	size_t i;
	int err;

	for (i = 0; i < rs->n; i++)
		if (rs->procs[i].pid == tgid)
			return 0;
	if ((err = ms_smaps_clear_refs(rs->proc, tgid, rs->flush_tlb)))
		return err;
	if (MS_GROW(rs->procs, rs->n + 1, rs->cap, 8, SIZE_MAX, false))
		return -ENOMEM;
	if (!rs->n)
		rs->due = now + rs->interval_ns;     /* the first process: its first interval is a whole one */
	rs->procs[rs->n++] = (struct proc_state){ tgid, now };
	return 0;
}

void ms_refsampler_remove(struct ms_refsampler *rs, pid_t tgid)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->procs[i].pid == tgid) {
			rs->procs[i] = rs->procs[--rs->n];
			return;
		}
}

uint64_t ms_refsampler_due(const struct ms_refsampler *rs)
{
	return rs->due;
}

static int on_vma(const struct ms_smaps_vma *v, void *ctx)
{
	struct ms_refsampler *rs = ctx;
	struct ms_referenced_record rec;

	rs->cur.start = v->start;
	rs->cur.end = v->end;
	rs->cur.referenced = v->referenced;
	rs->cur.rss = v->rss;
	rs->cur.anon = v->anon;
	rs->cur.anon_huge = v->anon_huge;
	ms_referenced_encode(&rs->cur, rs->tp_id, &rec);
	return rs->fn((const struct perf_event_header *)(const void *)&rec, rs->ctx);
}

/* One process's interval: its VMAs to fn, then its bits cleared. 0, 1 (it is gone), or fn's error. */
static int sample_one(struct ms_refsampler *rs, struct proc_state *p)
{
	int err;

	rs->cur = (struct ms_referenced){ .pid = (uint32_t)p->pid, .time = ms_monotonic_ns() };
	rs->cur.interval_ns = rs->cur.time - p->cleared;
	err = ms_smaps_read(rs->proc, p->pid, &rs->text, on_vma, rs);
	if (err == -ESRCH || err == -ENOENT)
		return 1;
	if (err == -EACCES || err == -EPERM || err == -ENOMEM) {
		ms_warn("cannot read the accessed bits of process %d: %s: it is sampled no more",
			(int)p->pid, strerror(-err));
		return 1;
	}
	if (err)
		return err;
	if (ms_smaps_clear_refs(rs->proc, p->pid, rs->flush_tlb))
		return 1;                    /* exited between the two */
	p->cleared = ms_monotonic_ns();
	return 0;
}

int ms_refsampler_tick(struct ms_refsampler *rs, uint64_t now, ms_live_fn fn, void *ctx)
{
	size_t i;
	int err;

	if (now < rs->due)
		return 0;
	rs->fn = fn;
	rs->ctx = ctx;
	for (i = 0; i < rs->n; ) {
		err = sample_one(rs, &rs->procs[i]);
		if (err < 0)
			return err;
		if (err == 1)
			rs->procs[i] = rs->procs[--rs->n];
		else
			i++;
	}
	/*
	 * The next from the clears: an interval is never shorter than asked,
	 * however long the reads took; a late tick makes no burst of short ones.
	 */
	rs->due = ms_monotonic_ns() + rs->interval_ns;
	return 0;
}

void ms_refsampler_free(struct ms_refsampler *rs)
{
	if (!rs)
		return;
	free(rs->procs);
	ms_buf_release(&rs->text);
	free(rs);
}
