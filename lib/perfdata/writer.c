/*
 * perf.data writer. File mode lays out: header, attrs, ids, the features
 * known at the start (tracing data, event names, the machine), the data,
 * then the feature table. perf finds the table at the data's end, and each
 * section by its offset, which may lie anywhere: so the sections go before
 * the data, and every flush (ms_pdwriter_flush, and the output buffer
 * going out when full) writes the table after the data so far and then
 * the header that points at it (flush_file()). A recorder killed with
 * SIGKILL, or stopped by a full disk, leaves a complete perf.data of what
 * it had written, which perf and mapscope read as it is. Only
 * ms_pdwriter_close() adds SAMPLE_TIME (always) and BUILD_ID, after the
 * table: a mapscope file without SAMPLE_TIME was never closed.
 *
 * Pipe mode sends a short header and then the attrs, features, event names
 * (EVENT_UPDATE, as perf sends them) and tracing data as records.
 *
 * Compressed (compress_level), every record after those goes through the
 * zstd stage (perfdata/compress.h) and each flush compresses what it holds
 * first, so that a file is as whole at each flush as it is plain. Between
 * flushes, where the output buffer goes out when full, its data may end in
 * a record cut short (perf drops it; mapscope says so).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <mapscope/pdwriter.h>

#include "mapscope/log.h"
#include "ms_version.h"
#include "perfdata/compress.h"
#include "perfdata/format.h"
#include "perfdata/hostinfo.h"
#include "util/buf.h"
#include "util/log.h"

#define OUTBUF_SIZE (1u << 20)

struct ms_pdwriter {
	int fd;
	bool pipe;
	struct perf_file_header hdr;
	struct ms_buf features[HEADER_FEAT_BITS]; /* payload of each feature we write */
	unsigned char *out;
	size_t out_len;
	struct ms_pdwriter_stats st;
	uint64_t pos;                /* bytes put so far, headers included: where the next goes */
	struct perf_file_section early[HEADER_FEAT_BITS];   /* sections written before the data */
	/* The table the header on disk points at: where it lies (the data's end then; 0 before), its size. */
	uint64_t table_off;
	size_t table_len;
	/* The last flush, which a failed write takes the file back to: its header, table and counts. */
	struct perf_file_header kept_hdr;
	struct perf_file_section kept[HEADER_FEAT_BITS];
	size_t kept_len;
	struct ms_pdwriter_stats at_kept;
	int error;                   /* first write error, sticky */
	int time_off;                /* TIME's offset in every sample, or -1 */
	uint64_t *data_ids;          /* sorted: the ids of events with a data address */
	size_t nr_data_ids;
	bool by_identifier;          /* every event has IDENTIFIER: a sample's id is its first word */
	uint64_t first_time, last_time;   /* of the samples, for SAMPLE_TIME */
	int trailer_off;             /* TIME's offset from the end of every other record, or -1 */
	bool in_order;               /* every record so far came in time order */
	uint64_t order_time;         /* the time of the last record that has one */
	struct ms_pdz *z;            /* the zstd stage, or NULL: records go out as they are */
	int level;                   /* its level */
	bool grow;                   /* a regular file, grown in whole steps (grow()) */
	uint64_t grown;              /* while growing, its size: the data, then zeros to a step's end */
};

/*
 * Writes n bytes at offset off, or at the file's own offset where off is
 * negative: 0 or -errno, *done (where not NULL) counting what reached the
 * file, a short write's part included. A write short of n (the disk
 * filled up in it) is followed by one for the rest, which says why; errno
 * is never read where no call failed (realpath() leaves EINVAL behind).
 */
