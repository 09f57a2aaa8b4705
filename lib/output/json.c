/*
 * The JSON writer: nesting and commas tracked in bit masks, one per level,
 * so that a caller never places a comma; strings checked as UTF-8 as they
 * are escaped, since paths and comms in a recording are bytes, not text.
 * Numbers are written by hand and bytes with the unlocked stdio calls: a
 * report of 500,000 regions writes ten million items, and fprintf's
 * parsing of its format was most of the writer's time.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "output/json.h"

/* The longest key or string value written the quick way (quick_key()). */
#define QUICK_MAX 64

void ms_json_init(struct ms_json *w, FILE *f, unsigned flags)
{
	*w = (struct ms_json){ .f = f, .flags = flags };
}

int ms_json_finish(struct ms_json *w)
{
	if (!w->error && (w->depth || w->after_key))
		w->error = -EINVAL;
	if (!w->error && ferror(w->f))
		w->error = -EIO;
	return w->error;
}

/* v in decimal, or in hex (digits: at least that many, zero-padded). */
static void put_u64(FILE *f, uint64_t v)
{
	char b[20];
	size_t i = sizeof(b);

	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	fwrite_unlocked(b + i, 1, sizeof(b) - i, f);
}

static void put_hex(FILE *f, uint64_t v, size_t digits)
{
	char b[16];
	size_t i = sizeof(b);

	do
		b[--i] = "0123456789abcdef"[v & 15];
	while ((v >>= 4) || sizeof(b) - i < digits);
	fwrite_unlocked(b + i, 1, sizeof(b) - i, f);
}

static void misuse(struct ms_json *w)
{
	if (!w->error)
		w->error = -EINVAL;
}

static uint64_t level_bit(const struct ms_json *w)
{
	return (uint64_t)1 << (w->depth - 1);
}

/* What goes before a key or a value, put in b (18 bytes at most): the comma, the space or the new line. Its length. */
static size_t separator(struct ms_json *w, bool key, char *b)
{
	size_t n = 0;
	bool more;

	if (w->after_key) {
		w->after_key = false;
		return 0;
	}
	if (!key && w->depth && (w->in_object & level_bit(w)))
		misuse(w);             /* a value in an object needs its key */
	more = w->depth && (w->has_member & level_bit(w));
	if (more)
		b[n++] = ',';
	if (w->newline) {
		memcpy(b + n, "\n                ", (size_t)w->newline);   /* newline - 1 spaces: at most 16 */
		n += (size_t)w->newline;
		w->newline = 0;
	} else if (more && !(w->tight & level_bit(w))) {
		b[n++] = ' ';
	}
	if (w->depth)
		w->has_member |= level_bit(w);
	return n;
}

static void item_begin(struct ms_json *w, bool key)
{
	char b[20];
	size_t n = separator(w, key, b);

	if (n)
		fwrite_unlocked(b, 1, n, w->f);
}

static void open_container(struct ms_json *w, char c, bool object, bool tight)
{
	uint64_t bit;

	item_begin(w, false);
	if (w->depth == MS_JSON_MAX_DEPTH) {
		misuse(w);
		return;
	}
	w->depth++;
	bit = level_bit(w);
	w->in_object = object ? w->in_object | bit : w->in_object & ~bit;
	w->tight = tight ? w->tight | bit : w->tight & ~bit;
	w->has_member &= ~bit;
	fputc_unlocked(c, w->f);
}

static void close_container(struct ms_json *w, char c, bool object)
{
	if (!w->depth || w->after_key || !(w->in_object & level_bit(w)) != !object) {
		misuse(w);
		return;
	}
	w->newline = 0;
	w->depth--;
	fputc_unlocked(c, w->f);
}

void ms_json_object_begin(struct ms_json *w)
{
	open_container(w, '{', true, false);
}

void ms_json_object_end(struct ms_json *w)
{
	close_container(w, '}', true);
}

void ms_json_array_begin(struct ms_json *w)
{
	open_container(w, '[', false, false);
}

void ms_json_array_begin_tight(struct ms_json *w)
{
	open_container(w, '[', false, true);
}

void ms_json_array_end(struct ms_json *w)
{
	close_container(w, ']', false);
}

void ms_json_newline(struct ms_json *w, int indent)
{
	w->newline = 1 + (indent < 0 ? 0 : indent > 16 ? 16 : indent);
}

