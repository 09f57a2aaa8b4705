#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <asm/perf_regs.h>

#include <mapscope/event.h>

#include "aspace/samples.h"
#include "stream/sample.h"
#include "util/log.h"

/*
 * PERF_FORMAT_LOST (Linux 6.0) by its value: the kernel headers declare it
 * in an enum, which #ifdef cannot see, and older headers lack it, while
 * files written where it exists carry it all the same.
 */
#define MS_PERF_FORMAT_LOST (1ULL << 4)

struct cur {
	const unsigned char *p, *end;
};

static int u64(struct cur *c, uint64_t *v)
{
	if (c->end - c->p < 8)
		return -EBADMSG;
	memcpy(v, c->p, 8);
	c->p += 8;
	return 0;
}

static int skip(struct cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -EBADMSG;
	c->p += n;
	return 0;
}

int ms_sample_sp_index(uint64_t mask)
{
#if defined(__x86_64__)
	const int sp = PERF_REG_X86_SP;
#elif defined(__aarch64__)
	const int sp = PERF_REG_ARM64_SP;
#else
	const int sp = -1;
#endif
	if (sp < 0 || !(mask >> sp & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ULL << sp) - 1));
}

/* Field by field: a memset of the struct compiles to a slow rep stos here. */
static void clear(struct ms_sample *s)
{
	s->id = s->ip = s->time = s->addr = s->period = s->data_src = s->weight = s->phys_addr = 0;
	s->pid = s->tid = s->cpu = 0;
	s->chain = NULL;
	s->chain_len = 0;
	s->raw = NULL;
	s->raw_size = 0;
	s->sp = 0;
	s->regs = NULL;
	s->regs_mask = 0;
	s->stack = NULL;
	s->stack_size = 0;
	s->has_time = s->has_addr = s->has_sp = s->has_id = false;
}

static int read_format_size(uint64_t fmt, struct cur *c)
{
	uint64_t nr = 1, per = 8, v;

	if (fmt & PERF_FORMAT_GROUP) {
		if (u64(c, &nr) || nr > 4096)
			return -EBADMSG;
	}
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED && skip(c, 8))
		return -EBADMSG;
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING && skip(c, 8))
		return -EBADMSG;
	per += (fmt & PERF_FORMAT_ID) ? 8 : 0;
	per += (fmt & MS_PERF_FORMAT_LOST) ? 8 : 0;
	(void)v;
	return skip(c, nr * per);
}

