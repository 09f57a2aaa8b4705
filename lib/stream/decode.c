/*
 * Ordered records -> events. A sample of the one fixed-layout data event
 * is read at its fixed offsets, in runs (gathered into struct ms_event, or
 * handed on as views over the recording's bytes); any other record is
 * parsed whole. Syscall samples, MMAP2 records and the VMA tree's writes
 * go to syscalls.c, which pairs them into changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perfdata/evlist.h"
#include "stream/internal.h"
#include "util/buf.h"
#include "util/grow.h"
#include "util/log.h"

MS_EXPORT const char *ms_event_advice_name(uint32_t advice)
{
	static const char *const names[] = {
		[MADV_NORMAL] = "normal", [MADV_RANDOM] = "random", [MADV_SEQUENTIAL] = "sequential",
		[MADV_WILLNEED] = "willneed", [MADV_DONTNEED] = "dontneed", [MADV_FREE] = "free",
		[MADV_REMOVE] = "remove", [MADV_DONTFORK] = "dontfork", [MADV_DOFORK] = "dofork",
		[MADV_MERGEABLE] = "mergeable", [MADV_UNMERGEABLE] = "unmergeable",
		[MADV_HUGEPAGE] = "hugepage", [MADV_NOHUGEPAGE] = "nohugepage",
		[MADV_DONTDUMP] = "dontdump", [MADV_DODUMP] = "dodump", [MADV_WIPEONFORK] = "wipeonfork",
		[MADV_KEEPONFORK] = "keeponfork", [20] = "cold", [21] = "pageout",
		[22] = "populate_read", [23] = "populate_write", [24] = "dontneed_locked", [25] = "collapse",
	};

	return advice < sizeof(names) / sizeof(names[0]) ? names[advice] : NULL;
}

/* --- normalising --------------------------------------------------------- */

static inline uint64_t run_time(const struct ms_stream *s, const unsigned char *rec)
{
	uint64_t t;

	memcpy(&t, rec + s->fast_time, 8);
	return t;
}

static inline uint64_t load64(const struct perf_event_header *rec, int off)
{
	uint64_t v;

	memcpy(&v, (const char *)rec + off, 8);
	return v;
}

/*
 * Data addresses that are not user accesses: 0, which perf -d writes for
 * every event that has no address (and --call-graph dwarf recordings for
 * every sample), and kernel addresses (the top half of the address space),
 * from perf mem or PEBS. One compare finds both.
 */
static inline bool not_user(uint64_t addr)
{
	return __builtin_expect(addr - 1 >= (1ULL << 63) - 1, 0);
}

/*
 * Whether a sample at addr that not_user() found goes on all the same: 0
 * is a NULL pointer's access where the address is always the access's: a
 * page fault's, or a memory sample's whose data source names the access
 * (load, store, prefetch, exec). perf -d's cycles carry a data source too,
 * but "not available" (PERF_MEM_OP_NA), and 0 there means no address.
 */
static inline bool zero_kept(const struct evinfo *ei, uint64_t addr, uint64_t data_src)
{
	const uint64_t ops = PERF_MEM_OP_LOAD | PERF_MEM_OP_STORE | PERF_MEM_OP_PFETCH | PERF_MEM_OP_EXEC;

	return !addr && (ei->fault || (data_src >> PERF_MEM_OP_SHIFT & ops));
}

/* Counts a sample that not_user() sets aside. 0. */
static int __attribute__((noinline, cold)) set_aside(struct ms_stream *s, uint64_t addr)
{
	if (addr)
		s->st.kernel_addr++;
	else
		s->st.zero_addr++;
	return 0;
}

/* The same, with stats_in_order after the samples gathered before it go out: 0, or what sfn returned. */
static int __attribute__((noinline, cold)) set_aside_after(struct ms_stream *s, uint64_t addr)
{
	int err = s->stats_in_order && s->sfn && s->nbatch ? stream_flush_batch(s) : 0;

	return err ? err : set_aside(s, addr);
}

/* WEIGHT as it is, or WEIGHT_STRUCT's latency: its low 32 bits. */
static inline uint64_t sample_weight(const struct evinfo *ei, uint64_t w)
{
	return ei->attr->sample_type & PERF_SAMPLE_WEIGHT_STRUCT ? w & 0xffffffffu : w;
}