/*
 * The length of the UTF-8 sequence at s (n bytes left), and whether it is
 * valid: the ranges of RFC 3629's table, which leave out overlong forms,
 * surrogates and anything past U+10FFFF. An invalid one is as long as its
 * maximal subpart: the lead byte and the continuation bytes that could
 * still have made a valid sequence.
 */
static size_t utf8_seq(const unsigned char *s, size_t n, bool *ok)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	*ok = false;
	if (c < 0x80) {
		*ok = true;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3;
	else
		return 1;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi)
			return i;
		lo = 0x80;
		hi = 0xbf;
	}
	*ok = true;
	return need + 1;
}

/* A byte that cannot go into the string as it is. */
static bool must_escape(const struct ms_json *w, unsigned char c)
{
	if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80)
		return true;
	return (w->flags & MS_JSON_SCRIPT) && (c == '<' || c == '>' || c == '&');
}

static void str_body(struct ms_json *w, const unsigned char *s, size_t len)
{
	size_t i = 0, run, k;
	bool ok;

	while (i < len) {
		for (run = i; run < len && !must_escape(w, s[run]); run++)
			;
		fwrite_unlocked(s + i, 1, run - i, w->f);
		if ((i = run) == len)
			break;
		if (s[i] == '"' || s[i] == '\\') {
			fprintf(w->f, "\\%c", s[i++]);
		} else if (s[i] < 0x80) {
			fprintf(w->f, "\\u%04x", s[i++]);
		} else {
			k = utf8_seq(s + i, len - i, &ok);
			if (ok)
				fwrite_unlocked(s + i, 1, k, w->f);
			else
				fputs("\\ufffd", w->f);
			i += k;
		}
	}
}

static bool quick_key(struct ms_json *w, const char *key, char *b, size_t *n);

void ms_json_key(struct ms_json *w, const char *key)
{
	char b[20 + QUICK_MAX + 8];
	size_t n;

	if (quick_key(w, key, b, &n)) {
		fwrite_unlocked(b, 1, n, w->f);
		w->after_key = true;
		return;
	}
	if (!w->depth || !(w->in_object & level_bit(w)) || w->after_key) {
		misuse(w);
		return;
	}
	item_begin(w, true);
	fputc_unlocked('"', w->f);
	str_body(w, (const unsigned char *)key, strlen(key));
	fwrite_unlocked("\": ", 1, 3, w->f);
	w->after_key = true;
}

/*
 * The quick way to a key and its value: one write of the separator, the
 * key and the value, where the key (and a string value) need no escaping
 * and fit in b. A report writes twenty of them a row, and the stdio calls
 * of the slow way were most of the writer's time. *n: the bytes in b,
 * the separator and the key; false where the slow way must be taken.
 */

static bool plain(const struct ms_json *w, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (must_escape(w, (unsigned char)s[i]))
			return false;
	return true;
}

static bool quick_key(struct ms_json *w, const char *key, char *b, size_t *n)
{
	const bool script = w->flags & MS_JSON_SCRIPT;
	char sep[20], *k = b + 18;     /* the key is put after the longest separator, then moved down */
	size_t len, m;
	unsigned char c;

	if (!w->depth || !(w->in_object & level_bit(w)) || w->after_key)
		return false;
	k[0] = '"';
	for (len = 0; (c = (unsigned char)key[len]); len++) {     /* scanned as it is copied: keys are short */
		if (len >= QUICK_MAX || c < 0x20 || c == '"' || c == '\\' || c >= 0x80 ||
		    (script && (c == '<' || c == '>' || c == '&')))
			return false;
		k[1 + len] = (char)c;
	}
	memcpy(k + 1 + len, "\": ", 3);
	m = separator(w, true, sep);
	memmove(b + m, k, len + 4);
	memcpy(b, sep, m);
	*n = m + len + 4;
	return true;
}

