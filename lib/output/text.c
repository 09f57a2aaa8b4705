/*
 * Names from a recording made safe for a terminal: one place decides what
 * is escaped, so that report, timeline, maps and the warnings agree.
 */
#include <string.h>

#include "output/text.h"

/* Bytes of a C1 control encoded in UTF-8 (U+0080..U+009F) at s, else 0. */
static int c1_utf8(const unsigned char *s)
{
	return s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f ? 2 : 0;
}

/* Length of a valid UTF-8 sequence at s (1 for ASCII), 0 where it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n, i;

	if (s[0] < 0x80)
		return 1;
	n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 && s[0] < 0xf0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Whether the byte at s starts something escaped; *n is how many bytes it covers. */
static bool escaped(const unsigned char *s, int *n)
{
	*n = c1_utf8(s);
	if (*n)
		return true;
	*n = utf8_len(s);
	if (!*n) {      /* a stray byte: only 0x80..0x9f act as controls (8-bit C1); Latin-1 names stay */
		*n = 1;
		return s[0] <= 0x9f;
	}
	return *n == 1 && (s[0] < 0x20 || s[0] == 0x7f || s[0] == '\\');
}

/* The escape of one byte into out (at least 5 bytes); its length. */
static size_t escape_byte(unsigned char c, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\\' ? "\\\\" : NULL;

	if (named) {
		memcpy(out, named, 3);
		return 2;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	out[4] = '\0';
	return 4;
}

bool ms_text_needs_quote(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	if (!p)
		return false;
	for (;;) {
		/* Printable ASCII other than the backslash, nearly every byte of a name: no call per byte. */
		while (*p >= 0x20 && *p < 0x7f && *p != '\\')
			p++;
		if (!*p)
			return false;
		if (escaped(p, &n))
			return true;
		p += n;
	}
}

const char *ms_text_quote(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, k;
	char esc[5];
	int n, i;

	if (!s)
		return "";
	if (!ms_text_needs_quote(s))
		return s;
	for (; *p; p += n) {
		bool e = escaped(p, &n);

		for (i = 0; i < n; i++) {
			k = e ? escape_byte(p[i], esc) : 1;
			if (used + k + 4 > len) {        /* room for "..." and the NUL */
				memcpy(buf + used, "...", 4);
				return buf;
			}
			memcpy(buf + used, e ? esc : (const char *)p + i, k);
			used += k;
		}
	}
	buf[used] = '\0';
	return buf;
}

void ms_text_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[5];
	int n, i;

	if (!ms_text_needs_quote(s)) {
		fputs(s ? s : "", f);
		return;
	}
	for (; *p; p += n) {
		bool e = escaped(p, &n);

		for (i = 0; i < n; i++) {
			if (e)
				fwrite(esc, 1, escape_byte(p[i], esc), f);
			else
				fputc(p[i], f);
		}
	}
}