/* A data sample whose fields all lie at fixed offsets: loads, no walk over sample_type. */
int ms_stream_set_samples_fn(struct ms_stream *s, ms_stream_samples_fn fn)
{
	size_t i;

	if (fn && !s->batch) {
		s->batch = malloc(BATCH * sizeof(*s->batch));
		if (!s->batch)
			return -ENOMEM;
		for (i = 0; i < BATCH; i++)
			s->batch[i] = s->sev;         /* kind, NULL chains, has_addr */
	}
	s->sfn = fn;
	return 0;
}

/* Hands the samples gathered so far to sfn. 0 or what it returned. */
int stream_flush_batch(struct ms_stream *s)
{
	struct ms_samples v;
	size_t n = s->nbatch;

	if (!n)
		return 0;
	s->nbatch = 0;
	v = ms_samples_of(s->batch, n);
	return s->sfn(&v, s->ctx);
}

static inline __attribute__((always_inline)) int
on_fixed_sample(struct ms_stream *s, const struct evinfo *ei, int e, const struct perf_event_header *rec)
{
	const struct ms_sample_layout *l = &ei->lay;
	struct ms_event *ev;
	uint64_t v;
	int err;

	/* A run holds one event's samples, so one layout's (ms_stream_samples_fn). */
	if (s->sfn && s->nbatch && s->batch[s->nbatch - 1].sample.evsel != (uint32_t)e &&
	    (err = stream_flush_batch(s)))
		return err;
	ev = s->sfn ? &s->batch[s->nbatch] : &s->sev;   /* kind, NULL chains and has_addr are set already */

	ev->time = l->time >= 0 ? load64(rec, l->time) : 0;
	v = l->tid >= 0 ? load64(rec, l->tid) : 0;
	ev->pid = (uint32_t)v;
	ev->tid = (uint32_t)(v >> 32);
	ev->cpu = l->cpu >= 0 ? (uint32_t)load64(rec, l->cpu) : 0;
	ev->sample.addr = load64(rec, l->addr);
	if (not_user(ev->sample.addr) &&
	    !zero_kept(ei, ev->sample.addr, l->data_src >= 0 ? load64(rec, l->data_src) : 0))
		return set_aside_after(s, ev->sample.addr);
	ev->sample.period = l->period >= 0 ? load64(rec, l->period) : ei->period;
	ev->sample.ip = l->ip >= 0 ? load64(rec, l->ip) : 0;
	ev->sample.sp = l->sp >= 0 ? load64(rec, l->sp) : 0;
	ev->sample.has_sp = l->sp >= 0;
	ev->sample.data_src = l->data_src >= 0 ? load64(rec, l->data_src) : 0;
	ev->sample.weight = __builtin_expect(l->weight >= 0, 0) ? sample_weight(ei, load64(rec, l->weight)) : 0;
	ev->sample.fault = ei->fault;
	ev->sample.evsel = (uint32_t)e;
	s->st.samples++;
	if (!s->sfn)
		return emit(s, ev);
	return ++s->nbatch == BATCH ? stream_flush_batch(s) : 0;
}