/* RAW and BRANCH_STACK, where the sample has them. */
static inline int parse_raw_branch(const struct perf_event_attr *a, struct cur *c, struct ms_sample *s)
{
	uint64_t t = a->sample_type, n;
	uint32_t u[1];

	if (t & PERF_SAMPLE_RAW) {
		if (c->end - c->p < 4)
			return -EBADMSG;
		memcpy(&u[0], c->p, 4);
		c->p += 4;
		if (skip(c, u[0]))
			return -EBADMSG;
		s->raw = c->p - u[0];
		s->raw_size = u[0];
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		if (u64(c, &n) || n > 4096)
			return -EBADMSG;
		if ((a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && skip(c, 8))
			return -EBADMSG;
		if (skip(c, n * 24))
			return -EBADMSG;
	}
	return 0;
}

/* REGS_USER (the stack pointer among them) and STACK_USER, where the sample has them. */
static inline int parse_user(const struct perf_event_attr *a, struct cur *c, struct ms_sample *s)
{
	uint64_t t = a->sample_type, v, n;
	int i;

	if (t & PERF_SAMPLE_REGS_USER) {
		if (u64(c, &v))
			return -EBADMSG;
		if (v) {                 /* abi 0: no registers (a kernel thread) */
			n = (uint64_t)__builtin_popcountll(a->sample_regs_user);
			i = ms_sample_sp_index(a->sample_regs_user);
			if ((uint64_t)(c->end - c->p) < n * 8)
				return -EBADMSG;
			if (i >= 0) {
				memcpy(&s->sp, c->p + 8 * i, 8);
				s->has_sp = true;
			}
			s->regs = c->p;
			s->regs_mask = a->sample_regs_user;
			c->p += n * 8;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		if (u64(c, &n) || skip(c, n))
			return -EBADMSG;
		s->stack = c->p - n;
		s->stack_size = n;
		if (n && u64(c, &v))
			return -EBADMSG;
		if (n && v < n)
			s->stack_size = v;     /* dyn_size: what was really copied */
	}
	return 0;
}

int ms_sample_parse(const struct perf_event_attr *a, const struct perf_event_header *rec,
		    struct ms_sample *s)
{
	uint64_t t = a->sample_type, v, n;
	struct cur c = { (const unsigned char *)(rec + 1), (const unsigned char *)rec + rec->size };
	uint32_t u[2];

	clear(s);
	if ((t & PERF_SAMPLE_IDENTIFIER) && u64(&c, &s->id))
		return -EBADMSG;
	s->has_id = t & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID);
	if ((t & PERF_SAMPLE_IP) && u64(&c, &s->ip))
		return -EBADMSG;
	if (t & PERF_SAMPLE_TID) {
		if (u64(&c, &v))
			return -EBADMSG;
		memcpy(u, &v, 8);
		s->pid = u[0];
		s->tid = u[1];
	}
	if (t & PERF_SAMPLE_TIME) {
		if (u64(&c, &s->time))
			return -EBADMSG;
		s->has_time = true;
	}
	if (t & PERF_SAMPLE_ADDR) {
		if (u64(&c, &s->addr))
			return -EBADMSG;
		s->has_addr = true;
	}
	if ((t & PERF_SAMPLE_ID) && u64(&c, &s->id))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_STREAM_ID) && skip(&c, 8))
		return -EBADMSG;
	if (t & PERF_SAMPLE_CPU) {
		if (u64(&c, &v))
			return -EBADMSG;
		memcpy(u, &v, 8);
		s->cpu = u[0];
	}
	if ((t & PERF_SAMPLE_PERIOD) && u64(&c, &s->period))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_READ) && read_format_size(a->read_format, &c))
		return -EBADMSG;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (u64(&c, &n) || n > (uint64_t)(c.end - c.p) / 8)
			return -EBADMSG;
		s->chain = (const uint64_t *)c.p;
		s->chain_len = n;
		c.p += n * 8;
	}
	if ((t & (PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK)) && parse_raw_branch(a, &c, s))
		return -EBADMSG;
	if ((t & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) && parse_user(a, &c, s))
		return -EBADMSG;
	if ((t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && u64(&c, &s->weight))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_DATA_SRC) && u64(&c, &s->data_src))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_TRANSACTION) && skip(&c, 8))
		return -EBADMSG;
	if (t & PERF_SAMPLE_REGS_INTR) {
		if (u64(&c, &v))
			return -EBADMSG;
		if (v && skip(&c, (uint64_t)__builtin_popcountll(a->sample_regs_intr) * 8))
			return -EBADMSG;
	}
	if ((t & PERF_SAMPLE_PHYS_ADDR) && u64(&c, &s->phys_addr))
		return -EBADMSG;
	return 0;
}

