/*
 * The stream run ahead: on a recording of many processes a replay is two
 * halves of about the same cost, the stream (reading, ordering and parsing
 * the records, pairing each syscall's entry and exit) and what takes its
 * events (the model, the analyses). Where a second CPU is online they run
 * side by side: the stream on a thread of its own writes each event, and
 * each run of samples, into batches; the caller's thread takes them in the
 * order they were made.
 *
 * What an event points to is copied with it: the stream's own arrays (a
 * syscall's chain and stack words, a map's name) are written over by what
 * comes next. The recording's bytes are not: a run of samples lies over
 * them as before, and the stream's release of the records behind an event
 * is carried out by the thread only once the caller's thread has taken
 * every event before it. What the stream logs travels in the batches, so
 * the log reads as without the thread, and so do its settings
 * (mapscope:sysctl) where they change, which the analyses ask for as the
 * events come. The first nonzero return on the caller's thread (an
 * analysis has what it needed, an error) stops the stream at its next
 * event or read; where asked, its statistics travel too, and are put back
 * to those the stream had when it made the event the caller stopped at
 * (maps at an instant reads what was lost or set aside by the records
 * read then, as in turn, not by where the thread got to); the list of
 * processes whose records were lost travels as its changes, an entry a
 * LOST record.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/reader.h"
#include "session/ahead.h"
#include "util/clock.h"
#include "util/log.h"

/*
 * 1 MiB of batches: on chromium's page load 16 of them ran as fast as 32
 * and 128 slower (their bytes no longer in the caches when taken); each
 * MiB is peak memory, which report --format pprof keeps under 64 MiB.
 */
#define BATCH_BYTES (64u << 10)
#define NR_BATCHES 16
/*
 * How long a side waits for the other by spinning before it sleeps: a
 * sleeping vCPU here took milliseconds to wake, longer than a batch takes
 * to fill or to empty (measured: the caller's thread waited for the
 * stream 25-47 times a replay of chromium's page load). The spin yields
 * now and then: with a third thread (report's namer) on two CPUs, the one
 * waited for may be runnable but not running (report --children 0 of the
 * page load: 37.9 -> 35.6 ms).
 */
#define SPIN_NS 200000

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield" ::: "memory")
#else
#define cpu_relax() do { } while (0)
#endif

enum item_kind { IT_EVENT = 1, IT_RUN, IT_RELEASE, IT_LOG, IT_IDS, IT_FACTS, IT_STATS };

/* Each item: this, then what it holds; size, the whole item's, is a multiple of 8. */
struct item {
	uint32_t kind;
	uint32_t size;
};

struct batch {
	unsigned char *mem;
	size_t len, cap;
};

struct ahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NR_BATCHES];
	/* Batches taken, and filled: head <= tail <= head + NR_BATCHES; read without mu to spin. */
	atomic_uint head, tail;
	atomic_bool done;              /* the stream has ended: err is what it returned */
	bool wants_room, wants_work;   /* the thread, the caller waits */
	int err;
	atomic_bool stop;              /* the caller took no more */
	atomic_uint_fast64_t released; /* the records before this offset are the caller's no more */
	/* The thread's (and how, which neither side writes), on cache lines the caller does not write. */
	_Alignas(64) struct ms_stream *st;
	const struct ms_stream_source *src;   /* the caller's */
	struct batch *cur;             /* being filled: b[tail % NR_BATCHES] */
	uint64_t did_release;
	size_t ids_seen;               /* the reader's build-id bytes handed on */
	const struct ms_stream_facts *facts;   /* the stream's, where how.facts is set */
	uint64_t facts_seen;           /* their changes handed on */
	struct ms_stream_stats stats_sent;   /* with how.stats: the statistics last handed on */
	bool lost_sent;                /* and the lost processes' list whole, changes after */
	struct ms_logq log;
	struct ms_ahead how;           /* the caller's */
	/* The caller's thread's. */
	_Alignas(64) struct ms_stream_stats view;   /* with how.stats: the statistics as at the event taken last */
	struct ms_stream_lost *view_lost;
	size_t nr_view_lost, cap_view_lost;
};

