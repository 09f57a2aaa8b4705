/*
 * perf record -z's data, decompressed (the reader's raw input, see
 * reader_impl.h): each COMPRESSED record replaced by what it holds.
 *
 * zstd takes about a third of a compressed recording's replay, and a
 * replay is one thread: where the machine has another CPU, a thread of
 * its own decompresses ahead, into a few chunks that fill() then copies
 * from. It works only from the raw input (the file descriptor, zstd's
 * state), which nothing else touches once it runs; what it would log
 * waits with the chunk it came after, and is handed on when fill() gets
 * there, so the log and the records come in the same order as without
 * it. A regular file only, with 1 MiB or more left to read;
 * MAPSCOPE_READ_AHEAD=0 decompresses in turn, as fill() asks, and 1 ahead
 * whatever is left.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata/format.h"
#include "perfdata/reader_impl.h"
#include "util/log.h"

/* The input buffer: a read of 256 KiB, after a record's unread part (64 KiB at most). */
#define RAW_CAP ((256u << 10) + (64u << 10))


/* Makes need bytes of input available at raw->lo. 1, 0 when the input ends first, or -errno. */
static int raw_fill(struct ms_pdreader *r, size_t need)
{
	struct raw *w = r->raw;
	ssize_t k;

	while (w->hi - w->lo < need) {
		if (w->eof)
			return 0;
		if (w->lo) {
			memmove(w->buf, w->buf + w->lo, w->hi - w->lo);
			w->hi -= w->lo;
			w->lo = 0;
		}
		if ((k = pdreader_read_input(r, w->buf + w->hi, RAW_CAP - w->hi, w->at)) < 0)
			return (int)k;
		if (k == 0)
			w->eof = true;
		w->hi += (size_t)k;
		w->at += (uint64_t)k;
	}
	return 1;
}

/*
 * Starts decompressing the compressed record h describes, whole in the
 * buffer at raw->lo (where it may lie unaligned: COMPRESSED records have
 * any size).
 */
static int raw_start_compressed(struct ms_pdreader *r, const struct perf_event_header *h)
{
	struct raw *w = r->raw;
	const unsigned char *p = w->buf + w->lo + sizeof(*h);
	uint64_t len = h->size - sizeof(*h);

	if (h->type == PERF_RECORD_COMPRESSED2) {
		if (len < 8)
			return pdreader_bad(w->rec_off, "a compressed record is too short");
		memcpy(&len, p, 8);
		p += 8;
		if (len > h->size - sizeof(*h) - 8u)
			return pdreader_bad(w->rec_off, "a compressed record's data size is larger than the record");
		/* perf pads the data to 8 bytes, no more: a smaller size would leave data unread. */
		if (h->size - sizeof(*h) - 8u - len >= 8)
			return pdreader_bad(w->rec_off, "a compressed record's data size is smaller than its data");
	}
	w->zin = (ZSTD_inBuffer){ p, (size_t)len, 0 };
	w->zin_total += len;
	w->zrec = h->size;
	w->zflush = false;
	return 0;
}

/*
 * How far compressed data may expand: perf record -z's page faults about
 * 12 to 1; mapscope record's own up to 643 to 1 (-z 19; 576 at its
 * default level) where every fault of a loop copies 8 KiB of a near-alike
 * stack (--call-graph dwarf), each still with a new time and address. A
 * crafted record (a "zstd bomb") expands 10,000 to 1 and more. Past
 * RAW_FLOOR bytes, the data may not have expanded more than RAW_RATIO
 * times what was read of it.
 */
#define RAW_RATIO 2048u
#define RAW_FLOOR (16u << 20)

/* After zstd handed on more: refuses what no recording expands to, or data cut inside a block. */
static int raw_check(struct ms_pdreader *r, size_t more, size_t hint)
{
	struct raw *w = r->raw;

	w->zout_total += more;
	w->zhint = hint;
	if (w->zout_total <= RAW_FLOOR || w->zout_total / RAW_RATIO <= w->zin_total)
		return 0;
	ms_err("corrupt perf.data at byte offset %llu: refusing compressed data that expands to more than "
	       "%u times its size (%llu bytes from %llu): no recording compresses so well, so it is "
	       "damaged or made to exhaust the reader; what follows is left out",
	       (unsigned long long)w->rec_off, RAW_RATIO, (unsigned long long)w->zout_total,
	       (unsigned long long)w->zin_total);
	return -EBADMSG;
}

/*
 * At the end of the input: zstd must not hold part of a block. perf
 * flushes at the end of each stretch it compresses, so its data ends on a
 * block boundary (hint 3, a block header, or 0, a frame's end); a record
 * whose data was cut, or a data size that leaves part out, ends inside
 * one, and the records the rest would have held are lost.
 */