/* Any other sample: a full parse. */
static int __attribute__((noinline)) on_parsed_sample(struct ms_stream *s, const struct evinfo *ei, int e,
							const struct perf_event_header *rec)
{
	struct ms_sample smp;
	struct ms_event ev;

	if (ms_sample_parse(ei->attr, rec, &smp)) {
		if (s->src)
			ms_warn("skipping a sample at byte offset %llu that does not fit its record",
				(unsigned long long)stream_offset_of(s, rec));
		s->st.bad_samples++;
		return 0;
	}
	/* Every field has a fixed size: a larger record is damage, which swallowed what followed it. */
	if (ei->lay.fixed && rec->size > ei->lay.size) {
		if (s->src)
			ms_warn("skipping a sample at byte offset %llu of %u bytes, where its event's are %u: "
				"the file is damaged there, and the records it covers are lost",
				(unsigned long long)stream_offset_of(s, rec), rec->size, ei->lay.size);
		s->st.bad_samples++;
		return 0;
	}
	if (ei->kind == EK_ENTER || ei->kind == EK_EXIT) {
		s->st.other_samples++;
		return stream_on_syscall(s, ei, &smp);
	}
	if (ei->kind == EK_VMA_TREE || ei->kind == EK_MMLOCK) {
		s->st.other_samples++;
		return ei->kind == EK_VMA_TREE ? stream_on_vma_tree(s, ei, &smp) : stream_on_mmlock(s, ei, &smp);
	}
	if (ei->kind == EK_ACCESS || ei->kind == EK_SYSCTL) {
		s->st.other_samples++;
		return ei->kind == EK_ACCESS ? stream_on_referenced(s, ei, &smp) : stream_on_sysctl(s, ei, &smp);
	}
	if (ei->kind == EK_DAMON)
		return stream_on_damon(s, ei, &smp);
	if (ei->kind == EK_NEWTASK || ei->kind == EK_CTIME || ei->kind == EK_USTRING) {
		s->st.other_samples++;
		return ei->kind == EK_NEWTASK ? stream_on_newtask(s, ei, &smp) : ei->kind == EK_CTIME ?
		       stream_on_ctime(s, ei, &smp) : stream_on_ustring(s, ei, &smp);
	}
	if (ei->kind == EK_PREFETCH)
		stream_prefetch_address(ei, &smp);
	if ((ei->kind != EK_DATA && ei->kind != EK_PREFETCH) || !smp.has_addr) {
		s->st.other_samples++;
		return smp.has_sp && smp.tid != smp.pid ? stream_thread_sp(s, &smp) : 0;
	}
	if (not_user(smp.addr) && !zero_kept(ei, smp.addr, smp.data_src))
		return set_aside_after(s, smp.addr);
	ev.kind = MS_EV_SAMPLE;
	ev.time = smp.time;
	ev.pid = smp.pid;
	ev.tid = smp.tid;
	ev.cpu = smp.cpu;
	ev.chain = ev.stack = NULL;
	ev.chain_len = ev.stack_len = 0;
	ev.uregs = NULL;
	ev.uregs_mask = 0;
	ev.ustack = NULL;
	ev.ustack_len = 0;
	/*
	 * The parser just stored these 8 bytes at a time: copying them 16 at a
	 * time (as the compiler would) stalls on store forwarding.
	 */
	ev.sample.addr = smp.addr;
	__asm__ volatile("" : : : "memory");
	ev.sample.ip = smp.ip;
	__asm__ volatile("" : : : "memory");
	ev.sample.sp = smp.sp;
	ev.sample.has_addr = true;
	ev.sample.has_sp = smp.has_sp;
	ev.sample.data_src = smp.data_src;
	ev.sample.weight = sample_weight(ei, smp.weight);
	ev.sample.fault = ei->fault;
	ev.sample.period = ei->attr->sample_type & PERF_SAMPLE_PERIOD ? smp.period : ei->period;
	ev.sample.evsel = (uint32_t)e;
	ev.sample.chain = smp.chain;
	ev.sample.chain_len = (uint32_t)smp.chain_len;
	s->st.samples++;
	return emit(s, &ev);
}

static int __attribute__((noinline)) on_sample(struct ms_stream *s, const struct perf_event_header *rec)
{
	int e = stream_sample_evsel(s, rec);
	const struct evinfo *ei;

	if (e < 0) {                     /* never charged to an event it does not belong to */
		s->st.unknown_id++;
		return 0;
	}
	ei = &s->ev[e];
	/* The size says the layout holds: with REGS_USER, abi 0 (no registers) makes it shorter. */
	if (rec->size == ei->fixed_size)
		return on_fixed_sample(s, ei, e, rec);
	return on_parsed_sample(s, ei, e, rec);
}

