#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/grow.h"

void ms_buf_init(struct ms_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void ms_buf_release(struct ms_buf *b)
{
	free(b->data);
	ms_buf_init(b);
}

static int reserve(struct ms_buf *b, size_t n)
{
	if (b->error)
		return b->error;
	if (n > SIZE_MAX - b->len || MS_GROW(b->data, b->len + n, b->cap, 256, SIZE_MAX, false))
		return b->error = -ENOMEM;
	return 0;
}

void ms_buf_append(struct ms_buf *b, const void *p, size_t n)
{
	if (!n || reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void ms_buf_zero(struct ms_buf *b, size_t n)
{
	if (!n || reserve(b, n))
		return;
	memset(b->data + b->len, 0, n);
	b->len += n;
}

void ms_buf_u32(struct ms_buf *b, uint32_t v)
{
	ms_buf_append(b, &v, sizeof(v));
}

void ms_buf_u64(struct ms_buf *b, uint64_t v)
{
	ms_buf_append(b, &v, sizeof(v));
}

void ms_buf_cstr(struct ms_buf *b, const char *s)
{
	ms_buf_append(b, s, strlen(s) + 1);
}

void ms_buf_perf_string(struct ms_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + 63) & ~(size_t)63;

	ms_buf_u32(b, (uint32_t)padded);
	ms_buf_append(b, s, n);
	ms_buf_zero(b, padded - n);
}

void ms_buf_align(struct ms_buf *b, size_t align)
{
	size_t rem = b->len & (align - 1);

	if (rem)
		ms_buf_zero(b, align - rem);
}
