/*
 * Internal: the fields every tracepoint's data opens with, for the
 * tracepoints mapscope writes itself (mapscope:vma_referenced,
 * mapscope:user_string): as their format lists them, and as they lie in a
 * sample's raw data. The format's offsets count from the first.
 */
#ifndef MS_KERNEL_TPCOMMON_H
#define MS_KERNEL_TPCOMMON_H

#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

#include "util/buf.h"

#define MS_TP_COMMON_FORMAT                                                           \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"

/* Members of a packed sample struct, where its raw data begins. */
#define MS_TP_COMMON_FIELDS                              \
	uint16_t common_type;                            \
	uint8_t common_flags, common_preempt_count;      \
	int32_t common_pid

/*
 * Members of a packed sample struct before its raw data: perf's layout of
 * the fields every mapscope event's samples have (ms_referenced_attr():
 * IDENTIFIER, IP, TID, TIME, ADDR, then RAW's size).
 */
#define MS_TP_SAMPLE_HEAD                        \
	struct perf_event_header header;         \
	uint64_t identifier, ip;                 \
	uint32_t pid, tid;                       \
	uint64_t time, addr;                     \
	uint32_t raw_size

/* Appends event name's format file text, as tracefs would write it, with id tp_id and its fields' text. */
static inline void ms_tp_format(const char *name, uint16_t tp_id, const char *fields, size_t len, struct ms_buf *out)
{
	char head[96];
	int n = snprintf(head, sizeof(head), "name: %s\nID: %u\nformat:\n", name, tp_id);

	ms_buf_append(out, head, (size_t)n);
	ms_buf_append(out, fields, len);
}

#endif
