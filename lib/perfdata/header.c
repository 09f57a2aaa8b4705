/*
 * What describes a recording: a file's header, its attrs with their ids
 * and its feature sections (event names, tracing data, build-ids, who
 * wrote it and whether it was closed), and pipe mode's header records,
 * which carry the same. Every size and offset is checked against the file
 * before it is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/pdreader.h>

#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "perfdata/reader_impl.h"
#include "util/log.h"

#define MAX_EVSELS 4096
#define MAX_IDS (1u << 20)

/* [off, off+len) lies inside the mapped file. */
static bool in_file(const struct ms_pdreader *r, uint64_t off, uint64_t len)
{
	return off <= r->map_len && len <= r->map_len - off;
}

/* Copies an attr of the file's size into a zeroed one of ours. */
static int take_attr(struct ms_pdreader *r, const void *p, uint64_t avail, uint64_t off)
{
	uint32_t size;

	if (avail < PERF_ATTR_SIZE_VER0)
		return pdreader_bad(off, "an event attribute is shorter than the oldest layout (64 bytes)");
	memcpy(&size, (const char *)p + offsetof(struct perf_event_attr, size), 4);
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > avail)
		return pdreader_bad(off, "an event attribute's size field does not fit its section");
	if (r->ev.n == MAX_EVSELS)
		return pdreader_bad(off, "more than 4096 events");
	return ms_evlist_add(&r->ev, p, size) ? 0 : -ENOMEM;
}

/*
 * The ids of the evsel taken last. Bounded in total, not per evsel: many
 * attrs pointing at one ids section would otherwise make a small file ask
 * for gigabytes.
 */
static int take_ids(struct ms_pdreader *r, const void *p, uint64_t n, uint64_t off)
{
	struct ms_evsel *e = r->ev.v[r->ev.n - 1];
	uint64_t i, id;

	if (n > MAX_IDS - r->ev.nr_ids) {
		ms_err("corrupt perf.data at byte offset %llu: more than %u event ids in all; "
		       "refusing to read more", (unsigned long long)off, MAX_IDS);
		return -EBADMSG;
	}
	for (i = 0; i < n; i++) {
		memcpy(&id, (const char *)p + 8 * i, 8);
		if (ms_evsel_add_id(&r->ev, e, id))
			return -ENOMEM;
	}
	return 0;
}

/* EVENT_DESC: u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, string, u64 ids[]. */
static void take_event_desc(struct ms_pdreader *r, const unsigned char *p, uint64_t len)
{
	uint32_t nr, attr_size, nr_ids, slen, i;
	uint64_t off = 8;

	if (len < 8)
		return;
	memcpy(&nr, p, 4);
	memcpy(&attr_size, p + 4, 4);
	for (i = 0; i < nr && i < r->ev.n; i++) {
		if (attr_size > len - off || len - off - attr_size < 8)
			return;
		off += attr_size;
		memcpy(&nr_ids, p + off, 4);
		memcpy(&slen, p + off + 4, 4);
		off += 8;
		if (slen > len - off || !slen)
			return;
		/* a second EVENT_DESC replaces the first */
		if (ms_evsel_set_name(r->ev.v[i], (const char *)p + off, slen))
			return;
		off += slen;
		if ((uint64_t)nr_ids * 8 > len - off)
			return;
		off += (uint64_t)nr_ids * 8;
	}
}

/* Whether a VERSION text of at most len bytes (NUL padded) ends with MS_VERSION_IN_ORDER. */
static bool version_in_order(const char *s, uint64_t len)
{
	size_t n = strnlen(s, len), k = sizeof(MS_VERSION_IN_ORDER) - 1;

	return n >= k && !memcmp(s + n - k, MS_VERSION_IN_ORDER, k);
}

static int take_feature(struct ms_pdreader *r, int feat, const unsigned char *p, uint64_t len)
{
	if (feat == HEADER_TRACING_DATA) {
		r->tracing.len = 0;
		ms_buf_append(&r->tracing, p, len);
		return ms_buf_error(&r->tracing);
	}
	if (feat == HEADER_EVENT_DESC)
		take_event_desc(r, p, len);
	if (feat == HEADER_BUILD_ID) {
		r->build_ids.len = 0;
		ms_buf_append(&r->build_ids, p, len);
	}
	if (feat == HEADER_VERSION && len > 4 + 8) {
		r->by_mapscope = !memcmp(p + 4, "mapscope", 8);
		r->in_order = r->by_mapscope && version_in_order((const char *)p + 4, len - 4);
	}
	if (feat == HEADER_SAMPLE_TIME) {
		r->has_sample_time = true;
		if (len >= 16)
			memcpy(&r->sample_time_last, p + 8, 8);
		/* perf's times of samples without PERF_SAMPLE_TIME (perf record --no-timestamp): none known. */
		if (r->sample_time_last == UINT64_MAX)
			r->sample_time_last = 0;
	}
	return 0;
}

