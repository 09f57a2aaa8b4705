/* Text written by hand (textout.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "output/format.h"
#include "textout.h"

/*
 * n bytes into stdout's buffer where they fit, as putc_unlocked() puts
 * one (a line-buffered or unbuffered stream leaves no room there, so its
 * bytes take fwrite's way and flush as they always did); else fwrite. A
 * report writes a dozen fields a row: fwrite's checks were 3% of it.
 */
static void put_raw(const char *s, size_t n)
{
#ifdef __GLIBC__
	FILE *f = stdout;

	if ((size_t)(f->_IO_write_end - f->_IO_write_ptr) >= n) {
		memcpy(f->_IO_write_ptr, s, n);
		f->_IO_write_ptr += n;
		return;
	}
#endif
	fwrite_unlocked(s, 1, n, stdout);
}

static void pad(int n)
{
	static const char spaces[] = "                                ";

	for (; n > 0; n -= 32)
		put_raw(spaces, n < 32 ? (size_t)n : 32);
}

/* s of len bytes, padded to |width| as "%*s" or "%-*s" would. */
static void put(const char *s, size_t len, int width)
{
	int w = width < 0 ? -width : width, fill = len < (size_t)w ? w - (int)len : 0;

	if (width > 0)
		pad(fill);
	put_raw(s, len);
	if (width < 0)
		pad(fill);
}

void text_s(const char *s, int width)
{
	put(s, strlen(s), width);
}

void text_u64(uint64_t v, int width)
{
	char b[20];

	put(b, (size_t)(ms_format_dec(b, v) - b), width);
}

/* "0x" and v in lower-case hex, ending at end: where it begins. */
static char *hex(uint64_t v, char *end)
{
	do {
		*--end = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--end = 'x';
	*--end = '0';
	return end;
}

void text_range(uint64_t a, uint64_t b, int width)
{
	char buf[40], *p = buf + sizeof(buf);

	p = hex(a < b ? b : a, p);
	*--p = '-';
	p = hex(a < b ? a : b, p);
	put(p, (size_t)(buf + sizeof(buf) - p), width);
}