bool ms_ahead_wanted(void)
{
	const char *e = getenv("MAPSCOPE_STREAM_AHEAD");

	if (e && !strcmp(e, "0"))
		return false;
	return (e && !strcmp(e, "1")) || sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

/* Spins until *v is no longer was, or the other side is done or stopped, for SPIN_NS at most. */
static void spin_while(struct ahead *a, const atomic_uint *v, unsigned int was)
{
	uint64_t t0 = 0;
	unsigned int i;

	for (i = 1; atomic_load_explicit(v, memory_order_acquire) == was; i++) {
		if (atomic_load(&a->done) || atomic_load(&a->stop))
			return;
		if (i % 8)
			cpu_relax();
		else
			sched_yield();      /* to the thread waited for, where it is runnable but not running */
		if (i % 64)
			continue;
		if (!t0)
			t0 = ms_monotonic_ns();
		else if (ms_monotonic_ns() - t0 > SPIN_NS)
			return;
	}
}

static size_t up8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * Where an event's copy writes what it points to: from at on, each part
 * rounded up to 8 bytes, n counting them; at NULL only counts.
 */
struct out {
	unsigned char *at;
	size_t n;
};

/* n bytes of p at o->at, which moves past them; the copy, or NULL where p is (or o only counts). */
static const void *put(struct out *o, const void *p, size_t n)
{
	unsigned char *d = o->at;

	if (!p)
		return NULL;
	o->n += up8(n);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, p, n);
	o->at += up8(n);
	return d;
}

static const char *put_str(struct out *o, const char *p)
{
	return p ? put(o, p, strlen(p) + 1) : NULL;
}

/*
 * ev's copy at *d, pointing to copies of what ev points to, written from
 * o->at on. Where the caller unwinds no stack, the copy has no registers
 * or stack copy (4 KiB a map in a recording with them).
 */
static void copy_event(struct ms_event *d, const struct ms_event *ev, struct out *o, bool unwinds)
{
	*d = *ev;
	d->chain = put(o, ev->chain, (size_t)ev->chain_len * 8);
	d->stack = put(o, ev->stack, (size_t)ev->stack_len * 8);
	if (unwinds) {
		d->uregs = put(o, ev->uregs, (size_t)__builtin_popcountll(ev->uregs_mask) * 8);
		d->ustack = put(o, ev->ustack, ev->ustack_len);
	} else {
		d->uregs = NULL;
		d->uregs_mask = 0;
		d->ustack = NULL;
		d->ustack_len = 0;
	}
	switch (ev->kind) {
	case MS_EV_MAP:
		d->map.name = put_str(o, ev->map.name);
		d->map.alloc_chain = put(o, ev->map.alloc_chain, (size_t)ev->map.alloc_chain_len * 8);
		d->map.alloc_stack = put(o, ev->map.alloc_stack, (size_t)ev->map.alloc_stack_len * 8);
		break;
	case MS_EV_EXEC:
	case MS_EV_COMM:
		d->comm.comm = put_str(o, ev->comm.comm);
		break;
	case MS_EV_RENAME:
		d->rename.old_path = put_str(o, ev->rename.old_path);
		d->rename.new_path = put_str(o, ev->rename.new_path);
		d->rename.files = put(o, ev->rename.files, (size_t)ev->rename.nr_files * 16);
		break;
	case MS_EV_VMA_ATTR:
		d->vma_attr.name = put_str(o, ev->vma_attr.name);
		break;
	case MS_EV_SAMPLE:
		d->sample.chain = put(o, ev->sample.chain, (size_t)ev->sample.chain_len * 8);
		break;
	default:
		break;
	}
}

/* The bytes copy_event() writes after ev's copy: the same walk, counting only. */
static size_t extra_of(const struct ms_event *ev, bool unwinds)
{
	struct ms_event scratch;
	struct out o = { NULL, 0 };

	copy_event(&scratch, ev, &o, unwinds);
	return o.n;
}

/* --- the thread ---------------------------------------------------------------- */

/*
 * Hands the batch being filled over (where there is one) and takes the
 * next, with room for need bytes. 0, 1 where the caller stopped taking,
 * -ENOMEM.
 */