uint64_t ms_pdreader_sample_time_last(const struct ms_pdreader *r)
{
	return r->sample_time_last;
}

int pdreader_open_file_layout(struct ms_pdreader *r)
{
	struct perf_file_header h;
	struct perf_file_section ids, sec;
	uint64_t i, n, off, feat_off;
	bool early = false;
	int err, bit;

	if (!in_file(r, 0, sizeof(h)))
		return pdreader_bad(0, "the file is shorter than a perf.data header");
	memcpy(&h, r->map, sizeof(h));
	if (h.size < sizeof(h) || h.attr_size < PERF_ATTR_SIZE_VER0 + sizeof(ids))
		return pdreader_bad(8, "the header's sizes are impossible");
	if (!in_file(r, h.attrs.offset, h.attrs.size))
		return pdreader_bad(16, "the attrs section lies outside the file");
	n = h.attrs.size / h.attr_size;
	for (i = 0; i < n; i++) {
		off = h.attrs.offset + i * h.attr_size;
		if ((err = take_attr(r, r->map + off, h.attr_size - sizeof(ids), off)))
			return err;
		memcpy(&ids, r->map + off + h.attr_size - sizeof(ids), sizeof(ids));
		if (!in_file(r, ids.offset, ids.size) || ids.size % 8)
			return pdreader_bad(off + h.attr_size - sizeof(ids), "an event's ids lie outside the file");
		if ((err = take_ids(r, r->map + ids.offset, ids.size / 8, ids.offset)))
			return err;
	}
	if (!r->ev.n)
		return pdreader_bad(16, "the file describes no events");
	if (h.data.offset > r->map_len)
		return pdreader_bad(40, "the data section starts past the end of the file");
	if (h.data.offset % 8)
		return pdreader_bad(40, "the data section does not start on an 8-byte boundary");
	r->pos = h.data.offset;
	/*
	 * No features: the recorder never closed the file (killed, or its
	 * disk filled). The header's data size is where it last flushed, or
	 * 0; what lies past it was written too and is read as well.
	 */
	if (!h.adds_features[0] && !h.adds_features[1] && !h.adds_features[2] && !h.adds_features[3] &&
	    (h.data.size == 0 || h.data.offset + h.data.size < r->map_len)) {
		r->unfinished = true;
		r->end = r->map_len;
		return 0;
	}
	if (!in_file(r, h.data.offset, h.data.size)) {
		ms_warn("the file is truncated: the data section should end at byte %llu, the file "
			"ends at %llu", (unsigned long long)(h.data.offset + h.data.size),
			(unsigned long long)r->map_len);
		r->end = r->map_len;
		return 0;
	}
	r->end = h.data.offset + h.data.size;
	/* Features: one section per set bit, in bit order, after the data. */
	feat_off = r->end;
	for (bit = 0; bit < HEADER_FEAT_BITS; bit++) {
		if (!(h.adds_features[bit / 64] >> (bit % 64) & 1))
			continue;
		if (!in_file(r, feat_off, sizeof(sec))) {
			ms_warn("the feature table at byte %llu is cut short", (unsigned long long)feat_off);
			break;
		}
		memcpy(&sec, r->map + feat_off, sizeof(sec));
		feat_off += sizeof(sec);
		if (!in_file(r, sec.offset, sec.size)) {
			ms_warn("feature %d lies outside the file (byte %llu)", bit,
				(unsigned long long)sec.offset);
			continue;
		}
		early |= sec.offset < h.data.offset;
		if ((err = take_feature(r, bit, r->map + sec.offset, sec.size)))
			return err;
	}
	/*
	 * mapscope lays its features before the data as it goes, and adds
	 * SAMPLE_TIME when it closes the file. (Its files from before that
	 * kept every feature after the data: they were always closed.)
	 */
	r->unfinished = r->by_mapscope && early && !r->has_sample_time;
	return 0;
}

/* EVENT_UPDATE: a name for the event that has this id, where it has none yet. 0 or -ENOMEM. */
static int take_event_update(struct ms_pdreader *r, const unsigned char *p, uint64_t len)
{
	uint64_t type, id;
	size_t i;

	if (len < 17)
		return 0;
	memcpy(&type, p, 8);
	memcpy(&id, p + 8, 8);
	if (type != PERF_EVENT_UPDATE_NAME || !memchr(p + 16, 0, len - 16))
		return 0;
	i = (size_t)ms_evlist_by_id(&r->ev, id);
	if (i < r->ev.n && !r->ev.v[i]->name)
		return ms_evsel_set_name(r->ev.v[i], (const char *)p + 16, len - 16);
	return 0;
}

/*
 * The records the reader takes itself (reader_owns). rec has been moved
 * past already (tracing data or AUX data may follow it, outside its size);
 * its bytes are read before anything else is.
 */