static int on_task(struct ms_stream *s, const struct perf_event_header *rec, const struct ms_sample *smp)
{
	uint32_t v[4];
	struct ms_event ev;

	if (rec->size < sizeof(*rec) + 16)
		return 0;
	memcpy(v, rec + 1, 16);          /* pid, ppid, tid, ptid */
	base_event(&ev, rec->type == PERF_RECORD_FORK ? MS_EV_FORK : MS_EV_EXIT, smp);
	if (ev.kind == MS_EV_FORK) {
		ev.pid = v[1];
		ev.tid = v[3];
		ev.fork.child_pid = v[0];
		ev.fork.child_tid = v[2];
		if (s->nr_holes)         /* what the fork wrote NULL over was the child's (inflight.c) */
			stream_holes_drop(s, v[1], v[3]);
		stream_mm_forked(s, v[3], v[1], v[0]);
	} else {
		ev.pid = v[0];
		ev.tid = v[2];
		stream_thread_gone(s, v[0], v[2]);
	}
	return emit(s, &ev);
}

/* Where a record's sample_id trailer begins. */
static const char *trailer_start(struct ms_stream *s, const struct perf_event_header *rec)
{
	size_t id = ms_sample_id_size(s->ev[stream_trailer_evsel(s, rec)].attr);

	return (const char *)rec + (rec->size > id ? rec->size - id : 0);
}

void stream_unknown_record(struct ms_stream *s, const struct perf_event_header *rec, uint64_t off)
{
	if (s->st.unknown_records++ < 8)
		ms_warn("skipping a record of type %u at byte offset %llu: it is of a type nobody defines, "
			"or one none of the file's events writes, so the file is damaged there, and the "
			"record is lost", rec->type, (unsigned long long)off);
}

char *stream_record_name(struct ms_stream *s, const struct perf_event_header *rec, const char *name,
			 const char *end)
{
	const char *nul = memchr(name, 0, (size_t)(end - name));

	if (!nul && s->st.bad_names++ < 8 && s->src)
		ms_warn("the name in a record of type %u at byte offset %llu has no end inside the record: "
			"it is read as far as the record allows, and may be wrong", rec->type,
			(unsigned long long)stream_offset_of(s, rec));
	return strndup(name, (size_t)((nul ? nul : end) - name));
}

static int on_comm(struct ms_stream *s, const struct perf_event_header *rec, const struct ms_sample *smp)
{
	const char *name = (const char *)(rec + 1) + 8;
	const char *end = trailer_start(s, rec);
	struct ms_event ev;
	uint64_t *brk;
	uint32_t v[2];
	char *comm;
	int err;

	if (end <= name)
		return 0;
	if (!(comm = stream_record_name(s, rec, name, end)))
		return -ENOMEM;
	memcpy(v, rec + 1, 8);
	base_event(&ev, (rec->misc & PERF_RECORD_MISC_COMM_EXEC) ? MS_EV_EXEC : MS_EV_COMM, smp);
	if (ev.kind == MS_EV_EXEC && (brk = ms_u32map_get(&s->brks, v[0])))
		*brk = 0;                /* a new image: its first brk starts from its own break */
	if (ev.kind == MS_EV_EXEC && s->nr_holes)
		stream_holes_drop(s, v[0], 0);   /* the old image's; the exec's own writes come after (inflight.c) */
	if (ev.kind == MS_EV_EXEC)
		stream_exec_done(s, v[0]);
	ev.pid = v[0];
	ev.tid = v[1];
	ev.comm.comm = comm;
	err = emit(s, &ev);
	free(comm);
	return err;
}

/*
 * A record larger than its type can be: the most a name (PATH_MAX, a
 * 16-byte comm) and the longest sample_id trailer (48 bytes) allow. Such a
 * size is damage, and the record swallowed those after it.
 */
static bool implausible(const struct perf_event_header *rec)
{
	const size_t trailer = 48;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return rec->size > sizeof(*rec) + 64 + 4096 + trailer;
	case PERF_RECORD_COMM:
		return rec->size > sizeof(*rec) + 8 + 16 + trailer;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return rec->size > sizeof(*rec) + 24 + trailer;
	case PERF_RECORD_LOST:
		return rec->size > sizeof(*rec) + 16 + trailer;
	}
	return false;
}

/*
 * Counts a LOST record against the process it names: the task that wrote the
 * next record once the ring had room, which need not be the one whose
 * records were dropped (the ring is the CPU's, shared by every process traced).
 */
