/*
 * The stream's events (perf's evsels): each one's kind (a data event, a
 * syscall's entry or exit, the VMA tree's writes), where a record's id and
 * time lie, and the one data event whose samples have a fixed layout,
 * which the fast paths decode by offsets. A record finds its event by its
 * id, in a sorted table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/evlist.h"
#include "perfdata/format.h"
#include "stream/internal.h"
#include "util/log.h"

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
	ei->time_off = (int)ms_sample_time_off(t);
	if (a->sample_id_all)
		ei->time_from_end = (int)ms_trailer_time_from_end(t);
}

static int cmp_id(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The kernel gives the ids of a recording's events one after the other
 * (108 ids of 54 events on two CPUs, in a span of 108; mapscope record's
 * own events take two far away): each record's event is found in a table
 * by its id, over the span of at most 65,536 that holds the most ids, not
 * by a binary search of seven mispredicted steps (3.5% of a timeline).
 * Ids outside it go to the search. Among equal ids (a damaged file's) the
 * table keeps the first in sorted order, as the search finds it.
 */
static void id_table(struct ms_stream *s)
{
	size_t i, j, best = 0, from = 0, k;

	for (i = j = 0; j < s->nr_ids; j++) {   /* the window [i, j] of most ids within the span */
		while (s->ids[j].id - s->ids[i].id >= 65536)
			i++;
		if (j - i + 1 > best) {
			best = j - i + 1;
			from = i;
		}
	}
	if (best < 2)
		return;
	s->id_base = s->ids[from].id;
	s->id_span = s->ids[from + best - 1].id - s->id_base + 1;
	if (!(s->id_table = malloc(s->id_span * sizeof(*s->id_table))))
		return;
	for (k = 0; k < s->id_span; k++)
		s->id_table[k] = -1;
	for (k = from + best; k-- > from;)   /* backwards: the first of equal ids stays */
		s->id_table[s->ids[k].id - s->id_base] = (int32_t)s->ids[k].evsel;
}

/* Every event's ids, sorted, so a record finds its event by binary search. */
static int build_ids(struct ms_stream *s, const struct ms_evlist *ev)
{
	size_t i, j;

	s->ids = malloc((ev->nr_ids ? ev->nr_ids : 1) * sizeof(*s->ids));
	if (!s->ids)
		return -ENOMEM;
	for (i = 0; i < s->nr_ev; i++)
		for (j = 0; j < ev->v[i]->nr_ids; j++)
			s->ids[s->nr_ids++] = (struct idmap){ ev->v[i]->ids[j], (uint32_t)i };
	qsort(s->ids, s->nr_ids, sizeof(*s->ids), cmp_id);
	id_table(s);
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

int stream_setup_evsels(struct ms_stream *s, const struct ms_evlist *ev, const void *td, size_t len)
{
	const struct perf_event_attr *a;
	size_t i;
	int err;

	s->nr_ev = ev->n;
	if (!s->nr_ev) {
		ms_err("the recording describes no events");
		return -EBADMSG;
	}
	s->ev = calloc(s->nr_ev, sizeof(*s->ev));
	if (!s->ev)
		return -ENOMEM;
	for (i = 0; i < s->nr_ev; i++)
		s->ev[i].attr = &ev->v[i]->attr;
	if (td && (err = stream_classify_tracepoints(s, td, len)))
		return err;
	for (i = 0; i < s->nr_ev; i++) {
		a = s->ev[i].attr;
		id_offsets(s, a, i == 0);
		time_offsets(a, &s->ev[i]);
		ms_sample_layout_of(a, &s->ev[i].lay);
		s->ev[i].fault = ms_attr_page_faults(a);
		s->ev[i].period = a->freq ? 0 : a->sample_period;
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
	err = build_ids(s, ev);
	if (!err)
		fast_event(s);                   /* by the ids, where the file has other events */
	return err;
}
/* Which event has this id, or -1 where none has. */
static int evsel_of(struct ms_stream *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_ids, mid;

	if (s->id_table && id - s->id_base < s->id_span)
		return s->id_table[id - s->id_base];
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
int stream_sample_evsel(struct ms_stream *s, const struct perf_event_header *rec)
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
	s->vproto.sample.period = ei->period;
	s->view = (struct ms_samples){
		.n = 1, .stride = s->fast_size, .addr = (uint16_t)l->addr, .ip = (uint16_t)l->ip,
		.time = (uint16_t)l->time, .pid = (uint16_t)l->tid, .cpu = l->cpu, .data_src = l->data_src,
		.period = l->period,
		.weight = l->weight, .weight_struct = !!(ei->attr->sample_type & PERF_SAMPLE_WEIGHT_STRUCT),
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

bool __attribute__((noinline)) stream_fast_id_slow(struct ms_stream *s, uint64_t id)
{
	if (evsel_of(s, id) != s->fast_ev)
		return false;
	s->fast_id = id;
	return true;
}

/* The event of another record's trailer; where it is not known, the first (trailers are alike). */
int stream_trailer_evsel(struct ms_stream *s, const struct perf_event_header *rec)
{
	uint64_t id;
	int e;

	if (s->nr_ev == 1 || s->id_from_end < 0 || rec->size < sizeof(*rec) + (size_t)s->id_from_end)
		return 0;
	memcpy(&id, (const char *)rec + rec->size - s->id_from_end, 8);
	e = evsel_of(s, id);
	return e < 0 ? 0 : e;
}

uint64_t __attribute__((noinline)) stream_record_time_slow(struct ms_stream *s, const struct perf_event_header *rec)
{
	const struct evinfo *ei;
	uint64_t t;
	int k;

	if (rec->type == PERF_RECORD_SAMPLE) {
		if ((k = stream_sample_evsel(s, rec)) < 0)
			return s->ord.last_time;
		ei = &s->ev[k];
		if (ei->time_off < 0 || sizeof(*rec) + (size_t)ei->time_off + 8 > rec->size)
			return s->ord.last_time;
		memcpy(&t, (const char *)(rec + 1) + ei->time_off, 8);
		return t;
	}
	ei = &s->ev[stream_trailer_evsel(s, rec)];
	if (ei->time_from_end < 0 || (size_t)ei->time_from_end + sizeof(*rec) > rec->size)
		return s->ord.last_time;
	memcpy(&t, (const char *)rec + rec->size - ei->time_from_end, 8);
	return t;
}