static int next_batch(struct ahead *a, size_t need)
{
	struct batch *b;
	size_t cap;

	pthread_mutex_lock(&a->mu);
	if (a->cur) {
		a->tail++;
		a->cur = NULL;
		if (a->wants_work)
			pthread_cond_broadcast(&a->cv);
	}
	if (a->tail - a->head == NR_BATCHES) {
		pthread_mutex_unlock(&a->mu);
		spin_while(a, &a->head, a->tail - NR_BATCHES);
		pthread_mutex_lock(&a->mu);
	}
	while (!atomic_load(&a->stop) && a->tail - a->head == NR_BATCHES) {
		a->wants_room = true;
		pthread_cond_wait(&a->cv, &a->mu);
	}
	a->wants_room = false;
	b = &a->b[a->tail % NR_BATCHES];
	pthread_mutex_unlock(&a->mu);
	if (atomic_load(&a->stop))
		return 1;
	b->len = 0;
	if (b->cap < need) {
		cap = need > BATCH_BYTES ? need : BATCH_BYTES;
		free(b->mem);
		b->cap = 0;
		if (!(b->mem = malloc(cap)))
			return -ENOMEM;
		b->cap = cap;
	}
	a->cur = b;
	return 0;
}

static int put_logged(struct ahead *a);
static int put_facts(struct ahead *a);
static int put_stats(struct ahead *a, const struct ms_stream_stats *now);

/* Field by field: the struct has padding. */
static bool stats_same(const struct ms_stream_stats *x, const struct ms_stream_stats *y)
{
	return x->records == y->records && x->samples == y->samples && x->other_samples == y->other_samples &&
	       x->zero_addr == y->zero_addr && x->kernel_addr == y->kernel_addr && x->unknown_id == y->unknown_id &&
	       x->bad_samples == y->bad_samples && x->bad_records == y->bad_records &&
	       x->unknown_records == y->unknown_records && x->bad_names == y->bad_names && x->lost == y->lost &&
	       x->lost_first == y->lost_first && x->lost_last == y->lost_last &&
	       x->nr_lost_pids == y->nr_lost_pids && x->out_of_order == y->out_of_order &&
	       x->first_time == y->first_time && x->last_time == y->last_time;
}

/* With how.stats, before an event or a run: the stream's statistics, where they changed since the last item. */
static int stats_before(struct ahead *a, uint32_t kind)
{
	struct ms_stream_stats now;

	if (!a->how.stats || (kind != IT_EVENT && kind != IT_RUN))
		return 0;
	ms_stream_stats(a->st, &now);
	return stats_same(&now, &a->stats_sent) && !ms_stream_lost_changed(a->st) ? 0 : put_stats(a, &now);
}

/*
 * Room for an item of kind holding n bytes: its contents' start, NULL with
 * *err set. What the stream logged, and its settings where they changed,
 * go first.
 */
static unsigned char *reserve(struct ahead *a, uint32_t kind, size_t n, int *err)
{
	size_t size = sizeof(struct item) + up8(n);
	struct item *it;

	*err = 0;
	if (kind != IT_LOG && a->log.n && (*err = put_logged(a)))
		return NULL;
	if (kind != IT_LOG && kind != IT_FACTS && a->facts && a->facts->changes != a->facts_seen &&
	    (*err = put_facts(a)))
		return NULL;
	if ((*err = stats_before(a, kind)))
		return NULL;
	if (atomic_load(&a->stop)) {
		*err = 1;
		return NULL;
	}
	if ((!a->cur || a->cur->cap - a->cur->len < size) && (*err = next_batch(a, size)))
		return NULL;
	it = (struct item *)(a->cur->mem + a->cur->len);
	it->kind = kind;
	it->size = (uint32_t)size;
	a->cur->len += size;
	return (unsigned char *)(it + 1);
}

