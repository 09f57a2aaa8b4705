/*
 * Internal: decoding PERF_RECORD_SAMPLE bodies and the sample_id_all
 * trailers of other records, by the sample_type of the event that wrote
 * them. Every field is bounds-checked against the record's size.
 */
#ifndef MS_STREAM_SAMPLE_H
#define MS_STREAM_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct ms_sample {
	uint64_t id, ip, time, addr, period, data_src, weight, phys_addr;
	uint32_t pid, tid, cpu;
	const uint64_t *chain;     /* CALLCHAIN, unaligned-safe only on x86: see copy below */
	uint64_t chain_len;
	const unsigned char *raw;  /* RAW tracepoint data */
	uint32_t raw_size;
	uint64_t sp;               /* user stack pointer, when has_sp */
	const unsigned char *regs; /* REGS_USER values (unaligned), regs_mask says which */
	uint64_t regs_mask;
	const unsigned char *stack;/* STACK_USER: the top of the user stack */
	uint64_t stack_size;
	bool has_time, has_addr, has_sp, has_id;
};

/* Decodes a sample body (after the header). 0, or -EBADMSG if it does not fit. */
int ms_sample_parse(const struct perf_event_attr *attr, const struct perf_event_header *rec,
		    struct ms_sample *s);

/* The size of the sample_id_all trailer the event puts after its other records (0: none). */
size_t ms_sample_id_size(const struct perf_event_attr *attr);

/* Decodes the sample_id_all trailer of a non-sample record. 0 or -EBADMSG. */
int ms_sample_parse_id(const struct perf_event_attr *attr, const struct perf_event_header *rec,
		       struct ms_sample *s);

/*
 * Where each field of a sample body lies when every field before it has a
 * fixed size: then a sample is decoded by loads at known offsets, with no
 * walk over sample_type. Offsets are from the record's start; -1: absent.
 */
struct ms_sample_layout {
	bool fixed;                /* false: decode with ms_sample_parse */
	uint16_t size;             /* the record size every sample of the event has */
	int16_t ip, tid, time, addr, cpu, data_src, sp, period;
	int16_t weight;            /* WEIGHT's u64, or WEIGHT_STRUCT's (its low 32 bits the latency) */
	int16_t abi;               /* REGS_USER's abi word: 0 there means no registers follow */
};

/* Fills l from the event's attr. */
void ms_sample_layout_of(const struct perf_event_attr *attr, struct ms_sample_layout *l);

/* The index of the user stack pointer among the sampled user registers, or -1. */
int ms_sample_sp_index(uint64_t regs_mask);

#endif
