#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include "kernel/procsynth.h"

static int parse_hex(const char **p, char stop, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (errno || end == *p || *end != stop)
		return -EINVAL;
	*p = end + 1;
	return 0;
}

int ms_maps_parse_line(const char *line, struct ms_maps_entry *e)
{
	const char *p = line;
	uint64_t maj, min;
	char *end;
	size_t n;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, '-', &e->start) || parse_hex(&p, ' ', &e->end) || e->end <= e->start)
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	e->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	e->flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 5;
	if (parse_hex(&p, ' ', &e->pgoff) || parse_hex(&p, ':', &maj) || parse_hex(&p, ' ', &min))
		return -EINVAL;
	e->maj = (uint32_t)maj;
	e->min = (uint32_t)min;
	errno = 0;
	e->ino = strtoull(p, &end, 10);
	if (errno || end == p)
		return -EINVAL;
	p = end;
	while (*p == ' ')
		p++;
	n = strcspn(p, "\n");
	if (n >= sizeof(e->name))
		return -EINVAL;
	memcpy(e->name, p, n);
	e->name[n] = '\0';
	return 0;
}

static void append_name_and_id(struct ms_buf *out, size_t start, const char *name,
			       const struct ms_sample_id *sid)
{
	struct perf_event_header *h;

	ms_buf_cstr(out, name);
	ms_buf_align(out, 8);
	ms_buf_append(out, sid, sizeof(*sid));
	if (ms_buf_error(out))
		return;
	h = (struct perf_event_header *)(out->data + start);
	h->size = (uint16_t)(out->len - start);
}

void ms_synth_mmap2(struct ms_buf *out, const struct ms_maps_entry *e,
		    const struct ms_sample_id *sid)
{
	struct perf_event_header h = {
		.type = PERF_RECORD_MMAP2,
		.misc = PERF_RECORD_MISC_USER |
			((e->prot & PROT_EXEC) ? 0 : PERF_RECORD_MISC_MMAP_DATA),
	};
	size_t start = out->len;

	ms_buf_append(out, &h, sizeof(h));
	ms_buf_u32(out, sid->pid);
	ms_buf_u32(out, sid->tid);
	ms_buf_u64(out, e->start);
	ms_buf_u64(out, e->end - e->start);
	ms_buf_u64(out, e->pgoff);
	ms_buf_u32(out, e->maj);
	ms_buf_u32(out, e->min);
	ms_buf_u64(out, e->ino);
	ms_buf_u64(out, 0);                  /* ino_generation: not in /proc */
	ms_buf_u32(out, e->prot);
	ms_buf_u32(out, e->flags);
	append_name_and_id(out, start, e->name[0] ? e->name : "//anon", sid);
}

void ms_synth_comm(struct ms_buf *out, const char *comm, const struct ms_sample_id *sid)
{
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_USER };
	size_t start = out->len;

	ms_buf_append(out, &h, sizeof(h));
	ms_buf_u32(out, sid->pid);
	ms_buf_u32(out, sid->tid);
	append_name_and_id(out, start, comm, sid);
}