/* What the stream logged since the last item: an item each, at this place among them. */
static int put_logged(struct ahead *a)
{
	unsigned char *p;
	size_t i, len;
	uint32_t level;
	int err = 0;

	for (i = 0; i < a->log.n && !err; i++) {
		len = strlen(a->log.v[i].msg) + 1;
		if ((p = reserve(a, IT_LOG, 4 + len, &err))) {
			level = (uint32_t)a->log.v[i].level;
			memcpy(p, &level, 4);
			memcpy(p + 4, a->log.v[i].msg, len);
		}
	}
	ms_logq_release(&a->log);
	return err;
}

/* The stream's settings, changed since the last item. */
static int put_facts(struct ahead *a)
{
	unsigned char *p;
	int err;

	if (!(p = reserve(a, IT_FACTS, sizeof(*a->facts), &err)))
		return err;
	memcpy(p, a->facts, sizeof(*a->facts));
	a->facts_seen = a->facts->changes;
	return 0;
}

/*
 * The stream's statistics now, and the entries of the processes whose
 * records were lost (ms_stream_lost_pid()) that changed since the last
 * item (all of them in the first): each as its index, then the entry.
 */
struct lost_change {
	uint64_t i;
	struct ms_stream_lost l;
};

static int put_stats(struct ahead *a, const struct ms_stream_stats *now)
{
	const size_t *idx;
	size_t n = ms_stream_lost_changes(a->st, &idx), k;
	struct lost_change c;
	unsigned char *p;
	int err;

	if (!a->lost_sent)
		n = now->nr_lost_pids;        /* the whole list, from the first item on */
	a->stats_sent = *now;              /* first: reserve() asks again */
	if (!(p = reserve(a, IT_STATS, sizeof(*now) + 8 + n * sizeof(c), &err)))
		return err;
	memcpy(p, now, sizeof(*now));
	memcpy(p + sizeof(*now), &(uint64_t){ n }, 8);
	for (k = 0; k < n; k++) {
		c.i = a->lost_sent ? idx[k] : k;
		if (!ms_stream_lost_pid(a->st, (size_t)c.i, &c.l))
			memset(&c.l, 0, sizeof(c.l));
		memcpy(p + sizeof(*now) + 8 + k * sizeof(c), &c, sizeof(c));
	}
	a->lost_sent = true;
	return 0;
}

static int put_event(const struct ms_event *ev, void *ctx)
{
	struct ahead *a = ctx;
	struct out o;
	unsigned char *p;
	int err;

	if (ev->kind == MS_EV_MAP && a->how.map)
		a->how.map(a->how.map_ctx, ev);
	if (!(p = reserve(a, IT_EVENT, sizeof(*ev) + extra_of(ev, a->how.unwinds), &err)))
		return err;
	o = (struct out){ p + sizeof(*ev), 0 };
	copy_event((struct ms_event *)p, ev, &o, a->how.unwinds);
	return 0;
}

/* A run: the ms_samples, its proto, its events where it has them, then what they point to. */
static int put_run(const struct ms_samples *run, void *ctx)
{
	struct ahead *a = ctx;
	size_t n = sizeof(*run), i;
	struct ms_samples *d;
	struct ms_event *evs;
	struct out o;
	unsigned char *p;
	int err;

	n += run->proto ? sizeof(*run->proto) + extra_of(run->proto, a->how.unwinds) : 0;
	for (i = 0; run->evs && i < run->n; i++)
		n += sizeof(*run->evs) + extra_of(&run->evs[i], a->how.unwinds);
	if (!(p = reserve(a, IT_RUN, n, &err)))
		return err;
	d = (struct ms_samples *)p;
	*d = *run;
	o = (struct out){ p + sizeof(*run), 0 };
	if (run->proto) {
		d->proto = (struct ms_event *)o.at;
		o.at += sizeof(*run->proto);
		copy_event((struct ms_event *)d->proto, run->proto, &o, a->how.unwinds);
	}
	if (run->evs) {
		evs = (struct ms_event *)o.at;
		o.at += run->n * sizeof(*evs);
		for (i = 0; i < run->n; i++)
			copy_event(&evs[i], &run->evs[i], &o, a->how.unwinds);
		d->base = (const unsigned char *)evs + (run->base - (const unsigned char *)run->evs);
		d->evs = evs;
	}
	return 0;
}

