/*
 * perf.data reader. A regular file's headers, feature sections and
 * uncompressed data (stdin's too, where it is one) are read from a
 * mapping of the file: records are handed out in place there, its pages
 * mapped a megabyte ahead of the reader (populate_ahead()) and let go
 * behind it (drop_behind()), each 2 MiB with one PMD where the page cache
 * holds 2 MiB folios. The data of a pipe, and of a compressed file from
 * its first compressed record on, is read in large blocks into a small
 * buffer used again and again (fill()), as cat reads. Both layouts are
 * accepted from either: perf's pipe mode saved to a file starts with a
 * 16-byte header instead of the 104-byte one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <mapscope/pdreader.h>

#include "perfdata/evlist.h"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "perfdata/reader_impl.h"
#include "util/buf.h"
#include "util/log.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22   /* Linux 5.14 */
#endif

int pdreader_bad(uint64_t off, const char *what)
{
	ms_err("corrupt perf.data at byte offset %llu: %s", (unsigned long long)off, what);
	return -EBADMSG;
}

static int read_full(int fd, void *p, size_t n)
{
	unsigned char *c = p;
	ssize_t k;

	while (n) {
		k = read(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ENODATA;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}


static int open_stream(struct ms_pdreader *r, const char *path)
{
	struct stat st;
	int saved;

	r->fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	r->own_fd = r->fd != STDIN_FILENO;
	if (r->fd < 0)
		return -errno;
	if (fstat(r->fd, &st))
		return -errno;
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		r->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, r->fd, 0);
		if (r->map == MAP_FAILED) {
			r->map = NULL;
			return -errno;
		}
		r->map_len = (uint64_t)st.st_size;
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);   /* hints: failure is harmless */
		/*
		 * Pages read in from the disk come into the page cache as 2 MiB
		 * folios, mapped with one PMD each, as the writer leaves them
		 * (writer.c, grow()): the commands after this one read them at
		 * a tenth of the cost (docs/PERFORMANCE.md, round 27).
		 */
		saved = errno;               /* EINVAL without THP: nobody's business */
		madvise((void *)(uintptr_t)r->map, (size_t)st.st_size, MADV_HUGEPAGE);
		errno = saved;
	}
	return 0;
}

static int read_leading_records(struct ms_pdreader *r);

MS_EXPORT struct ms_pdreader *ms_pdreader_open(const char *path)
{
	struct perf_pipe_file_header ph;
	struct ms_pdreader *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = -1;
	ms_buf_init(&r->tracing);
	ms_buf_init(&r->build_ids);
	err = open_stream(r, path);
	if (err) {
		ms_err("cannot open '%s': %s", path, strerror(-err));
		goto fail;
	}
	if (r->map) {
		if (r->map_len < sizeof(ph)) {
			err = pdreader_bad(0, "the file is shorter than any perf.data header");
			goto fail;
		}
		memcpy(&ph, r->map, sizeof(ph));
	} else if ((err = read_full(r->fd, &ph, sizeof(ph)))) {
		if (err == -ENODATA)
			err = pdreader_bad(0, "the input ended before a perf.data header");
		else
			ms_err("cannot read '%s': %s", path, strerror(-err));
		goto fail;
	}
	if (ph.magic != PERF_MAGIC2) {
		err = pdreader_bad(0, ph.magic == __builtin_bswap64(PERF_MAGIC2) ?
			  "a big-endian recording, which this build cannot read" :
			  ph.magic == PERF_MAGIC1 ?
			  "a PERFFILE (version 1) recording, written by perf before Linux 2.6.37, which "
			  "this build does not read: record it again with a newer perf" :
			  "not a perf.data file (no PERFILE2 magic)");
		goto fail;
	}
	r->pipe_layout = ph.size == sizeof(ph);
	if (r->pipe_layout) {
		r->pos = sizeof(ph);
		r->end = r->map ? r->map_len : UINT64_MAX;
		if (r->map && lseek(r->fd, (off_t)r->pos, SEEK_SET) < 0)
			goto fail_errno;
		if ((err = read_leading_records(r)))
			goto fail;
	} else if (!r->map) {
		/* Not damage: its header points at sections further on, and a pipe cannot seek. */
		ms_err("%s%s%s is a file-mode recording, which cannot be read from a pipe or FIFO (its header "
		       "points at sections further on): pass the file itself with -i FILE, or record in pipe mode "
		       "(mapscope record -o -, perf record -o -)", strcmp(path, "-") ? "'" : "",
		       strcmp(path, "-") ? path : "standard input", strcmp(path, "-") ? "'" : "");
		err = -ESPIPE;
		goto fail;
	} else if ((err = pdreader_open_file_layout(r)))
		goto fail;
	else if (lseek(r->fd, (off_t)r->pos, SEEK_SET) < 0)
		goto fail_errno;
	else if ((err = read_leading_records(r)))
		goto fail;
	return r;
fail_errno:
	err = -errno;
	ms_err("cannot read '%s': %s", path, strerror(errno));
fail:
	ms_pdreader_free(r);
	errno = -err;
	return NULL;
}