static int raw_end(struct ms_pdreader *r)
{
	struct raw *w = r->raw;

	if (w->zhint <= 3)               /* ZSTD_blockHeaderSize, not in zstd's stable API */
		return 0;
	if (r->unfinished) {             /* where writing stopped, as cut_short() says */
		ms_warn("the compressed data ends inside a zstd block where writing stopped: the records "
			"it held are left out");
		return 0;
	}
	return pdreader_bad(w->rec_off, "the compressed data ends inside a zstd block: the records it "
			    "held are cut short");
}

/*
 * Damage met after n bytes were made in this call: they are handed on,
 * and the error (err, logged already) waits for the next call, so that
 * what came before the damage is never lost, however the calls cut the
 * stream.
 */
static ssize_t partial(struct raw *w, size_t n, ssize_t err)
{
	if (!n)
		return err;
	w->pending = (int)err;
	return (ssize_t)n;
}

/*
 * Hands on up to room bytes of the decompressed stream at out: the number,
 * 0 at the end of the input, or -errno (-EBADMSG logged).
 */
static ssize_t raw_produce(struct ms_pdreader *r, unsigned char *out, size_t room)
{
	struct raw *w = r->raw;
	struct perf_event_header h;
	ZSTD_outBuffer o;
	size_t n = 0, k, zr;
	int ret;

	while (n < room) {
		if (w->zrec) {
			o = (ZSTD_outBuffer){ out + n, room - n, 0 };
			zr = ZSTD_decompressStream(w->dctx, &o, &w->zin);
			if (ZSTD_isError(zr)) {
				ms_err("corrupt perf.data at byte offset %llu: the compressed data does not "
				       "decompress: %s", (unsigned long long)w->rec_off, ZSTD_getErrorName(zr));
				return partial(w, n, -EBADMSG);
			}
			n += o.pos;
			if ((ret = raw_check(r, o.pos, zr)))
				return partial(w, n, ret);
			w->zflush = o.pos == o.size;
			if (w->zin.pos == w->zin.size && !w->zflush) {
				w->lo += w->zrec;        /* all of it handed on */
				w->rec_off += w->zrec;
				w->zrec = 0;
			}
			continue;
		}
		if (w->copy) {
			if (w->hi == w->lo && (ret = raw_fill(r, 1)) <= 0)
				return partial(w, n, ret < 0 ? ret : pdreader_bad(w->rec_off,
										  "the data ends inside a record"));
			k = w->hi - w->lo;
			k = k < w->copy ? k : w->copy;
			k = k < room - n ? k : room - n;
			memcpy(out + n, w->buf + w->lo, k);
			n += k;
			w->lo += k;
			w->copy -= k;
			w->rec_off += k;
			continue;
		}
		if ((ret = raw_fill(r, sizeof(h))) <= 0) {
			if (ret < 0)
				return partial(w, n, ret);
			if (w->hi != w->lo)
				return partial(w, n, pdreader_bad(w->rec_off, "the data ends inside a record header"));
			if (!n && (ret = raw_end(r)))
				return partial(w, n, ret);
			break;
		}
		memcpy(&h, w->buf + w->lo, sizeof(h));   /* after a COMPRESSED record: unaligned */
		if (h.size < sizeof(h))
			return partial(w, n, pdreader_bad(w->rec_off, "a record's size is smaller than its header"));
		if (h.type != PERF_RECORD_COMPRESSED && h.type != PERF_RECORD_COMPRESSED2) {
			w->copy = h.size;        /* handed on as it is, checked above like any other */
			continue;
		}
		if ((ret = raw_fill(r, h.size)) <= 0)
			return partial(w, n, ret < 0 ? ret : pdreader_bad(w->rec_off, "a compressed record runs "
										  "past the end of the data"));
		if ((ret = raw_start_compressed(r, &h)))
			return partial(w, n, ret);
	}
	return (ssize_t)n;
}


/*
 * raw_produce(), its messages held where damage waits behind bytes still
 * to hand on, and logged when the damage is reached: the log then says it
 * after the records before it, however the calls cut the stream.
 */
static ssize_t produce(struct ms_pdreader *r, unsigned char *out, size_t room)
{
	struct raw *w = r->raw;
	struct ms_logq *outer = ms_log_deferred();
	ssize_t k;

	if (w->pending) {
		ms_logq_flush(&w->held);
		return w->pending;
	}
	ms_log_defer(&w->held);
	k = raw_produce(r, out, room);
	ms_log_defer(outer);
	if (!w->pending)
		ms_logq_flush(&w->held);
	return k;
}

/* --- working ahead ------------------------------------------------------- */

#define AHEAD_CHUNK (256u << 10)
#define AHEAD_SLOTS 3u
#define AHEAD_MIN (1u << 20)            /* compressed bytes left to read, at least */

struct ahead_slot {
	unsigned char *data;
	size_t len, pos;             /* bytes in data, and how many were taken */
	ssize_t ret;                 /* what raw_produce() said: > 0, or 0 (the end) or -errno, the last slot */
	struct ms_logq log;          /* what it logged meanwhile */
};

