/*
 * Records -> ordered, normalised events.
 *
 * Ordering follows perf: records are queued, and at each FINISHED_ROUND
 * everything up to the newest time seen at the round before is sorted and
 * emitted; the rest waits. Each per-CPU buffer is in time order, so a round
 * holds a few sorted runs, which a natural merge sort joins cheaply.
 *
 * Decoding: a sample of the one fixed-layout data event is read at its
 * fixed offsets, in runs; any other record is parsed whole. Syscall
 * samples, MMAP2 records and the VMA tree's writes go to syscalls.c, which
 * pairs them into changes; tracing.c reads the tracepoint formats.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel/live.h"
#include "perfdata/evlist.h"
#include "perfdata/reader.h"
#include "stream/internal.h"
#include "util/buf.h"
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

/*
 * Where a record's id lies, as perf finds it: IDENTIFIER at a fixed place,
 * or ID where every event puts it at the same offset. first: the first
 * event, which sets the offsets the others must match.
 */
static void id_offsets(struct ms_stream *s, const struct perf_event_attr *a, bool first)
{
	uint64_t t = a->sample_type;
	int pos = -1, from_end = -1;

	if (t & PERF_SAMPLE_IDENTIFIER)
		pos = 0, from_end = 8;
	else if (t & PERF_SAMPLE_ID) {
		pos = 8 * (!!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
			   !!(t & PERF_SAMPLE_ADDR));
		from_end = 8 * (1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU));
	}
	if (!a->sample_id_all)
		from_end = -1;
	if (first) {
		s->id_pos = pos;
		s->id_from_end = from_end;
		return;
	}
	if (pos != s->id_pos)
		s->id_pos = -1;
	if (from_end != s->id_from_end)
		s->id_from_end = -1;
}

/* Where TIME lies, so ordering needs no full parse. */
static void time_offsets(const struct perf_event_attr *a, struct evinfo *ei)
{
	uint64_t t = a->sample_type;

	ei->time_off = ei->time_from_end = -1;
	if (!(t & PERF_SAMPLE_TIME))
		return;
	ei->time_off = 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID));
	if (a->sample_id_all)
		ei->time_from_end = 8 * (1 + !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
					 !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER));
}

/* The events, the same list whether they come from a file or from the live source. */
static const struct ms_evlist *src_events(const struct ms_stream *s)
{
	return s->r ? ms_pdreader_evlist(s->r) : ms_live_evlist(s->live);
}

static int cmp_id(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Every event's ids, sorted, so a record finds its event by binary search. */
static int build_ids(struct ms_stream *s)
{
	const struct ms_evlist *ev = src_events(s);
	size_t i, j;

	s->ids = malloc((ev->nr_ids ? ev->nr_ids : 1) * sizeof(*s->ids));
	if (!s->ids)
		return -ENOMEM;
	for (i = 0; i < s->nr_ev; i++)
		for (j = 0; j < ev->v[i]->nr_ids; j++)
			s->ids[s->nr_ids++] = (struct idmap){ ev->v[i]->ids[j], (uint32_t)i };
	qsort(s->ids, s->nr_ids, sizeof(*s->ids), cmp_id);
	return 0;
}

static void fast_event(struct ms_stream *s);

/*
 * mapscope record's stack pointer event: a clock with the user registers
 * and no data source, whose ADDR is always 0. A clock that perf record -d
 * sampled stays a data event, its address-0 samples set aside as such.
 */
static bool clock_event(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK) &&
	       (a->sample_type & PERF_SAMPLE_REGS_USER) && !(a->sample_type & PERF_SAMPLE_DATA_SRC);
}