static int note_lost(struct ms_stream *s, uint32_t pid, uint64_t count, uint64_t time)
{
	size_t i, n = s->st.nr_lost_pids;

	for (i = 0; i < n && s->lost[i].pid != pid; i++)
		;
	if (i == n) {
		if (MS_GROW(s->lost, n + 1, s->cap_lost, 8, SIZE_MAX, false))
			return -ENOMEM;
		s->lost[i] = (struct ms_stream_lost){ pid, 0, time, time };
		s->st.nr_lost_pids++;
	}
	s->lost[i].count += count;
	s->lost[i].last = time;
	if (s->note_lost) {
		if (MS_GROW(s->lost_changed, s->nr_lost_changed + 1, s->cap_lost_changed, 8, SIZE_MAX, false))
			return -ENOMEM;
		s->lost_changed[s->nr_lost_changed++] = i;
	}
	return 0;
}

/*
 * Whether any event of the file asked for records of this type: the kernel
 * writes a READ, a context switch or a text-poke record only for an event
 * whose attr asks for it, and AUX, ITRACE_START and AUX_OUTPUT_HW_ID only
 * for an event of an AUX-area PMU (a type of its own: intel_pt, cs_etm)
 * or one that asks for aux_output; perf never makes one up, so such a record in
 * a file none of whose events did is damage (a flipped type byte makes a
 * sample a READ). Namespace, ksymbol, BPF and cgroup records perf writes
 * itself at the start, whatever the attrs say: those, and the other
 * types, any file may have.
 */
static bool written_by_events(const struct ms_stream *s, uint32_t type)
{
	const struct perf_event_attr *a;
	size_t i;

	for (i = 0; i < s->nr_ev; i++) {
		a = s->ev[i].attr;
		switch (type) {
		case PERF_RECORD_READ:
			if (a->inherit_stat)
				return true;
			break;
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE:
			if (a->context_switch)
				return true;
			break;
		case PERF_RECORD_TEXT_POKE:
			if (a->text_poke)
				return true;
			break;
		case PERF_RECORD_AUX:              /* an AUX area: a PMU of its own (intel_pt, cs_etm, ...) */
		case PERF_RECORD_ITRACE_START:
		case PERF_RECORD_AUX_OUTPUT_HW_ID:
			if (a->type >= PERF_TYPE_MAX || a->aux_output)
				return true;
			break;
		default:
			return true;
		}
	}
	return false;
}

static int __attribute__((noinline)) dispatch_other(struct ms_stream *s, const struct perf_event_header *rec,
						   uint64_t time)
{
	struct ms_sample smp;
	struct ms_event ev;
	uint64_t lost;

	if (implausible(rec)) {
		if (s->src)
			ms_warn("skipping a record of type %u at byte offset %llu: its size, %u bytes, is more "
				"than that type ever has; the file is damaged there, and the records it covers "
				"are lost", rec->type, (unsigned long long)stream_offset_of(s, rec),
				rec->size);
		s->st.bad_records++;
		return 0;
	}
	if (ms_sample_parse_id(s->ev[stream_trailer_evsel(s, rec)].attr, rec, &smp))
		memset(&smp, 0, sizeof(smp));
	smp.time = time;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return stream_on_mmap(s, rec, &smp);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return on_task(s, rec, &smp);
	case PERF_RECORD_COMM:
		return on_comm(s, rec, &smp);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (rec->size < sizeof(*rec) + (rec->type == PERF_RECORD_LOST ? 16 : 8))
			return 0;
		memcpy(&lost, (const char *)(rec + 1) + (rec->type == PERF_RECORD_LOST ? 8 : 0), 8);
		s->st.lost += lost;
		if (!s->st.lost_first)
			s->st.lost_first = smp.time;
		s->st.lost_last = smp.time;
		if (note_lost(s, smp.pid, lost, smp.time))
			return -ENOMEM;
		stream_mm_lost(s);
		base_event(&ev, MS_EV_LOST, &smp);
		ev.lost.count = lost;
		return emit(s, &ev);
	}
	if (!rec->type || rec->type > STREAM_KERNEL_TYPE_LAST || !written_by_events(s, rec->type))
		stream_unknown_record(s, rec, s->src ? stream_offset_of(s, rec) : 0);
	return 0;
}

