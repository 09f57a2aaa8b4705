/*
 * Internal: what the writer of the TRACING_DATA blob (kernel/tracefs.c)
 * and its reader (stream/tracing.c) both walk: perf's trace-event-info
 * sections, each a name and a u64 size before its bytes.
 */
#ifndef MS_UTIL_TRACEDATA_H
#define MS_UTIL_TRACEDATA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Past a section of the blob named name (len bytes, its NUL too) and sized by the u64 after it; NULL: damage. */
static inline const unsigned char *ms_tracedata_skip_section(const unsigned char *p, const unsigned char *end,
							     const char *name, size_t len)
{
	uint64_t size;

	if ((size_t)(end - p) < len + 8 || memcmp(p, name, len))
		return NULL;
	memcpy(&size, p + len, 8);
	p += len + 8;
	return (size_t)(end - p) < size ? NULL : p + size;
}

#endif