int pdreader_take_header_record(struct ms_pdreader *r, const struct perf_event_header *rec)
{
	const unsigned char *p = (const unsigned char *)(rec + 1);
	uint64_t len = rec->size - sizeof(*rec), feat, aux;
	uint32_t attr_size, size;
	int err;

	switch (rec->type) {
	case PERF_RECORD_HEADER_ATTR:
		if (len < PERF_ATTR_SIZE_VER0)
			return pdreader_bad(r->last_off, "an attr record is too short");
		memcpy(&attr_size, p + offsetof(struct perf_event_attr, size), 4);
		if (attr_size > len)
			return pdreader_bad(r->last_off, "an attr record's attr is larger than the record");
		if ((err = take_attr(r, p, attr_size, r->last_off)))
			return err;
		return take_ids(r, p + attr_size, (len - attr_size) / 8, r->last_off);
	case PERF_RECORD_HEADER_FEATURE:
		if (len < 8)
			return pdreader_bad(r->last_off, "a feature record is too short");
		memcpy(&feat, p, 8);
		return feat < HEADER_FEAT_BITS ? take_feature(r, (int)feat, p + 8, len - 8) : 0;
	case PERF_RECORD_HEADER_TRACING_DATA:
		if (len < 4)
			return pdreader_bad(r->last_off, "a tracing-data record is too short");
		memcpy(&size, p, 4);
		if (size % 8)
			return pdreader_bad(r->last_off, "the tracing data's size is not padded to 8 bytes");
		r->tracing.len = 0;
		return pdreader_take_bytes(r, size, &r->tracing, "the input ends inside the tracing data");
	case PERF_RECORD_EVENT_UPDATE:
		return take_event_update(r, p, len);
	case PERF_RECORD_HEADER_BUILD_ID:
		/* The same layout as the BUILD_ID section's entries. */
		ms_buf_append(&r->build_ids, rec, rec->size);
		return ms_buf_error(&r->build_ids);
	case PERF_RECORD_AUXTRACE:
		if (len < 8)
			return pdreader_bad(r->last_off, "an AUX trace record is too short");
		memcpy(&aux, p, 8);
		return pdreader_take_bytes(r, aux, NULL, "the input ends inside AUX trace data");
	case PERF_RECORD_COMPRESSED:
	case PERF_RECORD_COMPRESSED2:
		return r->raw ? pdreader_bad(r->last_off, "a compressed record inside compressed data") :
				pdreader_start_raw(r, rec);
	}
	return 0;
}

MS_EXPORT size_t ms_pdreader_nr_evsels(const struct ms_pdreader *r) { return r->ev.n; }

MS_EXPORT const struct perf_event_attr *ms_pdreader_attr(const struct ms_pdreader *r, size_t i)
{
	return i < r->ev.n ? &r->ev.v[i]->attr : NULL;
}

MS_EXPORT const char *ms_pdreader_evsel_name(const struct ms_pdreader *r, size_t i)
{
	return i < r->ev.n ? r->ev.v[i]->name : NULL;
}

MS_EXPORT int ms_pdreader_evsel_by_id(const struct ms_pdreader *r, uint64_t id)
{
	return ms_evlist_by_id(&r->ev, id);
}

const struct ms_evlist *ms_pdreader_evlist(const struct ms_pdreader *r)
{
	return &r->ev;
}

MS_EXPORT bool ms_pdreader_build_id(const struct ms_pdreader *r, size_t i, const char **path,
				    const unsigned char **id, size_t *len)
{
	return ms_build_id_in(r->build_ids.data, r->build_ids.len, i, path, id, len);
}

const unsigned char *ms_pdreader_build_ids(const struct ms_pdreader *r, size_t *size)
{
	*size = r->build_ids.len;
	return r->build_ids.data;
}

bool ms_build_id_in(const unsigned char *data, size_t size, size_t i, const char **path,
		    const unsigned char **id, size_t *len)
{
	const unsigned char *p = data, *end = p + size;
	struct perf_event_header h;

	for (; p && end - p >= (ptrdiff_t)sizeof(h); p += h.size) {
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) + 4 + 24 + 1 || h.size > end - p)
			return false;
		if (!memchr(p + sizeof(h) + 28, 0, h.size - sizeof(h) - 28))
			return false;
		if (i-- == 0) {
			*id = p + sizeof(h) + 4;
			*len = (h.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) && (*id)[20] <= 20 ? (*id)[20] : 20;
			*path = (const char *)p + sizeof(h) + 28;
			return true;
		}
	}
	return false;
}

void ms_pdreader_tracing_data(const struct ms_pdreader *r, const void **data, size_t *len)
{
	*data = r->tracing.len ? r->tracing.data : NULL;
	*len = r->tracing.len;
}

bool ms_pdreader_pipe(const struct ms_pdreader *r)
{
	return r->pipe_layout;
}

bool ms_pdreader_in_order(const struct ms_pdreader *r)
{
	const char *queue = getenv("MAPSCOPE_SORT_QUEUE");

	return r->in_order && !(queue && !strcmp(queue, "1"));
}