/* Anything but a fixed-layout sample goes out after the samples gathered before it. */
static inline int dispatch(struct ms_stream *s, const struct perf_event_header *rec, uint64_t time)
{
	int err;

	/* The run gathered so far stays open: emit() sends it before any event the record makes (or counts). */
	if (fast_sample(s, rec))            /* the fast event's usual sample */
		return on_fixed_sample(s, &s->ev[s->fast_ev], s->fast_ev, rec);
	if (__builtin_expect(s->stats_in_order, 0) && s->sfn && s->nbatch && (err = stream_flush_batch(s)))
		return err;
	if (rec->type != PERF_RECORD_SAMPLE)
		return dispatch_other(s, rec, time);
	return on_sample(s, rec);
}

/* What every sample of the only event has alike is set once in the batch, not per sample. */
static inline __attribute__((always_inline)) void batch_prepare(struct ms_stream *s, const struct ms_sample_layout *l,
								 bool cpu, bool sp, bool dsrc)
{
	struct ms_event *ev;
	size_t j;

	for (j = 0; j < BATCH; j++) {
		ev = &s->batch[j];
		ev->sample.has_sp = sp;
		ev->sample.fault = s->ev[s->fast_ev].fault;
		ev->sample.evsel = (uint32_t)s->fast_ev;
		if (l->period < 0)
			ev->sample.period = s->ev[s->fast_ev].period;
		if (l->time < 0)
			ev->time = 0;
		if (l->tid < 0)
			ev->pid = ev->tid = 0;
		if (l->ip < 0)
			ev->sample.ip = 0;
		if (!cpu)
			ev->cpu = 0;
		if (!sp)
			ev->sample.sp = 0;
		if (!dsrc)
			ev->sample.data_src = 0;
		if (l->weight < 0)
			ev->sample.weight = 0;
	}
}

/* The samples gathered since the last count, counted: before they go out, as on_fixed_sample() counts its. */
static inline void count_gathered(struct ms_stream *s, uint64_t *gathered)
{
	s->st.samples += *gathered;
	*gathered = 0;
}

/*
 * Emits the first n queued records where samples go out in runs and the
 * only event's samples have a fixed layout: they are decoded straight into
 * the run, with the layout held in locals (the callback could change s as
 * far as the compiler knows). dense: IP, TID, TIME and ADDR side by side,
 * as they usually are (four loads from one place); cpu, sp, dsrc: whether
 * the layout has them. Inlined with constants for the usual layouts, so
 * that their loop tests nothing of the layout per sample.
 */
