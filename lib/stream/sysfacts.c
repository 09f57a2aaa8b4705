/*
 * mapscope:sysctl, the recording machine's settings record writes as it
 * starts (kernel/sysctl.h): known by its format, each sample's name and
 * value kept for the analyses to ask for (ms_stream_sysctl). They come
 * before every sample they concern, being the file's first. A sample
 * whose fields do not fit its data is damage, and is dropped.
 */
#include <errno.h>
#include <string.h>

#include "kernel/sysctl.h"
#include "stream/internal.h"

bool stream_classify_sysctl(struct evinfo *ei, const char *sys, const char *name,
			    bool (*find)(const void *f, const char *field, uint16_t *off, uint16_t *size),
			    const void *f)
{
	if (strcmp(sys, "mapscope") || strcmp(name, "sysctl"))
		return false;
	if (find(f, "value", &ei->off[0], &ei->size[0]) && ei->size[0] == 8 &&
	    find(f, "name", &ei->off[1], &ei->size[1]) && ei->size[1] == 4) {
		ei->nr_fields = 2;
		ei->kind = EK_SYSCTL;
	}
	return true;
}

/* The name is a __data_loc field: its offset in the raw data in the low 16 bits, its length (with the NUL) high. */
int stream_on_sysctl(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint64_t loc, value;
	uint32_t off, len;

	if (!smp->raw || (size_t)ei->off[0] + 8 > smp->raw_size || (size_t)ei->off[1] + 4 > smp->raw_size) {
		s->st.bad_samples++;
		return 0;
	}
	value = stream_field(ei, smp, 0);
	loc = stream_field(ei, smp, 1) & 0xffffffffu;
	off = (uint32_t)(loc & 0xffff);
	len = (uint32_t)(loc >> 16);
	if (len < 2 || len > MS_STREAM_FACT_NAME_MAX || off > smp->raw_size || len > smp->raw_size - off ||
	    smp->raw[off + len - 1] != '\0' || memchr(smp->raw + off, '\0', len - 1)) {
		s->st.bad_samples++;
		return 0;
	}
	ms_stream_set_fact(s, (const char *)smp->raw + off, value);
	return 0;
}

void ms_stream_set_fact(struct ms_stream *s, const char *name, uint64_t value)
{
	struct ms_stream_facts *f = &s->facts;
	size_t i, len = strlen(name) + 1;

	for (i = 0; i < f->n && strcmp(f->v[i].name, name); i++)
		;
	if (i == MS_STREAM_MAX_FACTS || len > MS_STREAM_FACT_NAME_MAX)
		return;                        /* more settings than any record writes: the first ones hold */
	memcpy(f->v[i].name, name, len);
	f->v[i].value = value;
	f->n += i == f->n;
	f->changes++;
}

const struct ms_stream_facts *ms_stream_facts(const struct ms_stream *s)
{
	return &s->facts;
}

int ms_stream_facts_find(const struct ms_stream_facts *f, const char *name, uint64_t *value)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].name, name)) {
			*value = f->v[i].value;
			return 0;
		}
	return -ENOENT;
}

bool ms_stream_facts_read_fault_page(const struct ms_stream_facts *f)
{
	uint64_t zero = 1;

	ms_stream_facts_find(f, MS_FACT_READ_ZERO_PAGE, &zero);
	return !zero;
}

int ms_stream_sysctl(const struct ms_stream *s, const char *name, uint64_t *value)
{
	return ms_stream_facts_find(&s->facts, name, value);
}