void ms_sample_layout_of(const struct perf_event_attr *a, struct ms_sample_layout *l)
{
	const uint64_t variable = PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
				  PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR;
	uint64_t t = a->sample_type;
	int off = 8, i;

	*l = (struct ms_sample_layout){ .ip = -1, .tid = -1, .time = -1, .addr = -1, .cpu = -1,
					.data_src = -1, .sp = -1, .abi = -1, .period = -1, .weight = -1 };
	if (t & variable)
		return;
#define AT(flag, field) do { if (t & (flag)) { l->field = (int16_t)off; off += 8; } } while (0)
	off += t & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	AT(PERF_SAMPLE_IP, ip);
	AT(PERF_SAMPLE_TID, tid);
	AT(PERF_SAMPLE_TIME, time);
	AT(PERF_SAMPLE_ADDR, addr);
	off += t & PERF_SAMPLE_ID ? 8 : 0;
	off += t & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	AT(PERF_SAMPLE_CPU, cpu);
	AT(PERF_SAMPLE_PERIOD, period);
	if (t & PERF_SAMPLE_REGS_USER) {
		l->abi = (int16_t)off;
		i = ms_sample_sp_index(a->sample_regs_user);
		if (i >= 0)
			l->sp = (int16_t)(off + 8 + 8 * i);
		off += 8 + 8 * __builtin_popcountll(a->sample_regs_user);
	}
	AT(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, weight);
	AT(PERF_SAMPLE_DATA_SRC, data_src);
	off += t & PERF_SAMPLE_TRANSACTION ? 8 : 0;
	off += t & PERF_SAMPLE_PHYS_ADDR ? 8 : 0;
#undef AT
	if (t & ~(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		  PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		  PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_WEIGHT |
		  PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
		  PERF_SAMPLE_PHYS_ADDR))
		return;                  /* a field this build does not know the size of */
	if (off > UINT16_MAX)
		return;
	l->size = (uint16_t)off;
	l->fixed = true;
}

size_t ms_sample_id_size(const struct perf_event_attr *attr)
{
	if (!attr->sample_id_all)
		return 0;
	return 8 * (size_t)__builtin_popcountll(attr->sample_type &
		(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
		 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER));
}

int ms_sample_parse_id(const struct perf_event_attr *a, const struct perf_event_header *rec,
		       struct ms_sample *s)
{
	uint64_t t = a->sample_type, v;
	const unsigned char *body = (const unsigned char *)(rec + 1);
	const unsigned char *p = (const unsigned char *)rec + rec->size;
	uint32_t u[2];

	clear(s);
	if (!a->sample_id_all)
		return 0;
#define TAKE(dst) do { if (p - body < 8) return -EBADMSG; p -= 8; memcpy(&(dst), p, 8); } while (0)
	/* The trailer is TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER: read it from the end. */
	if (t & PERF_SAMPLE_IDENTIFIER) {
		TAKE(s->id);
		s->has_id = true;
	}
	if (t & PERF_SAMPLE_CPU) {
		TAKE(v);
		memcpy(u, &v, 8);
		s->cpu = u[0];
	}
	if (t & PERF_SAMPLE_STREAM_ID)
		TAKE(v);
	if (t & PERF_SAMPLE_ID) {
		TAKE(s->id);
		s->has_id = true;
	}
	if (t & PERF_SAMPLE_TIME) {
		TAKE(s->time);
		s->has_time = true;
	}
	if (t & PERF_SAMPLE_TID) {
		TAKE(v);
		memcpy(u, &v, 8);
		s->pid = u[0];
		s->tid = u[1];
	}
#undef TAKE
	return 0;
}

/* --- runs of samples (mapscope/event.h) ------------------------------------ */

MS_EXPORT struct ms_samples ms_samples_of(const struct ms_event *evs, size_t n)
{
	return (struct ms_samples){
		.base = (const unsigned char *)evs, .n = n, .stride = sizeof(*evs),
		.addr = offsetof(struct ms_event, sample.addr), .ip = offsetof(struct ms_event, sample.ip),
		.time = offsetof(struct ms_event, time), .pid = offsetof(struct ms_event, pid),
		.cpu = offsetof(struct ms_event, cpu), .data_src = offsetof(struct ms_event, sample.data_src),
		.period = offsetof(struct ms_event, sample.period),
		.weight = offsetof(struct ms_event, sample.weight),
		.evs = evs, .proto = evs,
	};
}

MS_EXPORT const struct ms_event *ms_samples_event(const struct ms_samples *v, size_t i, struct ms_event *tmp)
{
	samples_begin(v, tmp);
	return samples_at(v, i, tmp);
}