/* Before each read: the records the caller's thread has passed are released. */
static void release_passed(struct ahead *a)
{
	uint64_t upto = atomic_load_explicit(&a->released, memory_order_acquire);

	if (upto > a->did_release) {
		a->did_release = upto;
		a->src->release(a->src->ctx, upto);
	}
}

/* The reader's build-ids it read since the last item: its new bytes, after their length. */
static int put_ids(struct ahead *a)
{
	size_t size, n;
	const unsigned char *d = ms_pdreader_build_ids(a->how.r, &size);
	unsigned char *p;
	uint64_t len;
	int err;

	if (size <= a->ids_seen)
		return 0;
	n = size - a->ids_seen;
	if (!(p = reserve(a, IT_IDS, 8 + n, &err)))
		return err;
	len = n;
	memcpy(p, &len, 8);
	memcpy(p + 8, d + a->ids_seen, n);
	a->ids_seen = size;
	return 0;
}

static int span(void *ctx, const void **start, size_t *len, uint64_t *off)
{
	struct ahead *a = ctx;
	int ret, err;

	if (atomic_load(&a->stop))
		return -ECANCELED;
	release_passed(a);
	ret = a->src->span(a->src->ctx, start, len, off);
	if (a->how.r && (err = put_ids(a)))
		return err < 0 ? err : -ECANCELED;
	return ret;
}

static void consume(void *ctx, size_t len, size_t last)
{
	struct ahead *a = ctx;

	a->src->consume(a->src->ctx, len, last);
}

static void release(void *ctx, uint64_t upto)
{
	struct ahead *a = ctx;
	unsigned char *p;
	int err;

	if ((p = reserve(a, IT_RELEASE, 8, &err)))
		memcpy(p, &upto, 8);
}

static uint64_t offset_of(void *ctx, const void *rec)
{
	struct ahead *a = ctx;

	return a->src->offset_of(a->src->ctx, rec);
}

