/*
 * Internal: a growable byte buffer for building file sections and records.
 * The buffer owns its memory; ms_buf_release() frees it. After a failed
 * append the buffer keeps what it held and remembers the failure, so a run
 * of appends can be checked once at the end (ms_buf_error).
 */
#ifndef MS_UTIL_BUF_H
#define MS_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

struct ms_buf {
	unsigned char *data;
	size_t len;
	size_t cap;
	int error;           /* 0, or -ENOMEM after a failed append */
};

void ms_buf_init(struct ms_buf *b);
void ms_buf_release(struct ms_buf *b);
void ms_buf_append(struct ms_buf *b, const void *p, size_t n);
void ms_buf_zero(struct ms_buf *b, size_t n);
void ms_buf_u32(struct ms_buf *b, uint32_t v);
void ms_buf_u64(struct ms_buf *b, uint64_t v);
/* Appends s with its NUL. */
void ms_buf_cstr(struct ms_buf *b, const char *s);
/* perf's header string: u32 length, then s padded with NULs to 64 bytes. */
void ms_buf_perf_string(struct ms_buf *b, const char *s);
/* Pads with NULs to a multiple of align (a power of two). */
void ms_buf_align(struct ms_buf *b, size_t align);
static inline int ms_buf_error(const struct ms_buf *b) { return b->error; }

#endif