struct rawahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ahead_slot slot[AHEAD_SLOTS];
	unsigned int head, tail;     /* slots taken by fill(), and filled: head <= tail <= head + AHEAD_SLOTS */
	bool stop;                   /* the reader goes away */
};

static void *work_ahead(void *arg)
{
	struct ms_pdreader *r = arg;
	struct rawahead *a = r->raw->ahead;
	struct ahead_slot *s;
	ssize_t k;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->stop && a->tail - a->head == AHEAD_SLOTS)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop)
			break;
		s = &a->slot[a->tail % AHEAD_SLOTS];
		pthread_mutex_unlock(&a->mu);
		ms_log_defer(&s->log);
		k = produce(r, s->data, AHEAD_CHUNK);
		ms_log_defer(NULL);
		pthread_mutex_lock(&a->mu);
		s->len = k > 0 ? (size_t)k : 0;
		s->pos = 0;
		s->ret = k;
		a->tail++;
		pthread_cond_broadcast(&a->cv);
		if (k <= 0)
			break;
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static void ahead_free(struct rawahead *a)
{
	unsigned int i;

	for (i = 0; i < AHEAD_SLOTS; i++) {
		if (a->slot[i].data)
			munmap(a->slot[i].data, AHEAD_CHUNK);
		ms_logq_release(&a->slot[i].log);
	}
	free(a);
}

int pdreader_raw_ahead(struct ms_pdreader *r)
{
	const char *env = getenv("MAPSCOPE_READ_AHEAD");
	bool never = env && !strcmp(env, "0"), always = env && !strcmp(env, "1");
	struct rawahead *a;
	unsigned int i;

	/*
	 * A pipe could block the thread in read() for ever, and the reader's
	 * end would wait for it; under AHEAD_MIN of input, the thread and its
	 * chunks cost more than they save.
	 */
	if (!r->map || never || (!always && r->end < r->raw->at + AHEAD_MIN) || sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    !(a = calloc(1, sizeof(*a))))
		return 0;
	/* Mapped with their pages in place, as the reader's blocks are: one call, not a fault a page. */
	for (i = 0; i < AHEAD_SLOTS; i++) {
		a->slot[i].data = mmap(NULL, AHEAD_CHUNK, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (a->slot[i].data == MAP_FAILED) {
			a->slot[i].data = NULL;
			ahead_free(a);
			return 0;                /* in turn, then */
		}
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	r->raw->ahead = a;
	if (pthread_create(&a->thread, NULL, work_ahead, r)) {
		r->raw->ahead = NULL;
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		ahead_free(a);
	}
	return 0;
}

/* Up to room bytes from the slots filled ahead, waiting for one where none is; as raw_produce() says. */
static ssize_t take_ahead(struct rawahead *a, unsigned char *out, size_t room)
{
	struct ahead_slot *s;
	size_t n = 0, k;

	while (n < room) {
		pthread_mutex_lock(&a->mu);
		while (a->head == a->tail)
			pthread_cond_wait(&a->cv, &a->mu);
		s = &a->slot[a->head % AHEAD_SLOTS];
		pthread_mutex_unlock(&a->mu);
		if (s->ret <= 0) {       /* the end, or damage: after what came before it */
			if (n)
				break;
			ms_logq_flush(&s->log);
			return s->ret;
		}
		if (!s->pos)
			ms_logq_flush(&s->log);
		k = s->len - s->pos < room - n ? s->len - s->pos : room - n;
		memcpy(out + n, s->data + s->pos, k);
		n += k;
		s->pos += k;
		if (s->pos == s->len) {
			pthread_mutex_lock(&a->mu);
			a->head++;
			pthread_cond_broadcast(&a->cv);
			pthread_mutex_unlock(&a->mu);
		}
	}
	return (ssize_t)n;
}

ssize_t pdreader_raw_take(struct ms_pdreader *r, unsigned char *out, size_t room)
{
	return r->raw->ahead ? take_ahead(r->raw->ahead, out, room) : produce(r, out, room);
}

int pdreader_raw_new(struct ms_pdreader *r, const void *rec, size_t have, uint64_t at, bool eof)
{
	struct raw *w = calloc(1, sizeof(*w));

	if (!w || !(w->buf = malloc(RAW_CAP)) || !(w->dctx = ZSTD_createDCtx())) {
		if (w)
			free(w->buf);
		free(w);
		return -ENOMEM;
	}
	memcpy(w->buf, rec, have);
	w->hi = have;
	w->rec_off = r->last_off;
	w->at = at;
	w->eof = eof;
	r->raw = w;
	return 0;
}

void pdreader_raw_free(struct ms_pdreader *r)
{
	struct raw *w = r->raw;
	struct rawahead *a;

	if (!w)
		return;
	if ((a = w->ahead)) {
		pthread_mutex_lock(&a->mu);
		a->stop = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		ahead_free(a);
	}
	ms_logq_release(&w->held);
	ZSTD_freeDCtx(w->dctx);
	free(w->buf);
	free(w);
	r->raw = NULL;
}