static void *run_stream(void *arg)
{
	struct ahead *a = arg;
	/* The recording's lasting bytes are the reader's: a stack copy there is read where it lies. */
	const struct ms_stream_source mine = { a, span, consume, release, offset_of, a->src->lasting_lo,
					       a->src->lasting_hi };
	int err, ret;

	pthread_setname_np(pthread_self(), "mapscope-ahead");   /* as top -H and perf show it */
	ms_log_defer(&a->log);
	err = ms_stream_run(a->st, &mine, put_event, a);
	if (a->how.r && !err)
		err = put_ids(a);
	if (a->log.n && (ret = put_logged(a)) && !err)   /* what it logged last, the error's message among it */
		err = ret;
	ms_log_defer(NULL);
	ms_logq_release(&a->log);
	pthread_mutex_lock(&a->mu);
	if (a->cur)
		a->tail++;
	a->cur = NULL;
	a->done = true;
	a->err = err;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* --- the caller's thread ----------------------------------------------------- */

/*
 * The statistics as the stream had them at the next event, the entries of
 * lost processes that changed put in place: kept, to be the stream's if
 * the caller stops there.
 */
static int take_stats(struct ahead *a, const unsigned char *p)
{
	struct ms_stream_lost *l;
	struct lost_change c;
	uint64_t n, k;
	size_t want;

	memcpy(&a->view, p, sizeof(a->view));
	memcpy(&n, p + sizeof(a->view), 8);
	want = a->view.nr_lost_pids;
	if (want > a->cap_view_lost) {
		if (!(l = realloc(a->view_lost, want * sizeof(*l))))
			return -ENOMEM;
		memset(l + a->cap_view_lost, 0, (want - a->cap_view_lost) * sizeof(*l));
		a->view_lost = l;
		a->cap_view_lost = want;
	}
	for (k = 0; k < n; k++) {
		memcpy(&c, p + sizeof(a->view) + 8 + k * sizeof(c), sizeof(c));
		if (c.i < want)
			a->view_lost[c.i] = c.l;
	}
	a->nr_view_lost = want;
	return 0;
}

static int take_batch(struct ahead *a, const struct batch *b)
{
	const unsigned char *p = b->mem, *end = b->mem + b->len;
	const struct item *it;
	uint64_t upto, len;
	uint32_t level;
	int err = 0;

	for (; p < end && !err; p += it->size) {
		it = (const struct item *)p;
		switch (it->kind) {
		case IT_EVENT:
			err = a->how.fn((const struct ms_event *)(it + 1), a->how.ctx);
			break;
		case IT_RUN:
			err = a->how.sfn((const struct ms_samples *)(it + 1), a->how.ctx);
			break;
		case IT_RELEASE:
			memcpy(&upto, it + 1, 8);
			atomic_store_explicit(&a->released, upto, memory_order_release);
			break;
		case IT_LOG:
			memcpy(&level, it + 1, 4);
			ms_log((enum ms_log_level)level, "%s", (const char *)(it + 1) + 4);
			break;
		case IT_IDS:
			memcpy(&len, it + 1, 8);
			a->how.ids(a->how.ctx, (const unsigned char *)(it + 1) + 8, (size_t)len);
			break;
		case IT_FACTS:
			a->how.facts(a->how.ctx, (const struct ms_stream_facts *)(it + 1));
			break;
		case IT_STATS:
			err = take_stats(a, (const unsigned char *)(it + 1));
			break;
		}
	}
	return err;
}

/* Takes the batches as they come, until the stream ends or a call returns nonzero. */
static int take_all(struct ahead *a)
{
	const struct batch *b;
	int err;

	for (;;) {
		if (a->head == a->tail)
			spin_while(a, &a->tail, a->head);
		pthread_mutex_lock(&a->mu);
		while (a->head == a->tail && !a->done) {
			a->wants_work = true;
			pthread_cond_wait(&a->cv, &a->mu);
		}
		a->wants_work = false;
		if (a->head == a->tail) {
			err = a->err;
			pthread_mutex_unlock(&a->mu);
			return err;
		}
		b = &a->b[a->head % NR_BATCHES];
		pthread_mutex_unlock(&a->mu);
		err = take_batch(a, b);
		pthread_mutex_lock(&a->mu);
		a->head++;
		/* Woken with half the batches to fill, the thread has the other half's time to wake. */
		if (err)
			atomic_store(&a->stop, true);
		if (err || (a->wants_room && a->tail - a->head <= NR_BATCHES / 2))
			pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (err)
			return err;
	}
}

int ms_ahead_run(struct ms_stream *st, const struct ms_stream_source *src, const struct ms_ahead *how)
{
	/* Aligned as its parts are: the thread's and the caller's on lines of their own. */
	struct ahead *a = aligned_alloc(_Alignof(struct ahead), sizeof(*a));
	pthread_t th;
	size_t i;
	int err;

	if (a) {
		memset(a, 0, sizeof(*a));
		a->st = st;
		a->src = src;
		a->how = *how;
		a->ids_seen = how->ids_from;
		a->facts = how->facts ? ms_stream_facts(st) : NULL;
		a->facts_seen = a->facts ? a->facts->changes : 0;
		pthread_mutex_init(&a->mu, NULL);
		pthread_cond_init(&a->cv, NULL);
	}
	if (a && how->stats)
		ms_stream_note_lost_changes(st, true);
	if (!a || (how->sfn && ms_stream_set_samples_fn(st, put_run)) || pthread_create(&th, NULL, run_stream, a)) {
		ms_stream_note_lost_changes(st, false);
		if (a) {
			pthread_mutex_destroy(&a->mu);
			pthread_cond_destroy(&a->cv);
		}
		free(a);
		if (how->sfn)
			ms_stream_set_samples_fn(st, how->sfn);
		return -EAGAIN;
	}
	err = take_all(a);
	pthread_join(th, NULL);
	ms_stream_note_lost_changes(st, false);
	/* Stopped by the caller: the statistics are those at the event it stopped at, as in turn. */
	if (err > 0 && how->stats && a->view.records)
		ms_stream_restore_stats(st, &a->view, a->view_lost, a->nr_view_lost);
	free(a->view_lost);
	for (i = 0; i < NR_BATCHES; i++)
		free(a->b[i].mem);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
	if (how->sfn)
		ms_stream_set_samples_fn(st, how->sfn);   /* as a stream run in turn leaves it */
	return err;
}
