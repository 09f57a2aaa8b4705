/*
 * mapscope:vma_referenced, the samples record --referenced writes: one
 * VMA of one process over one interval, read from the tracepoint's data
 * at the places its format gives, into MS_EV_ACCESS. A sample whose data
 * is too short for its fields is damage, and is dropped.
 */
#include <string.h>

#include "stream/internal.h"
#include "util/log.h"

const char *const stream_referenced_fields[8] = {
	"pid", "start", "end", "interval_ns", "referenced", "rss", "anon", "anon_huge",
};

int stream_on_referenced(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint64_t v[8] = { 0 };
	uint32_t pid;
	struct ms_event ev;
	int k;

	for (k = 0; k < 8; k++) {
		if (!smp->raw || (size_t)ei->off[k] + ei->size[k] > smp->raw_size) {
			s->st.bad_samples++;
			return 0;
		}
		memcpy(&v[k], smp->raw + ei->off[k], ei->size[k]);   /* little-endian: a u32 fills the low half */
	}
	if (v[2] <= v[1]) {
		s->st.bad_samples++;
		return 0;
	}
	pid = (uint32_t)v[0];
	base_event(&ev, MS_EV_ACCESS, smp);
	ev.pid = ev.tid = pid;
	ev.access.source = MS_ACCESS_REFERENCED;
	ev.access.start = v[1];
	ev.access.end = v[2];
	ev.access.interval_ns = v[3];
	ev.access.referenced = v[4];
	ev.access.rss = v[5];
	ev.access.anon = v[6];
	ev.access.anon_huge = v[7];
	return emit(s, &ev);
}
