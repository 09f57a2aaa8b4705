/*
 * Internal: the fields every tracepoint's data opens with, for the
 * tracepoints mapscope writes itself (mapscope:vma_referenced,
 * mapscope:user_string): as their format lists them, and as they lie in a
 * sample's raw data. The format's offsets count from the first.
 */
#ifndef MS_KERNEL_TPCOMMON_H
#define MS_KERNEL_TPCOMMON_H

#include <stdint.h>

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

#endif