/*
 * Each read fills up to BLOCK bytes of a block, after the piece of a record
 * that the block before ended with (64 KiB at most, a record's largest
 * size). A block is small enough to stay in the CPU's cache while its
 * records are decoded. Without keep, one block is used again and again;
 * with keep, a block whose records are still wanted is kept until
 * ms_pdreader_release() says they are not, and blocks are used again from
 * then on, so the records are never copied.
 */
#define BLOCK (256u << 10)
#define BUF_CAP (BLOCK + (64u << 10))

static struct block *block_get(struct ms_pdreader *r)
{
	struct block *b = r->spare;

	if (b) {
		r->spare = b->next;
		return b;
	}
	/*
	 * Mapped with its pages in place: every page of a block is written by
	 * the reads, and one call maps them for much less than a fault each.
	 */
	b = mmap(NULL, sizeof(*b) + BUF_CAP, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return b == MAP_FAILED ? NULL : b;
}

static void block_free(struct block *b)
{
	if (b)
		munmap(b, sizeof(*b) + BUF_CAP);
}

/* Starts a new block with the bytes not yet consumed (a record's first part). */
static int next_block(struct ms_pdreader *r)
{
	struct block *b = block_get(r);

	if (!b)
		return -ENOMEM;
	memcpy(b->data, r->buf + r->bpos, r->blen - r->bpos);
	r->cur->base = r->pos - r->bpos;
	r->cur->end = r->pos;
	r->cur->next = NULL;
	if (r->held_tail)
		r->held_tail->next = r->cur;
	else
		r->held = r->cur;
	r->held_tail = r->cur;
	r->cur = b;
	r->buf = b->data;
	r->blen -= r->bpos;
	r->bpos = 0;
	return 0;
}

/*
 * Reads up to room bytes of the input, the next of which lies at file
 * offset at, into p, never past the end of the data (a file's feature
 * sections follow it): how many, 0 at the end, or -errno.
 */
ssize_t pdreader_read_input(const struct ms_pdreader *r, void *p, size_t room, uint64_t at)
{
	ssize_t k;

	if (r->end - at < room)
		room = (size_t)(r->end - at);
	if (!room)
		return 0;
	do
		k = read(r->fd, p, room);
	while (k < 0 && errno == EINTR);
	return k < 0 ? -errno : k;
}

/* From pos on, the data is read into blocks: the file descriptor goes there. 0 or -errno. */
static int leave_map(struct ms_pdreader *r)
{
	r->mapped = false;
	r->no_map = true;
	r->buf = NULL;
	r->bpos = r->blen = 0;
	r->eof = false;
	return lseek(r->fd, (off_t)r->pos, SEEK_SET) < 0 ? -errno : 0;
}

/*
 * Lets go of the mapped pages well behind pos, so that memory stays
 * small however large the file: a record still held there is read again
 * from the page cache if it is touched (the mapping is private and never
 * written, so its bytes do not change). Whole 2 MiB steps of the file
 * at a time: where the page cache holds 2 MiB folios (writer.c, grow()),
 * each is mapped with one PMD, let go whole rather than split into 512
 * entries first, and each call costs the other thread a TLB flush.
 */
#define DROP_STEP (512u << 10)
#define DROP_ALIGN (2u << 20)
static inline void drop_behind(struct ms_pdreader *r)
{
	uint64_t upto, done = r->keep ? r->released : r->pos;   /* no record below is held */

	if (!r->mapped || done < r->dropped + 2 * (uint64_t)DROP_STEP)
		return;
	upto = (done - DROP_STEP) & ~(uint64_t)(DROP_ALIGN - 1);
	if (upto <= r->dropped)
		return;
	madvise((void *)(uintptr_t)(r->map + r->dropped), (size_t)(upto - r->dropped), MADV_DONTNEED);
	r->dropped = upto;
}

/*
 * Maps the pages ahead of pos before they are read, POPULATE_STEP at a
 * time, one call where the reads would fault every 64 KiB (the kernel's
 * fault-around): a page fault cost 10-12 us on the PVM guest measured
 * here, and a plain recording of chromium's page load faulted ~260 times
 * reading its 29 MB. Kernels before 5.14 refuse the advice (EINVAL): the
 * pages then fault in as before.
 */
#define POPULATE_STEP (1u << 20)
static inline void populate_ahead(struct ms_pdreader *r)
{
	uint64_t from, to;
	int saved;

	if (!r->mapped || r->no_populate || r->pos + POPULATE_STEP / 2 < r->populated || r->populated >= r->map_len)
		return;
	saved = errno;
	from = r->populated > r->pos ? r->populated : r->pos & ~(uint64_t)4095;
	to = from + POPULATE_STEP < r->map_len ? from + POPULATE_STEP : r->map_len;
	/* Any other failure (EFAULT: the file cut short under the map) leaves the pages to fault in as read. */
	if (madvise((void *)(uintptr_t)(r->map + from), (size_t)(to - from), MADV_POPULATE_READ) && errno == EINVAL)
		r->no_populate = true;
	r->populated = to;
	errno = saved;
}

/*
 * At the first compressed record (just moved past): the bytes from it on,
 * read already, become raw input, and fill() decompresses from then on
 * (decompress.c), working ahead once the file descriptor is where it
 * reads from.
 */
int pdreader_start_raw(struct ms_pdreader *r, const struct perf_event_header *rec)
{
	bool mapped = r->mapped;
	/* Mapped, only the record itself: what follows is read from the file descriptor. */
	size_t have = mapped ? rec->size : r->blen - r->bpos + rec->size;
	uint64_t at = mapped ? r->pos : r->pos + (r->blen - r->bpos);
	int err = pdreader_raw_new(r, rec, have, at, !mapped && r->eof);   /* rec lies just before bpos */

	if (err)
		return err;
	if (mapped) {
		if ((err = leave_map(r)))
			return err;
	} else {
		r->eof = false;
		r->blen = r->bpos;
	}
	return pdreader_raw_ahead(r);
}

/*
 * Makes at least need bytes from pos available in buf, reading more where
 * needed. 1 when they are there, 0 when the input ends first, or -errno.
 */
static int fill(struct ms_pdreader *r, size_t need)
{
	size_t room;
	ssize_t k;
	int err;

	while (r->blen - r->bpos < need) {
		if (r->eof)
			return 0;
		if (!r->cur && r->map && !r->raw && !r->no_map) {
			r->mapped = true;
			r->buf = (unsigned char *)(uintptr_t)r->map;
			r->bpos = (size_t)r->pos;
			r->blen = (size_t)(r->end < r->map_len ? r->end : r->map_len);
			r->dropped = r->pos & ~(uint64_t)(DROP_ALIGN - 1);   /* the header's pages go too */
			r->eof = true;
			continue;
		}
		if (!r->cur) {
			if (!(r->cur = block_get(r)))
				return -ENOMEM;
			r->buf = r->cur->data;
		}
		if (BUF_CAP - r->blen < BLOCK && r->bpos) {   /* no room for a whole read */
			if (r->keep) {
				if ((err = next_block(r)))
					return err;
			} else {
				memmove(r->buf, r->buf + r->bpos, r->blen - r->bpos);
				r->blen -= r->bpos;
				r->bpos = 0;
			}
		}
		room = BUF_CAP - r->blen;
		if (room > BLOCK)
			room = BLOCK;
		k = r->raw ? pdreader_raw_take(r, r->buf + r->blen, room) :
			     pdreader_read_input(r, r->buf + r->blen, room, r->pos + (r->blen - r->bpos));
		if (k < 0)
			return (int)k;
		if (k == 0)
			r->eof = true;
		r->blen += (size_t)k;
	}
	return 1;
}

void ms_pdreader_keep(struct ms_pdreader *r, bool keep)
{
	r->keep = keep;
	if (!keep)
		ms_pdreader_release(r, UINT64_MAX);
}

void ms_pdreader_release(struct ms_pdreader *r, uint64_t upto)
{
	struct block *b;

	if (r->mapped && upto > r->released && upto != UINT64_MAX) {
		r->released = upto;
		drop_behind(r);
	}

	while ((b = r->held) && b->end <= upto) {
		r->held = b->next;
		if (!r->held)
			r->held_tail = NULL;
		b->next = r->spare;
		r->spare = b;
	}
}

/*
 * After a header record whose size is not a multiple of 8 (perf 6.1 writes
 * feature records padded to 4), the bytes not yet consumed move back onto
 * an 8-byte boundary of the buffer, so that every record handed out is
 * aligned as the kernel's are. The bytes they cover are the header
 * record's own tail, already taken; file offsets do not change.
 */
static int realign(struct ms_pdreader *r)
{
	size_t shift = r->bpos % 8;

	if (!shift)
		return 0;
	if (r->mapped)
		return leave_map(r);     /* the map cannot move: read into blocks from here */
	memmove(r->buf + r->bpos - shift, r->buf + r->bpos, r->blen - r->bpos);
	r->bpos -= shift;
	r->blen -= shift;
	return 0;
}

/*
 * Records the reader takes itself and never hands out: pipe mode's
 * headers, build-ids, AUX trace data, compressed records, and any of
 * perf's own records whose size is not a multiple of 8 (perf writes
 * build-id and CPU map records so), after which the bytes that follow are
 * realigned. The kernel's records (types below 64) are handed out.
 */
static inline bool reader_owns(const struct ms_pdreader *r, const struct perf_event_header *rec)
{
	if (rec->type < 64)
		return false;
	switch (rec->type) {
	case PERF_RECORD_HEADER_ATTR:
	case PERF_RECORD_HEADER_FEATURE:
	case PERF_RECORD_HEADER_TRACING_DATA:
		return r->pipe_layout || rec->size % 8;
	case PERF_RECORD_HEADER_BUILD_ID:
	case PERF_RECORD_EVENT_UPDATE:
	case PERF_RECORD_AUXTRACE:
	case PERF_RECORD_COMPRESSED:
	case PERF_RECORD_COMPRESSED2:
		return true;
	}
	return rec->size % 8;
}

/*
 * The input ends inside a record. In a file its recorder never closed,
 * that is where writing stopped: the end. Anywhere else it is damage.
 */
static int cut_short(struct ms_pdreader *r)
{
	if (!r->unfinished)
		return pdreader_bad(r->pos, "the data ends inside a record header");
	ms_warn("the last record, at byte offset %llu, is cut short where writing stopped: "
		"it is left out", (unsigned long long)r->pos);
	r->bpos = r->blen;
	return 0;
}

static int raw_next(struct ms_pdreader *r, const struct perf_event_header **rec)
{
	const struct perf_event_header *h;
	int ret;

	if (r->blen - r->bpos < sizeof(*h) && (ret = fill(r, sizeof(*h))) <= 0) {
		if (ret < 0)
			return ret;
		return r->bpos == r->blen ? 0 : cut_short(r);
	}
	h = (const void *)(r->buf + r->bpos);
	if (h->size < sizeof(*h))
		return pdreader_bad(r->pos, "a record's size is smaller than its header");
	/* The kernel pads its records to 8 bytes; perf's own, the reader takes and realigns after. */
	if (h->size % 8 && h->type < 64)
		return pdreader_bad(r->pos, "a record's size is not a multiple of 8");
	if (r->blen - r->bpos < h->size && (ret = fill(r, h->size)) <= 0)
		return ret < 0 ? ret : r->unfinished ? cut_short(r) :
		       pdreader_bad(r->pos, r->map ? "a record runs past the end of the data" :
			   "the input ends inside a record");
	*rec = (const void *)(r->buf + r->bpos);
	return 1;
}

/* Moves past the record raw_next returned. */
static void advance(struct ms_pdreader *r, const struct perf_event_header *rec)
{
	r->bpos += rec->size;
	r->pos += rec->size;
}

/*
 * Takes the n bytes that follow a record outside its size (tracing data,
 * AUX data) into b, or past them where b is NULL. 0 or -errno.
 */
int pdreader_take_bytes(struct ms_pdreader *r, uint64_t n, struct ms_buf *b, const char *what)
{
	uint64_t k;
	int err;

	if (n > r->end - r->pos)
		return pdreader_bad(r->last_off, what);
	while (n) {
		if ((err = fill(r, 1)) <= 0)
			return err ? err : pdreader_bad(r->last_off, what);
		k = r->blen - r->bpos < n ? r->blen - r->bpos : n;
		if (b) {
			ms_buf_append(b, r->buf + r->bpos, (size_t)k);
			if ((err = ms_buf_error(b)))
				return err;
		}
		r->bpos += (size_t)k;
		r->pos += k;
		n -= k;
	}
	return 0;
}


/*
 * The offset of the record handed out last: a word another thread may read
 * while this one reads on (ms_pdreader_offset(): the progress line), so
 * written whole, with no order asked of it.
 */
static inline void set_last_off(struct ms_pdreader *r, uint64_t off)
{
	__atomic_store_n(&r->last_off, off, __ATOMIC_RELAXED);
}

static int next_record(struct ms_pdreader *r, const struct perf_event_header **rec)
{
	int ret;

	for (;;) {
		ret = raw_next(r, rec);
		/* mapscope ends a pipe with SAMPLE_TIME: without it, the stream was cut. */
		if (ret == 0 && r->pipe_layout && r->by_mapscope && !r->has_sample_time)
			r->unfinished = true;
		if (ret <= 0)
			return ret;
		set_last_off(r, r->pos);
		if (!reader_owns(r, *rec))
			return 1;
		advance(r, *rec);
		if ((ret = pdreader_take_header_record(r, *rec)) || (ret = realign(r)))
			return ret;
	}
}

/*
 * The records before the first data record, which the reader takes itself:
 * a pipe's attrs, features and tracing data; a file's event names
 * (EVENT_UPDATE). They describe the events, so they are read at open.
 */
static int read_leading_records(struct ms_pdreader *r)
{
	const struct perf_event_header *rec;
	int ret = next_record(r, &rec);

	if (ret < 0)
		return ret;
	r->peeked = ret > 0;
	if (!r->ev.n)
		return pdreader_bad(r->pos, "the recording describes no events");
	return 0;
}

/*
 * The one way to read the data (libperf's read_event / consume): a span of
 * the bytes read ahead, whose first record is whole and checked, then
 * consume() past what was taken. Faster paths stay behind it: a caller
 * that knows the records it wants checks those that follow the first in
 * its own pass over the span (ms_pdreader_whole()), with no second pass
 * here.
 */
int ms_pdreader_span(struct ms_pdreader *r, const void **start, size_t *len, uint64_t *off)
{
	const struct perf_event_header *h;
	size_t avail = r->blen - r->bpos;
	int ret;

	/* The usual case, a whole well-formed data record already in the buffer. */
	if (r->peeked) {
		r->peeked = false;       /* a pipe's first data record, checked at open */
	} else if (avail < sizeof(*h) || !ms_pdreader_whole((h = (const void *)(r->buf + r->bpos)), avail) ||
		   reader_owns(r, h)) {
		if ((ret = next_record(r, &h)) <= 0)
			return ret;
	}
	set_last_off(r, r->pos);
	*start = r->buf + r->bpos;
	*len = r->blen - r->bpos;
	*off = r->pos;
	return 1;
}

void ms_pdreader_consume(struct ms_pdreader *r, size_t len, size_t last)
{
	set_last_off(r, r->pos + len - last);
	r->pos += len;
	r->bpos += len;
	populate_ahead(r);
	drop_behind(r);
}

MS_EXPORT int ms_pdreader_next(struct ms_pdreader *r, const struct perf_event_header **rec)
{
	const void *start;
	size_t len;
	uint64_t off;
	int ret = ms_pdreader_span(r, &start, &len, &off);

	if (ret > 0) {
		*rec = start;
		ms_pdreader_consume(r, (*rec)->size, (*rec)->size);
	}
	return ret;
}

MS_EXPORT uint64_t ms_pdreader_offset(const struct ms_pdreader *r)
{
	return __atomic_load_n(&r->last_off, __ATOMIC_RELAXED);
}

uint64_t ms_pdreader_offset_of(const struct ms_pdreader *r, const void *rec)
{
	const unsigned char *p = rec;
	const struct block *b;

	if (r->buf && p >= r->buf && p < r->buf + r->blen)
		return r->pos - (uint64_t)(r->buf + r->bpos - p);
	for (b = r->held; b; b = b->next)
		if (p >= b->data && p < b->data + BUF_CAP)
			return b->base + (uint64_t)(p - b->data);
	return r->last_off;
}
MS_EXPORT bool ms_pdreader_unfinished(const struct ms_pdreader *r) { return r->unfinished; }

static void free_blocks(struct block *b)
{
	struct block *next;

	for (; b; b = next) {
		next = b->next;
		block_free(b);
	}
}

void ms_pdreader_lasting(const struct ms_pdreader *r, const void **lo, const void **hi)
{
	*lo = r->map;
	*hi = r->map ? r->map + r->map_len : NULL;
}

MS_EXPORT void ms_pdreader_free(struct ms_pdreader *r)
{
	if (!r)
		return;
	pdreader_raw_free(r);            /* first: it may be reading the file on a thread of its own */
	if (r->map)
		munmap((void *)r->map, r->map_len);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	ms_evlist_release(&r->ev);
	block_free(r->cur);
	free_blocks(r->held);
	free_blocks(r->spare);
	ms_buf_release(&r->tracing);
	ms_buf_release(&r->build_ids);
	free(r);
}