/* v in decimal at b + n, two digits a step (nanosecond times have fourteen): the new length. */
static size_t append_u64(char *b, size_t n, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	char d[20];
	size_t i = sizeof(d);

	while (v >= 100) {
		i -= 2;
		memcpy(d + i, pairs + v % 100 * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		i -= 2;
		memcpy(d + i, pairs + v * 2, 2);
	} else {
		d[--i] = (char)('0' + v);
	}
	memcpy(b + n, d + i, sizeof(d) - i);
	return n + sizeof(d) - i;
}

void ms_json_str_len(struct ms_json *w, const char *s, size_t len)
{
	item_begin(w, false);
	fputc_unlocked('"', w->f);
	str_body(w, (const unsigned char *)s, len);
	fputc_unlocked('"', w->f);
}

void ms_json_str(struct ms_json *w, const char *s)
{
	if (!s)
		ms_json_null(w);
	else
		ms_json_str_len(w, s, strlen(s));
}

void ms_json_u64(struct ms_json *w, uint64_t v)
{
	item_begin(w, false);
	put_u64(w->f, v);
}

void ms_json_int(struct ms_json *w, int64_t v)
{
	item_begin(w, false);
	if (v < 0)
		fputc_unlocked('-', w->f);
	put_u64(w->f, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

void ms_json_bool(struct ms_json *w, bool v)
{
	item_begin(w, false);
	fputs_unlocked(v ? "true" : "false", w->f);
}

void ms_json_null(struct ms_json *w)
{
	item_begin(w, false);
	fputs_unlocked("null", w->f);
}

void ms_json_addr(struct ms_json *w, uint64_t a)
{
	item_begin(w, false);
	fwrite_unlocked("\"0x", 1, 3, w->f);
	put_hex(w->f, a, 1);
	fputc_unlocked('"', w->f);
}

void ms_json_addr16(struct ms_json *w, uint64_t a)
{
	item_begin(w, false);
	fputc_unlocked('"', w->f);
	put_hex(w->f, a, 16);
	fputc_unlocked('"', w->f);
}

/* A key and a word (null, true, false), the quick way where it can be. */
static void key_word(struct ms_json *w, const char *key, const char *word, size_t len)
{
	char b[20 + QUICK_MAX + 8 + 8];
	size_t n;

	if (!quick_key(w, key, b, &n)) {
		ms_json_key(w, key);
		item_begin(w, false);
		fwrite_unlocked(word, 1, len, w->f);
		return;
	}
	memcpy(b + n, word, len);
	fwrite_unlocked(b, 1, n + len, w->f);
}

void ms_json_key_str(struct ms_json *w, const char *key, const char *s)
{
	char b[20 + 2 * QUICK_MAX + 8];
	size_t n, len = s ? strnlen(s, QUICK_MAX + 1) : 0;

	if (!s) {
		key_word(w, key, "null", 4);
		return;
	}
	if (len > QUICK_MAX || !plain(w, s, len) || !quick_key(w, key, b, &n)) {
		ms_json_key(w, key);
		ms_json_str(w, s);
		return;
	}
	b[n++] = '"';
	memcpy(b + n, s, len);
	n += len;
	b[n++] = '"';
	fwrite_unlocked(b, 1, n, w->f);
}

void ms_json_key_u64(struct ms_json *w, const char *key, uint64_t v)
{
	char b[20 + QUICK_MAX + 8 + 20];
	size_t n;

	if (!quick_key(w, key, b, &n)) {
		ms_json_key(w, key);
		ms_json_u64(w, v);
		return;
	}
	n = append_u64(b, n, v);
	fwrite_unlocked(b, 1, n, w->f);
}

void ms_json_key_int(struct ms_json *w, const char *key, int64_t v)
{
	ms_json_key(w, key);
	ms_json_int(w, v);
}

void ms_json_key_bool(struct ms_json *w, const char *key, bool v)
{
	key_word(w, key, v ? "true" : "false", v ? 4 : 5);
}

void ms_json_key_null(struct ms_json *w, const char *key)
{
	key_word(w, key, "null", 4);
}

void ms_json_key_addr(struct ms_json *w, const char *key, uint64_t a)
{
	char b[20 + QUICK_MAX + 8 + 24];
	size_t n, i;
	int k;

	if (!quick_key(w, key, b, &n)) {
		ms_json_key(w, key);
		ms_json_addr(w, a);
		return;
	}
	memcpy(b + n, "\"0x", 3);
	n += 3;
	for (k = 60; k > 0 && !(a >> k & 15); k -= 4)
		;
	for (i = 0; k >= 0; k -= 4)
		b[n + i++] = "0123456789abcdef"[a >> k & 15];
	n += i;
	b[n++] = '"';
	fwrite_unlocked(b, 1, n, w->f);
}

void ms_json_key_addr_or_null(struct ms_json *w, const char *key, uint64_t a, bool present)
{
	ms_json_key(w, key);
	if (present)
		ms_json_addr(w, a);
	else
		ms_json_null(w);
}