static inline __attribute__((always_inline)) int gather_with(struct ms_stream *s, const struct qent *q,
							     size_t mask, const unsigned char *run, size_t n,
							     bool dense, bool cpu, bool sp, bool dsrc)
{
	const struct ms_sample_layout l = s->ev[s->fast_ev].lay;
	const struct evinfo *ei = &s->ev[s->fast_ev];
	const struct perf_event_header *rec;
	const uint16_t size = s->fast_size;
	struct ms_event *batch = s->batch, *ev;
	size_t i, qh = s->ord.qh, k = s->nbatch;
	uint64_t v, gathered = 0;
	int err = 0;

	batch_prepare(s, &l, cpu, sp, dsrc);
	for (i = 0, ev = batch + k; i < n; i++) {
		/* q is NULL, a constant where gather_run() inlines this: its loop has no other kind */
		if (!q) {                    /* samples of the fast event, one after another */
			rec = (const void *)run;
			run += size;
		} else if (!fast_sample(s, rec = q[(qh + i) & mask].rec)) {
			s->nbatch = k;
			count_gathered(s, &gathered);
			err = dispatch(s, rec, q[(qh + i) & mask].time);   /* sends the run first */
			if (err)
				break;
			k = s->nbatch;
			ev = batch + k;
			continue;
		}
		/* ev is batch + k: kind, NULL chains and has_addr are set already */
		if (dense) {
			ev->sample.ip = load64(rec, l.ip);
			v = load64(rec, l.ip + 8);
			ev->time = load64(rec, l.ip + 16);
			ev->sample.addr = load64(rec, l.ip + 24);
		} else {
			v = l.tid >= 0 ? load64(rec, l.tid) : 0;
			if (l.time >= 0)
				ev->time = load64(rec, l.time);
			if (l.ip >= 0)
				ev->sample.ip = load64(rec, l.ip);
			ev->sample.addr = load64(rec, l.addr);
		}
		if (dense || l.tid >= 0) {
			ev->pid = (uint32_t)v;
			ev->tid = (uint32_t)(v >> 32);
		}
		if (cpu)
			ev->cpu = (uint32_t)load64(rec, l.cpu);
		if (sp)
			ev->sample.sp = load64(rec, l.sp);
		if (dsrc)
			ev->sample.data_src = load64(rec, l.data_src);
		if (l.period >= 0)
			ev->sample.period = load64(rec, l.period);
		if (__builtin_expect(l.weight >= 0, 0))
			ev->sample.weight = sample_weight(ei, load64(rec, l.weight));
		if (not_user(ev->sample.addr) && !zero_kept(ei, ev->sample.addr, ev->sample.data_src)) {
			s->nbatch = k;               /* the samples before it may go out first: set_aside_after() */
			count_gathered(s, &gathered);
			err = set_aside_after(s, ev->sample.addr);
			k = s->nbatch;
			ev = batch + k;
			if (err)
				break;
			continue;
		}
		gathered++;
		ev++;
		if (++k == BATCH) {
			s->nbatch = k;
			count_gathered(s, &gathered);
			err = stream_flush_batch(s);
			if (err)
				break;
			k = 0;
			ev = batch;
		}
	}
	count_gathered(s, &gathered);
	s->nbatch = k;
	return err;
}

/* The usual layouts, each in its own copy of the loop; run as gather_with() takes it. */
static inline __attribute__((always_inline)) int gather_any(struct ms_stream *s, const struct qent *q,
							    size_t mask, const unsigned char *run, size_t n)
{
	const struct ms_sample_layout *l = &s->ev[s->fast_ev].lay;
	const bool dense = l->ip >= 0 && l->tid == l->ip + 8 && l->time == l->ip + 16 && l->addr == l->ip + 24;

	/* perf record -d, with and without DATA_SRC, and with a CPU. */
	if (dense && l->sp < 0 && l->cpu < 0)
		return l->data_src >= 0 ? gather_with(s, q, mask, run, n, true, false, false, true) :
					  gather_with(s, q, mask, run, n, true, false, false, false);
	if (dense && l->sp < 0)
		return gather_with(s, q, mask, run, n, true, true, false, l->data_src >= 0);
	return gather_with(s, q, mask, run, n, dense, l->cpu >= 0, l->sp >= 0, l->data_src >= 0);
}

/* Queue entries [0, n), of any kind. */
static int gather(struct ms_stream *s, const struct qent *q, size_t mask, size_t n)
{
	return gather_any(s, q, mask, NULL, n);
}

/* n samples of the only event, fast_size bytes apart from run on. */
static int gather_run(struct ms_stream *s, const unsigned char *run, size_t n)
{
	return gather_any(s, NULL, 0, run, n);
}

/*
 * n samples of the fast event, fast_size bytes apart from p on, to sfn as
 * they lie in the recording (s->view): at once where the scan found the
 * run clean; otherwise in pieces of at most VIEW_CHUNK, each looked over
 * for addresses that not_user() sets aside just before sfn reads it, and
 * cut around those.
 */
#define VIEW_CHUNK 256

