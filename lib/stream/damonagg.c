/*
 * damon:damon_aggregated samples -> MS_EV_ACCESS (source DAMON): one
 * DAMON region of one target over one aggregation interval, how many of
 * the interval's checks found it accessed (nr_accesses) and for how many
 * intervals that count has held (age).
 *
 * mapscope record writes each sample as its target's (pid and tid; the
 * kdamond's own otherwise, as perf record has them), and DAMON's
 * intervals in the event's attr: sampling in config1, aggregation in
 * config2, in microseconds. A recording without them (perf record -e
 * damon:damon_aggregated) is read with DAMON's defaults, 5 ms and 100 ms.
 */
#include <string.h>

#include "stream/internal.h"

enum { F_START, F_END, F_NR_ACCESSES, F_AGE, NR_FIELDS };

static const char *const fields[NR_FIELDS] = { "start", "end", "nr_accesses", "age" };

bool stream_classify_damon(struct evinfo *ei, const char *sys, const char *name,
			   bool (*find)(const void *f, const char *field, uint16_t *off, uint16_t *size),
			   const void *f)
{
	int k;

	if (strcmp(sys, "damon") || strcmp(name, "damon_aggregated"))
		return false;
	for (k = 0; k < NR_FIELDS; k++)
		if (!find(f, fields[k], &ei->off[k], &ei->size[k]) || (ei->size[k] != 8 && ei->size[k] != 4))
			return true;             /* not the format we know: left an ordinary event */
	ei->nr_fields = NR_FIELDS;
	ei->kind = EK_DAMON;
	return true;
}

/* Field k of the raw data, 4 or 8 bytes unsigned; 0 where the record is too short for it. */
static uint64_t field(const struct evinfo *ei, const struct ms_sample *smp, int k)
{
	uint64_t v = 0;
	uint32_t w;

	if ((uint32_t)ei->off[k] + ei->size[k] > smp->raw_size)
		return 0;
	if (ei->size[k] == 8) {
		memcpy(&v, smp->raw + ei->off[k], 8);
	} else {
		memcpy(&w, smp->raw + ei->off[k], 4);
		v = w;
	}
	return v;
}

int stream_on_damon(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint64_t sample_us = ei->attr->config1 ? ei->attr->config1 : 5000;
	uint64_t aggr_us = ei->attr->config2 ? ei->attr->config2 : 100000;
	struct ms_event ev;

	s->st.other_samples++;
	if (!smp->raw || field(ei, smp, F_END) <= field(ei, smp, F_START))
		return 0;
	base_event(&ev, MS_EV_ACCESS, smp);
	ev.access.source = MS_ACCESS_DAMON;
	ev.access.start = field(ei, smp, F_START);
	ev.access.end = field(ei, smp, F_END);
	ev.access.interval_ns = aggr_us * 1000;
	ev.access.nr_accesses = (uint32_t)field(ei, smp, F_NR_ACCESSES);
	ev.access.max_nr_accesses = (uint32_t)(aggr_us / sample_us);
	ev.access.age = (uint32_t)field(ei, smp, F_AGE);
	return emit(s, &ev);
}