static int write_full(int fd, const void *p, size_t n, int64_t off, uint64_t *done)
{
	const unsigned char *c = p;
	ssize_t k;

	while (n) {
		k = off < 0 ? write(fd, c, n) : pwrite(fd, c, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		if (done)
			*done += (uint64_t)k;
		if (off >= 0)
			off += k;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * A file grows 2 MiB at a time, aligned, each step written first as zeros
 * in one call, which the data then overwrites; close cuts the zeros past
 * the end. The first write into a step decides the size of the page
 * cache's folios there: one of 2 MiB (where the file system has large
 * folios: ext4 since Linux 6.16, xfs) lets a reader map it with one PMD
 * instead of 512 PTEs, and on the PVM guest measured here the first read
 * of a page mapped alone cost 1.5 us (docs/PERFORMANCE.md, round 27). A
 * 2 MiB folio taken from idle memory cost the writer up to 3.7 ms there,
 * so only a plain file grows so: a compressed one is read with read(). A
 * step the disk has no room for is given up, and the file grows as written.
 */
#define GROW_STEP (2u << 20)
static void grow(struct ms_pdwriter *w, uint64_t end)
{
	static const unsigned char zero[4096];
	struct iovec iov[GROW_STEP / sizeof(zero)];
	size_t i;

	if (!w->grow || w->grown >= end)
		return;
	for (i = 0; i < sizeof(iov) / sizeof(iov[0]); i++)
		iov[i] = (struct iovec){ (void *)(uintptr_t)zero, sizeof(zero) };
	for (; w->grown < end; w->grown += GROW_STEP) {
		if (pwritev(w->fd, iov, (int)i, (off_t)w->grown) != (ssize_t)GROW_STEP) {
			w->grow = false;
			if (ftruncate(w->fd, (off_t)w->grown))
				w->error = -errno;
			return;
		}
	}
}

/* Writes n bytes at offset off. */
static int pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	return write_full(fd, p, n, (int64_t)off, NULL);
}

static int flush_file(struct ms_pdwriter *w, const void *p, size_t n);

/* n bytes out: to a pipe (st.bytes counts what reached it), or with the table after them and the header. */
static int send(struct ms_pdwriter *w, const void *p, size_t n)
{
	return w->pipe ? write_full(w->fd, p, n, -1, &w->st.bytes) : flush_file(w, p, n);
}

static int flush(struct ms_pdwriter *w)
{
	if (!w->error && w->out_len)
		w->error = send(w, w->out, w->out_len);
	w->out_len = 0;
	return w->error;
}

static int put(struct ms_pdwriter *w, const void *p, size_t n)
{
	if (w->error || !n)             /* n == 0 may come with p == NULL */
		return w->error;
	w->pos += n;
	if (n > OUTBUF_SIZE - w->out_len && flush(w))
		return w->error;
	if (n >= OUTBUF_SIZE)
		return w->error = send(w, p, n);
	memcpy(w->out + w->out_len, p, n);
	w->out_len += n;
	return 0;
}

/* The records after the headers: through the zstd stage where there is one. */
static int put_data(struct ms_pdwriter *w, const void *p, size_t n)
{
	if (!w->z)
		return put(w, p, n);
	if (!w->error)
		w->error = ms_pdz_put(w->z, p, n);
	return w->error;
}

/* What the zstd stage holds, compressed into the output. */
static int flush_data(struct ms_pdwriter *w)
{
	if (w->z && !w->error)
		w->error = ms_pdz_flush(w->z);
	return w->error;
}

static int emit_compressed(void *arg, const void *rec, size_t len)
{
	return put(arg, rec, len);
}

static void build_features(struct ms_pdwriter *w, const struct ms_pdwriter_opts *o)
{
	struct ms_buf *f = w->features;
	size_t i, j;

	ms_buf_perf_string(&f[HEADER_VERSION], "mapscope " MS_VERSION_STRING);
	ms_hostinfo_features(f);

	ms_buf_u32(&f[HEADER_CMDLINE], (uint32_t)o->argc);
	for (i = 0; i < (size_t)o->argc; i++)
		ms_buf_perf_string(&f[HEADER_CMDLINE], o->argv[i]);

	ms_buf_u32(&f[HEADER_EVENT_DESC], (uint32_t)o->nr_evsels);
	ms_buf_u32(&f[HEADER_EVENT_DESC], (uint32_t)sizeof(struct perf_event_attr));
	for (i = 0; i < o->nr_evsels; i++) {
		ms_buf_append(&f[HEADER_EVENT_DESC], o->evsels[i].attr, sizeof(struct perf_event_attr));
		ms_buf_u32(&f[HEADER_EVENT_DESC], (uint32_t)o->evsels[i].nr_ids);
		ms_buf_perf_string(&f[HEADER_EVENT_DESC], o->evsels[i].name);
		for (j = 0; j < o->evsels[i].nr_ids; j++)
			ms_buf_u64(&f[HEADER_EVENT_DESC], o->evsels[i].ids[j]);
	}

	ms_hostinfo_clock(f, o->clockid);

	if (o->tracing_data)
		ms_buf_append(&f[HEADER_TRACING_DATA], o->tracing_data, o->tracing_data_len);
	if (o->compress_level)
		ms_pdz_feature(&f[HEADER_COMPRESSED], o->compress_level, NULL);
}

/*
 * Where TIME lies in a sample (from its start) and in a record other than
 * a sample (sample_id_all, from its end) where every event puts it at the
 * same place; -1 where not.
 */
static void time_offsets(struct ms_pdwriter *w, const struct ms_pdwriter_opts *o)
{
	const uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			      PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	uint64_t t0 = o->nr_evsels ? o->evsels[0].attr->sample_type : 0, t;
	size_t i;

	w->time_off = t0 & PERF_SAMPLE_TIME ? (int)(sizeof(struct perf_event_header) + ms_sample_time_off(t0)) : -1;
	w->trailer_off = t0 & PERF_SAMPLE_TIME ? (int)ms_trailer_time_from_end(t0 & bits) : -1;
	for (i = 0; i < o->nr_evsels; i++) {
		t = o->evsels[i].attr->sample_type;
		if (!(t & PERF_SAMPLE_TIME) || ms_sample_time_off(t) != ms_sample_time_off(t0))
			w->time_off = -1;
		if (!o->evsels[i].attr->sample_id_all || (t & bits) != (t0 & bits))
			w->trailer_off = -1;
	}
}

/*
 * EVENT_UPDATE records naming each event (by one of its ids), as perf
 * writes them in pipe mode: u64 type (NAME), u64 id, the name padded to 8.
 */
static void put_names(struct ms_pdwriter *w, const struct ms_pdwriter_opts *o)
{
	struct perf_event_header h;
	uint64_t v[2];
	size_t i, len;

	for (i = 0; i < o->nr_evsels; i++) {
		if (!o->evsels[i].nr_ids || !o->evsels[i].name)
			continue;
		len = (strlen(o->evsels[i].name) + 1 + 7) & ~(size_t)7;
		if (sizeof(h) + 16 + len > UINT16_MAX)
			continue;
		h = (struct perf_event_header){ .type = PERF_RECORD_EVENT_UPDATE,
						.size = (uint16_t)(sizeof(h) + 16 + len) };
		v[0] = PERF_EVENT_UPDATE_NAME;
		v[1] = o->evsels[i].ids[0];
		put(w, &h, sizeof(h));
		put(w, v, sizeof(v));
		put(w, o->evsels[i].name, strlen(o->evsels[i].name));
		put(w, (const char[8]){ 0 }, len - strlen(o->evsels[i].name));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether an event's samples carry a data address: not a tracepoint's, nor a clock's (ADDR 0 there). */
static bool data_event(const struct perf_event_attr *a)
{
	return (a->sample_type & PERF_SAMPLE_ADDR) && a->type != PERF_TYPE_TRACEPOINT &&
	       !(a->type == PERF_TYPE_SOFTWARE &&
		 (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK));
}

/* The ids of the events whose samples carry a data address, for data_samples. 0 or -ENOMEM. */
static int data_ids(struct ms_pdwriter *w, const struct ms_pdwriter_opts *o)
{
	const struct perf_event_attr *a;
	size_t i, n = 0;

	w->by_identifier = o->nr_evsels > 0;
	for (i = 0; i < o->nr_evsels; i++) {
		a = o->evsels[i].attr;
		w->by_identifier &= !!(a->sample_type & PERF_SAMPLE_IDENTIFIER);
		if (data_event(a))
			n += o->evsels[i].nr_ids;
	}
	w->data_ids = malloc((n ? n : 1) * sizeof(*w->data_ids));
	if (!w->data_ids)
		return -ENOMEM;
	for (i = 0; i < o->nr_evsels; i++) {
		a = o->evsels[i].attr;
		if (data_event(a)) {
			memcpy(w->data_ids + w->nr_data_ids, o->evsels[i].ids, o->evsels[i].nr_ids * 8);
			w->nr_data_ids += o->evsels[i].nr_ids;
		}
	}
	qsort(w->data_ids, w->nr_data_ids, sizeof(*w->data_ids), cmp_u64);
	return 0;
}

static bool is_data_sample(const struct ms_pdwriter *w, const struct perf_event_header *rec)
{
	uint64_t id;

	if (!w->by_identifier || rec->size < 16)
		return false;
	memcpy(&id, rec + 1, 8);
	return bsearch(&id, w->data_ids, w->nr_data_ids, sizeof(id), cmp_u64) != NULL;
}

static int start_file(struct ms_pdwriter *w, const struct ms_pdwriter_opts *o)
{
	const size_t attr_size = sizeof(struct perf_event_attr);
	struct perf_file_section ids;
	uint64_t ids_off, off;
	size_t i;

	w->hdr.magic = PERF_MAGIC2;
	w->hdr.size = sizeof(w->hdr);
	w->hdr.attr_size = attr_size + sizeof(struct perf_file_section);
	w->hdr.attrs.offset = sizeof(w->hdr);
	w->hdr.attrs.size = o->nr_evsels * w->hdr.attr_size;
	ids_off = w->hdr.attrs.offset + w->hdr.attrs.size;
	/* Every offset is known now: a file cut at any point still says where its parts are. */
	off = ids_off;
	for (i = 0; i < o->nr_evsels; i++)
		off += o->evsels[i].nr_ids * sizeof(uint64_t);
	for (i = 0; i < HEADER_FEAT_BITS; i++) {
		if (!w->features[i].len)
			continue;
		w->early[i] = (struct perf_file_section){ off, w->features[i].len };
		off += w->features[i].len;
		w->hdr.adds_features[i / 64] |= 1ULL << (i % 64);
	}
	w->hdr.data.offset = (off + 7) & ~7ULL;

	put(w, &w->hdr, sizeof(w->hdr));
	for (i = 0; i < o->nr_evsels; i++) {
		ids.offset = ids_off;
		ids.size = o->evsels[i].nr_ids * sizeof(uint64_t);
		ids_off += ids.size;
		put(w, o->evsels[i].attr, attr_size);
		put(w, &ids, sizeof(ids));
	}
	for (i = 0; i < o->nr_evsels; i++)
		put(w, o->evsels[i].ids, o->evsels[i].nr_ids * sizeof(uint64_t));
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		put(w, w->features[i].data, w->features[i].len);
	put(w, (const char[8]){ 0 }, w->hdr.data.offset - w->pos);
	return ms_pdwriter_flush(w);
}

static int start_pipe(struct ms_pdwriter *w, const struct ms_pdwriter_opts *o)
{
	struct perf_pipe_file_header ph = { PERF_MAGIC2, sizeof(ph) };
	struct perf_event_header h;
	uint32_t td;
	size_t i, size;
	uint64_t feat;

	put(w, &ph, sizeof(ph));
	for (i = 0; i < o->nr_evsels; i++) {
		size = sizeof(h) + sizeof(struct perf_event_attr) + o->evsels[i].nr_ids * 8;
		if (size > UINT16_MAX)
			return w->error = -E2BIG;
		h = (struct perf_event_header){ .type = PERF_RECORD_HEADER_ATTR, .size = (uint16_t)size };
		put(w, &h, sizeof(h));
		put(w, o->evsels[i].attr, sizeof(struct perf_event_attr));
		put(w, o->evsels[i].ids, o->evsels[i].nr_ids * 8);
	}
	for (feat = 0; feat < HEADER_FEAT_BITS; feat++) {
		struct ms_buf *f = &w->features[feat];

		/* Event names travel in the attrs and tracing data of a pipe. */
		if (!f->len || feat == HEADER_TRACING_DATA || feat == HEADER_EVENT_DESC)
			continue;
		ms_buf_align(f, 8);
		h = (struct perf_event_header){ .type = PERF_RECORD_HEADER_FEATURE,
						.size = (uint16_t)(sizeof(h) + 8 + f->len) };
		put(w, &h, sizeof(h));
		put(w, &feat, sizeof(feat));
		put(w, f->data, f->len);
	}
	put_names(w, o);
	if (o->tracing_data) {
		/*
		 * The record without the pad that perf's struct has since 2019:
		 * 12 bytes, as perf wrote it before. perf reads either (in a pipe
		 * it reads the data from where the record ends); hotspot's
		 * perfparser reads only this one and loses its place on the other.
		 */
		h = (struct perf_event_header){ .type = PERF_RECORD_HEADER_TRACING_DATA,
						.size = sizeof(h) + sizeof(td) };
		/* perf compares this size with what it read plus the padding. */
		td = (uint32_t)((o->tracing_data_len + 7) & ~(size_t)7);
		put(w, &h, sizeof(h));
		put(w, &td, sizeof(td));
		put(w, o->tracing_data, o->tracing_data_len);
		put(w, (uint64_t[]){ 0 }, (8 - (o->tracing_data_len & 7)) & 7);
	}
	return flush(w);
}

MS_EXPORT struct ms_pdwriter *ms_pdwriter_new(int fd, const struct ms_pdwriter_opts *o)
{
	struct stat st;
	struct ms_pdwriter *w;
	size_t i;
	int err, fl;

	/* A file is written in place from its start: where every write goes to its end, it cannot be. */
	if (!o->pipe && (fl = fcntl(fd, F_GETFL)) >= 0 && (fl & O_APPEND)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out = malloc(OUTBUF_SIZE);
	if (!w->out) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	w->pipe = o->pipe;
	/* Compressed, the reader reads the records with read(), not where they are mapped: no steps. */
	w->grow = !o->pipe && !o->compress_level && !fstat(fd, &st) && S_ISREG(st.st_mode);
	time_offsets(w, o);
	w->in_order = w->time_off >= 0 && w->trailer_off >= 0 && !o->pipe;
	if (data_ids(w, o))
		w->error = -ENOMEM;
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		ms_buf_init(&w->features[i]);
	build_features(w, o);
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		if (ms_buf_error(&w->features[i]))
			w->error = -ENOMEM;
	w->level = o->compress_level;
	if (o->compress_level && !w->error && !(w->z = ms_pdz_new(o->compress_level, emit_compressed, w)))
		w->error = -errno;
	err = w->error ? w->error : (o->pipe ? start_pipe(w, o) : start_file(w, o));
	if (err) {
		ms_pdwriter_free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

/* Whether rec, a kernel record, comes no earlier than the one before that has a time. */
static void check_order(struct ms_pdwriter *w, const struct perf_event_header *rec)
{
	size_t at;
	uint64_t t;

	if (rec->type == PERF_RECORD_SAMPLE)
		at = (size_t)w->time_off;
	else if (rec->size >= sizeof(*rec) + (size_t)w->trailer_off)
		at = rec->size - (size_t)w->trailer_off;
	else
		return;
	if (at + 8 > rec->size)
		return;
	memcpy(&t, (const char *)rec + at, 8);
	if (t < w->order_time)
		w->in_order = false;
	w->order_time = t;
}

MS_EXPORT int ms_pdwriter_write(struct ms_pdwriter *w, const struct perf_event_header *rec)
{
	uint64_t t;

	if (w->in_order && rec->type < 64)      /* the kernel's records; perf's own have no time */
		check_order(w, rec);

	w->st.records++;
	if (rec->type == PERF_RECORD_SAMPLE) {
		w->st.samples++;
		w->st.data_samples += is_data_sample(w, rec);
		if (w->time_off >= 0 && rec->size >= w->time_off + 8) {
			memcpy(&t, (const char *)rec + w->time_off, 8);
			if (!w->first_time || t < w->first_time)
				w->first_time = t;
			if (t > w->last_time)
				w->last_time = t;
		}
	}
	else if (rec->type == PERF_RECORD_LOST && rec->size >= sizeof(*rec) + 16)
		w->st.lost += ((const uint64_t *)(rec + 1))[1];
	w->st.data_bytes += rec->size;
	return put_data(w, rec, rec->size);
}

MS_EXPORT int ms_pdwriter_add_build_id(struct ms_pdwriter *w, const char *path, const unsigned char *id, size_t len)
{
	struct ms_buf *f = &w->features[HEADER_BUILD_ID];
	size_t name = (strlen(path) + 1 + 63) & ~(size_t)63, start = f->len;
	unsigned char bid[24] = { 0 };
	struct perf_event_header h = {
		.type = PERF_RECORD_HEADER_BUILD_ID,
		.misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BUILD_ID_SIZE,
		.size = (uint16_t)(sizeof(h) + 4 + sizeof(bid) + name),
	};

	if (len > 20 || sizeof(h) + 4 + sizeof(bid) + name > UINT16_MAX)
		return -EINVAL;
	memcpy(bid, id, len);
	bid[20] = (unsigned char)len;
	ms_buf_append(f, &h, sizeof(h));
	ms_buf_u32(f, (uint32_t)-1);          /* pid: the host, as perf writes it */
	ms_buf_append(f, bid, sizeof(bid));
	ms_buf_append(f, path, strlen(path));
	ms_buf_zero(f, name - strlen(path));
	if (ms_buf_error(f))
		f->len = start;
	else if (w->pipe) {              /* a pipe's features went out at the start: a record now */
		put_data(w, f->data + start, f->len - start);
		f->len = start;
	}
	return ms_buf_error(f) ? ms_buf_error(f) : w->error;
}

MS_EXPORT int ms_pdwriter_finish_round(struct ms_pdwriter *w)
{
	struct perf_event_header h = { .type = PERF_RECORD_FINISHED_ROUND, .size = sizeof(h) };

	w->st.data_bytes += sizeof(h);
	return put_data(w, &h, sizeof(h));
}

/*
 * The feature table for data that ends at end: one section per set bit, in
 * bit order; those written before the data where they are, the late ones
 * (at close) laid after the table. Its size in bytes.
 */
static size_t feature_table(const struct ms_pdwriter *w, struct perf_file_section *tab, uint64_t end)
{
	uint64_t late = end;
	size_t i, nr = 0;

	for (i = 0; i < HEADER_FEAT_BITS; i++)
		nr += !!(w->hdr.adds_features[i / 64] >> (i % 64) & 1);
	late += nr * sizeof(*tab);
	for (i = 0, nr = 0; i < HEADER_FEAT_BITS; i++) {
		if (!(w->hdr.adds_features[i / 64] >> (i % 64) & 1))
			continue;
		if (w->early[i].size)
			tab[nr++] = w->early[i];
		else {
			tab[nr++] = (struct perf_file_section){ late, w->features[i].len };
			late += w->features[i].len;
		}
	}
	return nr * sizeof(*tab);
}

static int write_header(struct ms_pdwriter *w)
{
	int err = pwrite_all(w->fd, &w->hdr, sizeof(w->hdr), 0);

	return err ? (w->error = err) : 0;
}

/*
 * Everything has gone out: the file as it is now is where a failed write
 * takes it back to. Its table is the one written last, made again (the
 * features stay as they are until close).
 */
static void keep(struct ms_pdwriter *w)
{
	w->kept_hdr = w->hdr;
	w->kept_len = feature_table(w, w->kept, w->table_off);
	w->at_kept = w->st;
	w->at_kept.bytes = w->table_off + w->kept_len;
}

/*
 * After a failed write (a full disk), the file goes back to its last
 * flush, whose records the counts then said: that flush's table written
 * again where it was (in place: data written since may lie over it), the
 * header of then, and the rest cut off. Should one of the writes fail
 * too, the records before that table still read, and the log says so.
 */
static void restore_table(struct ms_pdwriter *w)
{
	uint64_t off = w->kept_hdr.data.offset + w->kept_hdr.data.size;
	int err;

	if (!w->kept_len)
		return;
	w->st = w->at_kept;
	if ((err = pwrite_all(w->fd, w->kept, w->kept_len, off)) ||
	    (err = pwrite_all(w->fd, &w->kept_hdr, sizeof(w->hdr), 0))) {
		ms_warn("after a failed write, the file could not be put back to its last flush (%s): "
			"it may not read past byte %llu", strerror(-err), (unsigned long long)off);
		return;
	}
	(void)!ftruncate(w->fd, (off_t)(off + w->kept_len));      /* what lies past the table is never read */
	w->hdr = w->kept_hdr;
	w->table_len = w->kept_len;
	w->table_off = off;
}

/*
 * VERSION again, after the data, saying that its records came in time
 * order (MS_VERSION_IN_ORDER): known only now. The copy before the data
 * stays, unused; a file never closed keeps only that one, and is sorted
 * when read.
 */
static void say_in_order(struct ms_pdwriter *w)
{
	struct ms_buf *f = &w->features[HEADER_VERSION];

	f->len = 0;
	ms_buf_perf_string(f, "mapscope " MS_VERSION_STRING MS_VERSION_IN_ORDER);
	if (ms_buf_error(f))
		return;
	w->early[HEADER_VERSION].size = 0;
}

/* COMPRESSED again, after the data, with the ratio: known only now. */
static void say_ratio(struct ms_pdwriter *w)
{
	ms_pdz_feature(&w->features[HEADER_COMPRESSED], w->level, w->z);
	if (!ms_buf_error(&w->features[HEADER_COMPRESSED]))
		w->early[HEADER_COMPRESSED].size = 0;
}

/*
 * n bytes at the data's end, where the table the header on disk points at
 * lies, and m bytes after them (the next table, at most a table's size),
 * written so that the file stays whole while they go out: what goes past
 * that table first, then what goes over it; where n is shorter than the
 * table, all in one write. The caller then writes the header: only a kill
 * between the last write and the header's finds the header's table
 * written over.
 */
static int write_past_table(struct ms_pdwriter *w, const void *p, size_t n, const void *t, size_t m)
{
	unsigned char one[2 * sizeof(w->kept)];
	uint64_t at = w->st.bytes;
	size_t over = w->table_off && w->table_off == at ? w->table_len : 0;    /* the table lies there */
	const unsigned char *c = p;
	int err;

	grow(w, at + n + m);
	if (w->error)
		return w->error;
	if (n < over) {
		memcpy(one, c, n);
		memcpy(one + n, t, m);
		err = pwrite_all(w->fd, one, n + m, at);
	} else if (!(err = pwrite_all(w->fd, c + over, n - over, at + over)) &&
		   !(err = pwrite_all(w->fd, t, m, at + n)))
		err = pwrite_all(w->fd, c, over, at);
	if (err)
		return w->error = err;
	w->st.bytes = at + n;
	return 0;
}

/*
 * File mode: n bytes of data at its end, the table after them and then
 * the header that says where the data ends. A failed write puts the table
 * before back: the file then reads whole as of the last flush.
 */
static int flush_file(struct ms_pdwriter *w, const void *p, size_t n)
{
	struct perf_file_section tab[HEADER_FEAT_BITS];
	uint64_t end = w->st.bytes + n;
	size_t tn;

	if (end < w->hdr.data.offset)                /* in the headers: no table yet */
		return write_past_table(w, p, n, NULL, 0);
	tn = feature_table(w, tab, end);
	if (write_past_table(w, p, n, tab, tn)) {
		restore_table(w);
		return w->error;
	}
	w->hdr.data.size = end - w->hdr.data.offset;
	if (write_header(w)) {
		restore_table(w);
		return w->error;
	}
	w->table_len = tn;
	w->table_off = end;
	return 0;
}

/* The data flushed, then the last table, the late features after it and the header. */
static int finish_file(struct ms_pdwriter *w)
{
	struct perf_file_section tab[HEADER_FEAT_BITS];
	struct ms_buf tail;
	size_t i;

	if (ms_pdwriter_flush(w))
		return w->error;
	if (w->in_order)
		say_in_order(w);
	if (w->z)
		say_ratio(w);
	ms_buf_u64(&w->features[HEADER_SAMPLE_TIME], w->first_time);   /* also the mark of a closed file */
	ms_buf_u64(&w->features[HEADER_SAMPLE_TIME], w->last_time);
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		if (w->features[i].len && !w->early[i].size)
			w->hdr.adds_features[i / 64] |= 1ULL << (i % 64);
	ms_buf_init(&tail);
	ms_buf_append(&tail, tab, feature_table(w, tab, w->pos));
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		if (!w->early[i].size)
			ms_buf_append(&tail, w->features[i].data, w->features[i].len);
	if (ms_buf_error(&tail))
		w->error = -ENOMEM;
	else if (write_past_table(w, tail.data, tail.len, NULL, 0))
		restore_table(w);
	ms_buf_release(&tail);
	if (w->error)
		return w->error;
	if (write_header(w)) {
		restore_table(w);
		return w->error;
	}
	if (w->grown > w->st.bytes && ftruncate(w->fd, (off_t)w->st.bytes))
		ms_warn("cannot cut the zeros past the file's end: %s", strerror(errno));   /* nothing reads there */
	return 0;
}

MS_EXPORT int ms_pdwriter_flush(struct ms_pdwriter *w)
{
	if (flush_data(w) && !w->pipe) {
		restore_table(w);
		return w->error;
	}
	if (flush(w) || w->pipe)
		return w->error;
	keep(w);
	return 0;
}

/* A pipe ends with SAMPLE_TIME as a feature record: the mark of a stream that was not cut. */
static int finish_pipe(struct ms_pdwriter *w)
{
	struct perf_event_header h = { .type = PERF_RECORD_HEADER_FEATURE, .size = sizeof(h) + 8 + 16 };
	uint64_t v[3] = { HEADER_SAMPLE_TIME, w->first_time, w->last_time };

	if (flush_data(w))
		return w->error;
	put(w, &h, sizeof(h));
	put(w, v, sizeof(v));
	return flush(w);
}

MS_EXPORT int ms_pdwriter_close(struct ms_pdwriter *w)
{
	return w->pipe ? finish_pipe(w) : finish_file(w);
}

MS_EXPORT void ms_pdwriter_stats(const struct ms_pdwriter *w, struct ms_pdwriter_stats *st)
{
	*st = w->st;
}

MS_EXPORT void ms_pdwriter_free(struct ms_pdwriter *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < HEADER_FEAT_BITS; i++)
		ms_buf_release(&w->features[i]);
	free(w->data_ids);
	free(w->out);
	ms_pdz_free(w->z);
	free(w);
}