static int setup_evsels(struct ms_stream *s)
{
	const void *td;
	size_t len, i;
	int err;
	const struct perf_event_attr *a;

	if (s->r)
		ms_pdreader_tracing_data(s->r, &td, &len);
	else
		ms_live_tracing_data(s->live, &td, &len);
	s->nr_ev = src_events(s)->n;
	if (!s->nr_ev) {
		ms_err("the recording describes no events");
		return -EBADMSG;
	}
	s->ev = calloc(s->nr_ev, sizeof(*s->ev));
	if (!s->ev)
		return -ENOMEM;
	for (i = 0; i < s->nr_ev; i++)
		s->ev[i].attr = &src_events(s)->v[i]->attr;
	if (td && (err = stream_classify_tracepoints(s, td, len)))
		return err;
	for (i = 0; i < s->nr_ev; i++) {
		a = s->ev[i].attr;
		id_offsets(s, a, i == 0);
		time_offsets(a, &s->ev[i]);
		ms_sample_layout_of(a, &s->ev[i].lay);
		s->ev[i].fault = a->type == PERF_TYPE_SOFTWARE &&
				 (a->config == PERF_COUNT_SW_PAGE_FAULTS ||
				  a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
				  a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
		if (a->type != PERF_TYPE_TRACEPOINT && (a->sample_type & PERF_SAMPLE_ADDR) && !clock_event(a))
			s->ev[i].kind = EK_DATA;
		if (s->ev[i].kind == EK_ENTER)
			s->has_enter[s->ev[i].sc] = true;
		s->has_tree |= s->ev[i].kind == EK_VMA_TREE;
		if (s->ev[i].kind == EK_EXIT)
			s->has_exit[s->ev[i].sc] = true;
		if (s->ev[i].kind == EK_DATA && s->ev[i].lay.fixed && s->ev[i].lay.addr >= 0)
			s->ev[i].fixed_size = s->ev[i].lay.size;
	}
	/*
	 * Unmaps are followed when munmap is recorded (a lone entry is applied
	 * as it comes: lone_enter) and mremap is, whole: its result says where
	 * the memory went.
	 */
	s->has_syscalls = (s->has_exit[SC_MUNMAP] || s->has_enter[SC_MUNMAP]) &&
			  s->has_enter[SC_MREMAP] && s->has_exit[SC_MREMAP];
	err = build_ids(s);
	if (!err && s->r)
		fast_event(s);                   /* by the ids, where the file has other events */
	return err;
}

static struct ms_stream *stream_new(struct ms_pdreader *r, struct ms_live *l)
{
	struct ms_stream *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->r = r;
	s->live = l;
	s->sev.kind = MS_EV_SAMPLE;
	s->sev.sample.has_addr = true;
	if (r)
		ms_pdreader_keep(r, true);
	ms_u32map_init(&s->threads);
	ms_u32map_init(&s->brks);
	err = setup_evsels(s);
	if (err) {
		ms_stream_free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

struct ms_stream *ms_stream_new_live(struct ms_live *l)
{
	return stream_new(NULL, l);
}

struct ms_stream *ms_stream_new(struct ms_pdreader *r)
{
	return stream_new(r, NULL);
}

/* Which event has this id, or -1 where none has. */
static int evsel_of(struct ms_stream *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_ids, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (s->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nr_ids && s->ids[lo].id == id ? (int)s->ids[lo].evsel : -1;
}

/*
 * Finds the event of a sample: the only one, or by its id. -1 where the id
 * matches no event or cannot be found; with several events and no common
 * place for the id (perf refuses such files), the first.
 */
static int sample_evsel(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t id;

	if (s->nr_ev == 1)
		return 0;
	if (s->id_pos < 0)
		return 0;
	if (sizeof(*rec) + (size_t)s->id_pos + 8 > rec->size)
		return -1;
	memcpy(&id, (const char *)(rec + 1) + s->id_pos, 8);
	return evsel_of(s, id);
}

/* The fast event's runs as they lie in the recording, where its layout allows (see view). */
static void fast_view(struct ms_stream *s)
{
	const struct evinfo *ei = &s->ev[s->fast_ev];
	const struct ms_sample_layout *l = &ei->lay;

	if (l->ip < 0 || l->tid < 0 || l->addr < 0 || l->sp >= 0)
		return;
	s->vproto = s->sev;                  /* kind, NULL chains, has_addr */
	s->vproto.sample.evsel = (uint32_t)s->fast_ev;
	s->vproto.sample.fault = ei->fault;
	s->view = (struct ms_samples){
		.n = 1, .stride = s->fast_size, .addr = (uint16_t)l->addr, .ip = (uint16_t)l->ip,
		.time = (uint16_t)l->time, .pid = (uint16_t)l->tid, .cpu = l->cpu, .data_src = l->data_src,
		.proto = &s->vproto,
	};
}

/*
 * The fast path: samples of one event with a fixed layout are queued and
 * decoded by their offsets, straight from the reader's buffer. A file with
 * one such data event takes it, alone (perf record -d) or among others
 * (mapscope record's syscall tracepoints) where every event's samples
 * start with IDENTIFIER, which tells its samples from the others'.
 */
static void fast_event(struct ms_stream *s)
{
	size_t i;
	int k = -1;

	for (i = 0; i < s->nr_ev; i++)
		if (s->ev[i].fixed_size) {
			if (k >= 0)
				return;                  /* two data events: the slow path tells them apart */
			k = (int)i;
		}
	if (k < 0 || s->ev[k].lay.time < 0 || (s->nr_ev > 1 && s->id_pos != 0))
		return;
	if (s->nr_ev > 1) {                      /* an id of its own, before any is seen */
		for (i = 0; i < s->nr_ids && s->ids[i].evsel != (uint32_t)k; i++)
			;
		if (i == s->nr_ids)
			return;
		s->fast_id = s->ids[i].id;
	}
	s->fast_ev = k;
	s->multi = s->nr_ev > 1;
	s->fast_size = s->ev[k].fixed_size;
	s->fast_time = s->ev[k].lay.time;
	fast_view(s);
}

static bool __attribute__((noinline)) fast_id_slow(struct ms_stream *s, uint64_t id)
{
	if (evsel_of(s, id) != s->fast_ev)
		return false;
	s->fast_id = id;
	return true;
}

/* Whether rec is a sample of the fast event: its size, and where the file has other events, its id. */
static inline bool fast_sample(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t id;

	if (rec->size != s->fast_size || rec->type != PERF_RECORD_SAMPLE)
		return false;
	if (!s->multi)
		return true;
	memcpy(&id, rec + 1, 8);
	return id == s->fast_id || fast_id_slow(s, id);
}

/* The event of another record's trailer; where it is not known, the first (trailers are alike). */
static int trailer_evsel(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t id;
	int e;

	if (s->nr_ev == 1 || s->id_from_end < 0 || rec->size < sizeof(*rec) + (size_t)s->id_from_end)
		return 0;
	memcpy(&id, (const char *)rec + rec->size - s->id_from_end, 8);
	e = evsel_of(s, id);
	return e < 0 ? 0 : e;
}

static uint64_t __attribute__((noinline)) record_time_slow(struct ms_stream *s, const struct perf_event_header *rec)
{
	const struct evinfo *ei;
	uint64_t t;
	int k;

	if (rec->type == PERF_RECORD_SAMPLE) {
		if ((k = sample_evsel(s, rec)) < 0)
			return s->last_time;
		ei = &s->ev[k];
		if (ei->time_off < 0 || sizeof(*rec) + (size_t)ei->time_off + 8 > rec->size)
			return s->last_time;
		memcpy(&t, (const char *)(rec + 1) + ei->time_off, 8);
		return t;
	}
	ei = &s->ev[trailer_evsel(s, rec)];
	if (ei->time_from_end < 0 || (size_t)ei->time_from_end + sizeof(*rec) > rec->size)
		return s->last_time;
	memcpy(&t, (const char *)rec + rec->size - ei->time_from_end, 8);
	return t;
}

/* The time a record is ordered by; the usual case, a sample of the only event, inline. */
static inline uint64_t record_time(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t t;

	if (fast_sample(s, rec)) {
		memcpy(&t, (const char *)rec + s->fast_time, 8);
		return t;
	}
	return record_time_slow(s, rec);
}

/* --- normalising --------------------------------------------------------- */

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

/* Counts a sample that not_user() sets aside. 0. */
static int __attribute__((noinline, cold)) set_aside(struct ms_stream *s, uint64_t addr)
{
	if (addr)
		s->st.kernel_addr++;
	else
		s->st.zero_addr++;
	return 0;
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
	if (not_user(ev->sample.addr))
		return set_aside(s, ev->sample.addr);
	ev->sample.ip = l->ip >= 0 ? load64(rec, l->ip) : 0;
	ev->sample.sp = l->sp >= 0 ? load64(rec, l->sp) : 0;
	ev->sample.has_sp = l->sp >= 0;
	ev->sample.data_src = l->data_src >= 0 ? load64(rec, l->data_src) : 0;
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
	int err;

	if (ms_sample_parse(ei->attr, rec, &smp)) {
		if (s->r)
			ms_warn("skipping a sample at byte offset %llu that does not fit its record",
				(unsigned long long)ms_pdreader_offset_of(s->r, rec));
		s->st.bad_samples++;
		return 0;
	}
	/* Every field has a fixed size: a larger record is damage, which swallowed what followed it. */
	if (ei->lay.fixed && rec->size > ei->lay.size) {
		if (s->r)
			ms_warn("skipping a sample at byte offset %llu of %u bytes, where its event's are %u: "
				"the file is damaged there, and the records it covers are lost",
				(unsigned long long)ms_pdreader_offset_of(s->r, rec), rec->size, ei->lay.size);
		s->st.bad_samples++;
		return 0;
	}
	if (ei->kind == EK_ENTER || ei->kind == EK_EXIT) {
		s->st.other_samples++;
		if (ei->kind == EK_ENTER && smp.has_sp && smp.tid != smp.pid && (err = stream_thread_sp(s, &smp)))
			return err;
		return stream_on_syscall(s, ei, &smp);
	}
	if (ei->kind == EK_VMA_TREE) {
		s->st.other_samples++;
		return stream_on_vma_tree(s, ei, &smp);
	}
	if (ei->kind != EK_DATA || !smp.has_addr) {
		s->st.other_samples++;
		return smp.has_sp && smp.tid != smp.pid ? stream_thread_sp(s, &smp) : 0;
	}
	if (not_user(smp.addr))
		return set_aside(s, smp.addr);
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
	ev.sample.fault = ei->fault;
	ev.sample.evsel = (uint32_t)e;
	ev.sample.chain = smp.chain;
	ev.sample.chain_len = (uint32_t)smp.chain_len;
	s->st.samples++;
	return emit(s, &ev);
}

static int __attribute__((noinline)) on_sample(struct ms_stream *s, const struct perf_event_header *rec)
{
	int e = sample_evsel(s, rec);
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
	} else {
		ev.pid = v[0];
		ev.tid = v[2];
		stream_thread_gone(s, v[2]);
	}
	return emit(s, &ev);
}

static int on_comm(struct ms_stream *s, const struct perf_event_header *rec, const struct ms_sample *smp)
{
	const char *name = (const char *)(rec + 1) + 8;
	const char *end = (const char *)rec + rec->size;
	struct ms_event ev;
	uint64_t *brk;
	uint32_t v[2];

	if (rec->size < sizeof(*rec) + 9 || !memchr(name, 0, (size_t)(end - name)))
		return 0;
	memcpy(v, rec + 1, 8);
	base_event(&ev, (rec->misc & PERF_RECORD_MISC_COMM_EXEC) ? MS_EV_EXEC : MS_EV_COMM, smp);
	if (ev.kind == MS_EV_EXEC && (brk = ms_u32map_get(&s->brks, v[0])))
		*brk = 0;                /* a new image: its first brk starts from its own break */
	ev.pid = v[0];
	ev.tid = v[1];
	ev.comm.comm = name;
	return emit(s, &ev);
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

/* Counts a LOST record against the process it names (the task writing when the ring overflowed). */
static void note_lost(struct ms_session_stats *st, uint32_t pid, uint64_t count, uint64_t time)
{
	uint32_t i, n = st->nr_lost_pids < 8 ? st->nr_lost_pids : 8;

	for (i = 0; i < n && st->lost_by_pid[i].pid != pid; i++)
		;
	if (i == n) {
		st->nr_lost_pids++;
		if (i == 8)
			return;
		st->lost_by_pid[i] = (struct ms_session_lost){ pid, 0, time, time };
	}
	st->lost_by_pid[i].count += count;
	st->lost_by_pid[i].last = time;
}

static int __attribute__((noinline)) dispatch_other(struct ms_stream *s, const struct perf_event_header *rec,
						   uint64_t time)
{
	struct ms_sample smp;
	struct ms_event ev;
	uint64_t lost;

	if (implausible(rec)) {
		if (s->r)
			ms_warn("skipping a record of type %u at byte offset %llu: its size, %u bytes, is more "
				"than that type ever has; the file is damaged there, and the records it covers "
				"are lost", rec->type, (unsigned long long)ms_pdreader_offset_of(s->r, rec),
				rec->size);
		s->st.bad_records++;
		return 0;
	}
	if (ms_sample_parse_id(s->ev[trailer_evsel(s, rec)].attr, rec, &smp))
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
		note_lost(&s->st, smp.pid, lost, smp.time);
		base_event(&ev, MS_EV_LOST, &smp);
		ev.lost.count = lost;
		return emit(s, &ev);
	}
	return 0;
}

/* Anything but a fixed-layout sample goes out after the samples gathered before it. */
static inline int dispatch(struct ms_stream *s, const struct perf_event_header *rec, uint64_t time)
{
	/* The run gathered so far stays open: emit() sends it before any event the record makes. */
	if (fast_sample(s, rec))            /* the fast event's usual sample */
		return on_fixed_sample(s, &s->ev[s->fast_ev], s->fast_ev, rec);
	if (rec->type != PERF_RECORD_SAMPLE)
		return dispatch_other(s, rec, time);
	return on_sample(s, rec);
}

/* --- ordering ------------------------------------------------------------ */

/*
 * Natural merge sort of q[qh, qh + nq): the queue is a few sorted runs, one
 * per CPU buffer drained in the round (and what was left from the round
 * before), so each pass merges neighbouring runs and halves their number.
 * The first nsorted entries are known to be in order already (enqueue
 * keeps count while records come in order), so most rounds need no pass.
 * A pass writes from index 0 of the other array, which compacts the queue;
 * the arrays swap places if the result ends in tmp. Stable: records of
 * equal time keep their file order.
 */
static void sort_queue(struct ms_stream *s)
{
	struct qent *src, *dst = s->tmp, *t;
	size_t n = s->nq, lo, mid, hi, i, j, k, runs;
	bool first = true;

	if (s->nsorted >= n)
		return;                  /* an empty queue too, whose q may be NULL: no NULL + 0 */
	src = s->q + s->qh;
	if (s->qh + n > s->capq) {       /* the ring wraps: lay it out straight in tmp first */
		memcpy(s->tmp, s->q + s->qh, (s->capq - s->qh) * sizeof(*src));
		memcpy(s->tmp + (s->capq - s->qh), s->q, (n - (s->capq - s->qh)) * sizeof(*src));
		src = s->tmp;
		dst = s->q;
	}
	for (;;) {
		runs = 0;
		for (lo = 0; lo < n; lo = hi) {
			mid = first && lo == 0 && s->nsorted > 1 ? s->nsorted : lo + 1;
			for (; mid < n && src[mid].time >= src[mid - 1].time; mid++)
				;
			runs++;
			if (mid == n) {
				if (runs == 1)
					break;   /* sorted: no pass needed */
				memcpy(dst + lo, src + lo, (n - lo) * sizeof(*src));
				hi = n;
				continue;
			}
			for (hi = mid + 1; hi < n && src[hi].time >= src[hi - 1].time; hi++)
				;
			runs++;
			for (i = lo, j = mid, k = lo; i < mid && j < hi; k++)
				dst[k] = src[j].time < src[i].time ? src[j++] : src[i++];
			memcpy(dst + k, src + i, (mid - i) * sizeof(*src));
			memcpy(dst + k + (mid - i), src + j, (hi - j) * sizeof(*src));
		}
		if (runs <= 1)
			break;
		t = src == s->q + s->qh ? s->q : src == s->tmp ? s->tmp : s->q;   /* free from index 0 on */
		src = dst;
		dst = t;
		first = false;
		if (runs == 2)
			break;               /* the one merge made it sorted: no pass to find that */
	}
	if (src != s->q + s->qh) {
		if (src == s->tmp) {     /* the result is in tmp: swap the arrays */
			s->tmp = s->q;
			s->q = src;
		}
		s->qh = 0;
	}
	s->nsorted = n;
	s->tail_time = src[n - 1].time;
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
	const struct perf_event_header *rec;
	const uint16_t size = s->fast_size;
	struct ms_event *batch = s->batch, *ev;
	size_t i, j, qh = s->qh, k = s->nbatch;
	uint64_t v, gathered = 0;
	int err = 0;

	/* What every sample of the only event has alike is set once here, not per sample. */
	for (j = 0; j < BATCH; j++) {
		ev = &batch[j];
		ev->sample.has_sp = sp;
		ev->sample.fault = s->ev[s->fast_ev].fault;
		ev->sample.evsel = (uint32_t)s->fast_ev;
		if (l.time < 0)
			ev->time = 0;
		if (l.tid < 0)
			ev->pid = ev->tid = 0;
		if (l.ip < 0)
			ev->sample.ip = 0;
		if (!cpu)
			ev->cpu = 0;
		if (!sp)
			ev->sample.sp = 0;
		if (!dsrc)
			ev->sample.data_src = 0;
	}
	for (i = 0, ev = batch + k; i < n; i++) {
		/* q is NULL, a constant where gather_run() inlines this: its loop has no other kind */
		if (!q) {                    /* samples of the fast event, one after another */
			rec = (const void *)run;
			run += size;
		} else if (!fast_sample(s, rec = q[(qh + i) & mask].rec)) {
			s->nbatch = k;
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
		if (not_user(ev->sample.addr)) {
			set_aside(s, ev->sample.addr);
			continue;
		}
		gathered++;
		ev++;
		if (++k == BATCH) {
			s->nbatch = k;
			err = stream_flush_batch(s);
			if (err)
				break;
			k = 0;
			ev = batch;
		}
	}
	s->st.samples += gathered;
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
	size_t i, from, end, sent = 0;
	uint64_t addr;
	int err = 0;

	if (s->nbatch && (err = stream_flush_batch(s)))
		return err;
	for (from = 0; from < n && !err; from = end) {
		end = !clean && n - from > VIEW_CHUNK ? from + VIEW_CHUNK : n;
		for (i = from; i < end && !clean; i++) {
			memcpy(&addr, p + i * size + at, 8);
			if (!not_user(addr))
				continue;
			set_aside(s, addr);
			if (i > from) {
				v.base = p + from * size;
				v.n = i - from;
				sent += v.n;
				if ((err = s->sfn(&v, s->ctx)))
					break;
			}
			from = i + 1;
		}
		if (!err && end > from) {
			v.base = p + from * size;
			v.n = end - from;
			sent += v.n;
			err = s->sfn(&v, s->ctx);
		}
	}
	s->st.samples += sent;
	return err;
}

static inline struct seg *seg_at(const struct ms_stream *s, size_t i)
{
	return &s->segs[(s->sh + i) & (s->capseg - 1)];
}

static inline uint64_t run_time(const struct ms_stream *s, const unsigned char *rec)
{
	uint64_t t;

	memcpy(&t, rec + s->fast_time, 8);
	return t;
}

/*
 * Emits the segments' records with time <= limit, in order, as
 * flush_queue() does entries: the segments are in order already, and a
 * run that straddles the limit is cut where a binary search finds it.
 */
static int flush_segs(struct ms_stream *s, uint64_t limit)
{
	const uint16_t size = s->fast_size;
	struct seg *g;
	size_t k, i, lo, hi, mid;
	uint64_t end;
	int err = 0;

	while (s->nseg && !err) {
		g = seg_at(s, 0);
		if (g->first > limit)
			break;
		k = g->n;
		end = g->last;
		if (g->last > limit) {   /* a run, with first <= limit < last: n >= 2 */
			for (lo = 1, hi = g->n - 1; lo < hi;) {
				mid = lo + (hi - lo) / 2;
				if (run_time(s, g->p + mid * size) <= limit)
					lo = mid + 1;
				else
					hi = mid;
			}
			k = lo;
			end = run_time(s, g->p + (k - 1) * size);
		}
		/* perf stamps what it synthesises with 0: the recording starts at the first real time. */
		if (!s->st.first_time && end) {
			for (i = 0; g->run && run_time(s, g->p + i * size) == 0; i++)
				;
			s->st.first_time = g->run ? run_time(s, g->p + i * size) : g->first;
		}
		if (end > s->last_emitted)
			s->last_emitted = s->st.last_time = end;
		if (!g->run)
			err = dispatch(s, (const void *)g->p, g->first);
		else if (s->sfn && s->view.n)
			err = send_view(s, g->p, k, g->clean);
		else if (s->sfn)
			err = gather_run(s, g->p, k);
		else
			for (i = 0; i < k && !err; i++)
				err = dispatch(s, (const void *)(g->p + i * size), run_time(s, g->p + i * size));
		if (k == g->n) {
			s->sh = (s->sh + 1) & (s->capseg - 1);
			s->nseg--;
		} else {
			g->p += k * size;
			g->n -= k;
			g->first = run_time(s, g->p);
		}
	}
	if (!err)
		err = stream_flush_batch(s);
	s->nbatch = 0;                   /* after a stop, what was gathered is dropped */
	return err;
}

static int seg_push(struct ms_stream *s, const unsigned char *p, size_t n, uint64_t first, uint64_t last, bool run);

/*
 * What is left queued after a flush, all of it in order, becomes segments
 * again (runs where its samples lie one after another), so that records
 * that follow in order join them with no queue entry of their own. 0 or
 * -ENOMEM (the queue is as it was).
 */
static int __attribute__((noinline)) queue_to_segs(struct ms_stream *s)
{
	const size_t mask = s->capq - 1, size = s->fast_size;
	const unsigned char *p;
	const struct qent *e;
	struct seg *g;
	size_t i;
	int err;

	for (i = 0; i < s->nq; i++) {
		e = &s->q[(s->qh + i) & mask];
		p = (const void *)e->rec;
		if (!fast_sample(s, e->rec)) {
			err = seg_push(s, p, 1, e->time, e->time, false);
		} else if (s->nseg && (g = seg_at(s, s->nseg - 1))->run && g->p + g->n * size == p) {
			g->n++;
			g->last = e->time;
			g->clean = false;        /* not looked at */
			err = 0;
		} else {
			err = seg_push(s, p, 1, e->time, e->time, true);
		}
		if (err) {
			s->sh = s->nseg = 0;
			return err;
		}
	}
	s->qh = s->nq = s->nsorted = 0;
	s->seg_mode = true;
	return 0;
}

/* Emits queued records with time <= limit, in order. */
static int flush_queue(struct ms_stream *s, uint64_t limit)
{
	const struct qent *q, *e;
	size_t i, n, lo, hi, mask;
	bool in_order;
	int err = 0;

	if (s->seg_mode)
		return flush_segs(s, limit);
	in_order = s->nsorted >= s->nq;  /* nothing came out of order since the last flush */
	sort_queue(s);
	q = s->q;
	mask = s->capq - 1;
#define AT(i) (&q[(s->qh + (i)) & mask])
	for (lo = 0, hi = s->nq; lo < hi;) {    /* n: the first entry later than limit */
		i = lo + (hi - lo) / 2;
		if (AT(i)->time <= limit)
			lo = i + 1;
		else
			hi = i;
	}
	n = lo;
	if (!n)
		return 0;
	/* The batch is sorted: only a prefix can lie before what was emitted already. */
	for (i = 0; i < n && AT(i)->time < s->last_emitted; i++)
		s->st.out_of_order++;
	/* perf stamps what it synthesises with 0: the recording starts at the first real time. */
	for (i = 0; i < n && !AT(i)->time; i++)
		;
	if (i < n && (!s->st.first_time || AT(i)->time < s->st.first_time))
		s->st.first_time = AT(i)->time;
	if (AT(n - 1)->time > s->last_emitted)
		s->last_emitted = s->st.last_time = AT(n - 1)->time;
	if (s->sfn && s->fast_size)
		err = gather(s, q, mask, n);
	else
		for (i = 0; i < n && !err; i++) {
			e = AT(i);
			err = dispatch(s, e->rec, e->time);
		}
	if (!err)
		err = stream_flush_batch(s);
	s->nbatch = 0;                   /* after a stop, what was gathered is dropped */
#undef AT
	s->qh = (s->qh + n) & mask;
	s->nq -= n;
	s->nsorted = s->nq;
	if (!s->nq && s->seg_ok) {
		/* Segments again, from no earlier than what went out: a later record is out of order. */
		s->seg_mode = true;
		if (s->tail_time < s->last_emitted)
			s->tail_time = s->last_emitted;
	} else if (s->seg_ok && in_order && !err) {
		/*
		 * perf's per-CPU buffers break the order where a task moves to
		 * another CPU; a round that came in order says it is over.
		 */
		err = queue_to_segs(s);
	}
	return err;
}

/*
 * Emptied chunks are kept, not freed: freeing a 1 MiB block is a munmap,
 * which a process watching itself would see as a new event to drain, and so
 * on without end.
 */
static void recycle_chunks(struct ms_stream *s, struct chunk *c)
{
	struct chunk *next;

	for (; c; c = next) {
		next = c->next;
		c->next = s->spare;
		s->spare = c;
	}
}

static void free_chunks(struct chunk *c)
{
	struct chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

static const struct perf_event_header * __attribute__((noinline)) keep_record(struct ms_stream *s, const struct perf_event_header *rec)
{
	struct chunk *c = s->arena_cur;
	uint64_t *dst;
	const uint64_t *src = (const void *)rec;
	size_t i, words = rec->size / 8, need = (rec->size + 7) & ~7u;

	if (!c || sizeof(c->data) - c->used < need) {
		if (s->spare) {
			c = s->spare;
			s->spare = c->next;
		} else if (!(c = malloc(sizeof(*c))))
			return NULL;
		c->next = s->arena_cur;
		c->used = 0;
		s->arena_cur = c;
	}
	dst = (uint64_t *)(void *)(c->data + c->used);
	/* A word loop: most records are a few words, where a call to memcpy costs more. */
	if (words <= 8) {
		/* unrolled */
		switch (words) {
		case 8: dst[7] = src[7]; /* fall through */
		case 7: dst[6] = src[6]; /* fall through */
		case 6: dst[5] = src[5]; /* fall through */
		case 5: dst[4] = src[4]; /* fall through */
		case 4: dst[3] = src[3]; /* fall through */
		case 3: dst[2] = src[2]; /* fall through */
		case 2: dst[1] = src[1]; /* fall through */
		case 1: dst[0] = src[0]; /* fall through */
		default: break;
		}
	} else
		for (i = 0; i < words; i++)
			dst[i] = src[i];
	if (rec->size % 8)               /* the kernel and the reader keep sizes to 8s; a live one might not */
		memcpy(dst + words, src + words, rec->size % 8);
	c->used += need;
	return (const void *)dst;
}

/* A ring twice the size, its entries laid out from index 0. 0 or -ENOMEM. */
static int __attribute__((noinline)) queue_grow(struct ms_stream *s)
{
	/*
	 * 8192 entries (128 KiB) to start: a block that size is mapped on its
	 * own, so only the pages used cost a fault. tmp's contents do not
	 * matter, so it is not copied.
	 */
	size_t cap = s->capq ? s->capq * 2 : 8192, first = s->capq - s->qh < s->nq ? s->capq - s->qh : s->nq;
	struct qent *q = malloc(cap * sizeof(*q)), *t = malloc(cap * sizeof(*t));

	if (!q || !t) {
		free(q);
		free(t);
		return -ENOMEM;
	}
	if (s->nq) {
		memcpy(q, s->q + s->qh, first * sizeof(*q));
		memcpy(q + first, s->q, (s->nq - first) * sizeof(*q));
	}
	free(s->q);
	free(s->tmp);
	s->q = q;
	s->tmp = t;
	s->qh = 0;
	s->capq = cap;
	return 0;
}

/* A segment ring twice the size, laid out from index 0. 0 or -ENOMEM. */
static int __attribute__((noinline)) seg_grow(struct ms_stream *s)
{
	size_t cap = s->capseg ? s->capseg * 2 : 256, i;
	struct seg *g = malloc(cap * sizeof(*g));

	if (!g)
		return -ENOMEM;
	for (i = 0; i < s->nseg; i++)
		g[i] = *seg_at(s, i);
	free(s->segs);
	s->segs = g;
	s->sh = 0;
	s->capseg = cap;
	return 0;
}

/* The queue now ends at time last. */
static inline void seg_ends_at(struct ms_stream *s, uint64_t last)
{
	s->tail_time = s->last_time = last;
	if (last > s->max_time)
		s->max_time = last;
}

/* Appends a segment of n records, times first to last. 0 or -ENOMEM. */
static int seg_push(struct ms_stream *s, const unsigned char *p, size_t n, uint64_t first, uint64_t last, bool run)
{
	struct seg *g;
	int err;

	if (s->nseg == s->capseg && (err = seg_grow(s)))
		return err;
	g = seg_at(s, s->nseg++);
	g->p = p;
	g->n = n;
	g->first = first;
	g->last = last;
	g->run = run;
	g->clean = false;
	seg_ends_at(s, last);
	return 0;
}

/*
 * A record came out of order: the segments become queue entries (in
 * order, as they were), to be sorted with what follows. 0 or -ENOMEM.
 */
static int __attribute__((noinline)) segs_to_queue(struct ms_stream *s)
{
	const struct seg *g;
	struct qent *e;
	size_t total = 0, i, j;
	int err;

	for (i = 0; i < s->nseg; i++)
		total += seg_at(s, i)->n;
	while (s->capq - s->nq < total)
		if ((err = queue_grow(s)))
			return err;
	for (i = 0; i < s->nseg; i++)
		for (g = seg_at(s, i), j = 0; j < g->n; j++) {
			e = &s->q[(s->qh + s->nq++) & (s->capq - 1)];
			e->rec = (const void *)(g->run ? g->p + j * s->fast_size : g->p);
			e->time = g->run ? run_time(s, (const unsigned char *)e->rec) : g->first;
		}
	s->nsorted = s->nq;
	s->sh = s->nseg = 0;
	s->seg_mode = false;
	return 0;
}

static inline int enqueue(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t t = record_time(s, rec);
	size_t nq, nsorted;
	struct qent *q;
	int err;

	if (s->seg_mode) {
		if (t >= s->tail_time)
			return seg_push(s, (const void *)rec, 1, t, t, false);
		if ((err = segs_to_queue(s)))
			return err;
	}
	nq = s->nq;
	nsorted = s->nsorted;
	if (nq == s->capq && (err = queue_grow(s)))
		return err;
	if (!s->r && !(rec = keep_record(s, rec)))   /* a file's reader keeps what it read */
		return -ENOMEM;
	/* Everything read before the stores: they could alias s's fields. */
	if (nsorted == nq && (!nq || t >= s->tail_time))
		nsorted++;                    /* still in order: no sorting to do */
	if (t > s->max_time)
		s->max_time = t;
	q = &s->q[(s->qh + nq) & (s->capq - 1)];
	s->nq = nq + 1;
	s->nsorted = nsorted;
	s->tail_time = s->last_time = t;
	q->time = t;
	q->rec = rec;
	return 0;
}

/* off: where this FINISHED_ROUND lies in the file. */
static int finished_round(struct ms_stream *s, uint64_t off)
{
	int err = flush_queue(s, s->next_flush);

	/*
	 * Everything read before the previous round has been emitted now: its
	 * times are at most the newest time seen then, which was the limit.
	 */
	if (s->r) {
		ms_pdreader_release(s->r, s->round_off);
		s->round_off = off;
	}
	s->next_flush = s->max_time;
	/* Everything copied before the previous round has been emitted now. */
	recycle_chunks(s, s->arena_prev);
	s->arena_prev = s->arena_cur;
	s->arena_cur = NULL;
	return err;
}

int ms_stream_push(struct ms_stream *s, const struct perf_event_header *rec)
{
	s->st.records++;
	return rec->type < 64 ? enqueue(s, rec) : 0;
}

int ms_stream_flush(struct ms_stream *s, uint64_t limit, ms_stream_fn fn, void *ctx)
{
	int err;

	s->fn = fn;
	s->ctx = ctx;
	err = flush_queue(s, limit);
	if (!s->nq) {                    /* nothing queued refers to the copies any more */
		recycle_chunks(s, s->arena_prev);
		recycle_chunks(s, s->arena_cur);
		s->arena_prev = s->arena_cur = NULL;
	}
	return err;
}

/*
 * Queues the usual records of a span, the only event's fixed-layout samples,
 * with the queue's state in locals (the stores of queue entries could alias
 * s's fields as far as the compiler knows); stops at any other record, or
 * when the ring is full. Returns where it stopped.
 */
static const unsigned char *enqueue_samples(struct ms_stream *s, const unsigned char *p, const unsigned char *end)
{
	const struct perf_event_header *rec;
	struct qent *q = s->q, *e;
	size_t mask = s->capq - 1, qh = s->qh, nq = s->nq, nsorted = s->nsorted, cap = s->capq;
	uint64_t t, tail = s->tail_time, max = s->max_time, records = 0;
	const uint16_t size = s->fast_size;
	const int16_t at = s->fast_time;
	const bool multi = s->multi;
	/* As many records as the bytes can hold whole and the ring can take. */
	size_t fit = (size_t)(end - p) / size, left = fit < cap - nq ? fit : cap - nq;

	for (; left; left--, p += size, records++) {
		rec = (const void *)p;
		if (rec->size != size || rec->type != PERF_RECORD_SAMPLE || (multi && !fast_sample(s, rec)))
			break;
		memcpy(&t, p + at, 8);
		if (nsorted == nq && (!nq || t >= tail))
			nsorted++;               /* still in order: no sorting to do */
		if (t > max)
			max = t;
		e = &q[(qh + nq++) & mask];
		e->time = t;
		e->rec = rec;
		tail = t;
	}
	if (records) {
		s->nq = nq;
		s->nsorted = nsorted;
		s->tail_time = s->last_time = tail;
		s->max_time = max;
		s->st.records += records;
	}
	return p;
}

/* One record of a file, at byte offset off. 0 or -errno. */
static int take_record(struct ms_stream *s, const struct perf_event_header *rec, uint64_t off)
{
	s->st.records++;
	if (rec->type == PERF_RECORD_FINISHED_ROUND_)
		return finished_round(s, off);
	if (rec->type < 64)                  /* kernel records; perf's own are headers */
		return enqueue(s, rec);
	return 0;
}

/*
 * enqueue_samples() while the queue is segments: the samples that follow in
 * time order join the last run, or start one; it stops at any other record,
 * and at one out of order, which enqueue() takes.
 */
static const unsigned char *seg_enqueue_samples(struct ms_stream *s, const unsigned char *p,
						const unsigned char *end)
{
	const unsigned char *first = p;
	const struct perf_event_header *rec;
	const uint16_t size = s->fast_size;
	const int16_t at = s->fast_time;
	const bool multi = s->multi;
	/* Where runs go out over the file (view): each address, for a run known to be clean. */
	const uint16_t aat = s->view.n ? s->view.addr : 0;
	size_t left = (size_t)(end - p) / size, n;
	uint64_t t, tail = s->tail_time, a, worst = 0;
	bool clean;
	struct seg *g;

	for (; left; left--, p += size) {
		rec = (const void *)p;
		if (rec->size != size || rec->type != PERF_RECORD_SAMPLE || (multi && !fast_sample(s, rec)))
			break;
		memcpy(&t, p + at, 8);
		if (t < tail)
			break;
		tail = t;
		memcpy(&a, p + aat, 8);
		a -= 1;                  /* as not_user() orders them: 0 and the top half highest */
		worst = a > worst ? a : worst;
	}
	if (p == first)
		return p;
	clean = s->view.n && !not_user(worst + 1);
	n = (size_t)(p - first) / size;
	if (s->nseg && (g = seg_at(s, s->nseg - 1))->run && g->p + g->n * size == first) {
		g->n += n;
		g->last = tail;
		g->clean &= clean;
		seg_ends_at(s, tail);
	} else if (seg_push(s, first, n, run_time(s, first), tail, true))
		return first;            /* no memory: enqueue() meets it again and says so */
	else
		seg_at(s, s->nseg - 1)->clean = clean;
	s->st.records += n;
	return p;
}

/*
 * Records of a file where the only event's samples have a fixed layout:
 * those are checked and queued straight from the reader's buffer, in one
 * pass; the reader checks and hands out every other record on its own.
 */
static int run_fast(struct ms_stream *s)
{
	const struct perf_event_header *rec;
	const unsigned char *start, *p;
	const void *buf;
	size_t len;
	int ret, err;

	s->seg_ok = true;
	s->seg_mode = !s->nq;
	for (;;) {
		if ((len = ms_pdreader_peek(s->r, &buf))) {
			start = buf;
			p = s->seg_mode ? seg_enqueue_samples(s, start, start + len) : enqueue_samples(s, start, start + len);
			if (p != start) {
				ms_pdreader_skip(s->r, (size_t)(p - start), s->fast_size);
				continue;
			}
		}
		if ((ret = ms_pdreader_next(s->r, &rec)) <= 0)
			return ret;
		if ((err = take_record(s, rec, ms_pdreader_offset(s->r))))
			return err;
	}
}

int ms_stream_run(struct ms_stream *s, ms_stream_fn fn, void *ctx)
{
	const struct perf_event_header *rec;
	const unsigned char *p, *end;
	const void *start;
	uint64_t off;
	size_t len;
	int ret, err = 0;

	s->fn = fn;
	s->ctx = ctx;
	if (s->fast_size)
		ret = run_fast(s);
	else
		while ((ret = ms_pdreader_next_span(s->r, &start, &len, &off)) > 0)
			for (p = start, end = p + len; p < end; p += rec->size) {
				rec = (const void *)p;
				if ((err = take_record(s, rec, off + (uint64_t)(p - (const unsigned char *)start))))
					return err;
			}
	err = flush_queue(s, UINT64_MAX);
	if (!err)
		err = stream_flush_threads(s);
	return err ? err : ret;
}

bool ms_stream_has_syscalls(const struct ms_stream *s)
{
	return s->has_syscalls;
}

void ms_stream_stats(const struct ms_stream *s, struct ms_session_stats *st)
{
	*st = s->st;
}

void ms_stream_free(struct ms_stream *s)
{
	if (!s)
		return;
	stream_free_threads(s);
	free_chunks(s->arena_cur);
	free_chunks(s->arena_prev);
	free_chunks(s->spare);
	free(s->ev);
	free(s->ids);
	free(s->q);
	free(s->tmp);
	free(s->segs);
	free(s->batch);
	free(s);
}