static int send_view(struct ms_stream *s, const unsigned char *p, size_t n, bool clean)
{
	struct ms_samples v = s->view;
	const size_t size = s->fast_size, at = v.addr;
	size_t i, from, end;
	uint64_t addr, dsrc;
	int err = 0;

	if (s->nbatch && (err = stream_flush_batch(s)))
		return err;
	for (from = 0; from < n && !err; from = end) {
		end = !clean && n - from > VIEW_CHUNK ? from + VIEW_CHUNK : n;
		for (i = from; i < end && !clean; i++) {
			memcpy(&addr, p + i * size + at, 8);
			if (!not_user(addr))
				continue;
			dsrc = 0;
			if (v.data_src >= 0)
				memcpy(&dsrc, p + i * size + v.data_src, 8);
			if (zero_kept(&s->ev[s->fast_ev], addr, dsrc))
				continue;
			if (i > from) {
				v.base = p + from * size;
				v.n = i - from;
				s->st.samples += v.n;   /* counted before they go out, as on_fixed_sample() does */
				if ((err = s->sfn(&v, s->ctx)))
					break;
			}
			set_aside(s, addr);          /* after the samples before it, as set_aside_after() */
			from = i + 1;
		}
		if (!err && end > from) {
			v.base = p + from * size;
			v.n = end - from;
			s->st.samples += v.n;
			err = s->sfn(&v, s->ctx);
		}
	}
	return err;
}
/*
 * Emits the segments' records with time <= limit, in order, as
 * flush_queue() does entries: the segments are in order already, and a
 * run that straddles the limit is cut where the ordering finds it.
 */
static int flush_segs(struct ms_stream *s, uint64_t limit)
{
	const uint16_t size = s->fast_size;
	struct seg g;
	size_t i;
	int err = 0;

	while (!err && ms_ordered_seg_pop(&s->ord, limit, &g)) {
		/* perf stamps what it synthesises with 0: the recording starts at the first real time. */
		if (!s->st.first_time && g.last) {
			for (i = 0; g.run && run_time(s, g.p + i * size) == 0; i++)
				;
			s->st.first_time = g.run ? run_time(s, g.p + i * size) : g.first;
		}
		if (g.last > s->last_emitted)
			s->last_emitted = s->st.last_time = g.last;
		if (!g.run)
			err = dispatch(s, (const void *)g.p, g.first);
		else if (s->sfn && s->view.n)
			err = send_view(s, g.p, g.n, g.clean);
		else if (s->sfn)
			err = gather_run(s, g.p, g.n);
		else
			for (i = 0; i < g.n && !err; i++)
				err = dispatch(s, (const void *)(g.p + i * size), run_time(s, g.p + i * size));
	}
	if (!err)
		err = stream_flush_batch(s);
	s->nbatch = 0;                   /* after a stop, what was gathered is dropped */
	return err;
}

/* The times the queue's first n entries bring: the first real one, the last, and those late. */
static void note_times(struct ms_stream *s, size_t n)
{
	const struct ms_ordered *o = &s->ord;
	size_t i;

	/* The batch is sorted: only a prefix can lie before what was emitted already. */
	for (i = 0; i < n && ms_ordered_at(o, i)->time < s->last_emitted; i++)
		s->st.out_of_order++;
	/* perf stamps what it synthesises with 0: the recording starts at the first real time. */
	for (i = 0; i < n && !ms_ordered_at(o, i)->time; i++)
		;
	if (i < n && (!s->st.first_time || ms_ordered_at(o, i)->time < s->st.first_time))
		s->st.first_time = ms_ordered_at(o, i)->time;
	if (ms_ordered_at(o, n - 1)->time > s->last_emitted)
		s->last_emitted = s->st.last_time = ms_ordered_at(o, n - 1)->time;
}

int stream_flush(struct ms_stream *s, uint64_t limit)
{
	const struct qent *e;
	size_t i, n;
	bool in_order;
	int err = 0, dropped;

	if (s->ord.seg_mode)
		return flush_segs(s, limit);
	n = ms_ordered_sort_upto(&s->ord, limit, &in_order);
	if (!n)
		return 0;
	note_times(s, n);
	if (s->sfn && s->fast_size)
		err = gather(s, s->ord.q, s->ord.capq - 1, n);
	else
		for (i = 0; i < n && !err; i++) {
			e = ms_ordered_at(&s->ord, i);
			err = dispatch(s, e->rec, e->time);
		}
	if (!err)
		err = stream_flush_batch(s);
	s->nbatch = 0;                   /* after a stop, what was gathered is dropped */
	dropped = ms_ordered_drop(&s->ord, n, in_order && !err, s->last_emitted);
	return err ? err : dropped;
}
