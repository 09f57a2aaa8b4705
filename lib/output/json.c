/*
 * The JSON writer: nesting and commas tracked in bit masks, one per level,
 * so that a caller never places a comma; strings checked as UTF-8 as they
 * are escaped, since paths and comms in a recording are bytes, not text.
 * Bytes go into the writer's own buffer and reach f a buffer at a time:
 * a report of 500,000 regions writes ten million items, and a stdio call
 * for each (fprintf's parsing of its format most of all) was most of the
 * writer's time. Numbers are written by hand; which bytes must be escaped
 * is a table.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "output/json.h"

/* The longest key or string value written the quick way (quick_key()). */
#define QUICK_MAX 64
/* The longest separator: a comma, a new line and 16 spaces. */
#define SEP_MAX 18

/* Bit 0: the byte cannot go into a JSON string as it is; bit 1: nor into one inside an HTML <script> element. */
static const unsigned char escape[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f ... 0xff] = 1, ['<'] = 2, ['>'] = 2, ['&'] = 2,
};

static unsigned escape_mask(const struct ms_json *w)
{
	return w->flags & MS_JSON_SCRIPT ? 3 : 1;
}

void ms_json_init(struct ms_json *w, FILE *f, unsigned flags)
{
	w->f = f;
	w->flags = flags;
	w->depth = 0;
	w->in_object = w->has_member = w->tight = 0;
	w->after_key = false;
	w->newline = 0;
	w->error = 0;
	w->used = 0;
	for (size_t i = 0; i < MS_JSON_KEYS; i++)
		w->keys[i].at = NULL;
}

/*
 * What the buffer holds, written to f. With f's lock (fwrite, not
 * fwrite_unlocked): f is the caller's, which another of its threads may
 * write too, and one lock a buffer costs nothing.
 */
static void drain(struct ms_json *w)
{
	if (w->used)
		fwrite(w->buf, 1, w->used, w->f);
	w->used = 0;
}

int ms_json_finish(struct ms_json *w)
{
	drain(w);
	if (!w->error && (w->depth || w->after_key))
		w->error = -EINVAL;
	if (!w->error && ferror(w->f))
		w->error = -EIO;
	return w->error;
}

/* Room for n more bytes in the buffer (n well under MS_JSON_BUF): where they go. The caller adds what it wrote to used. */
static char *room(struct ms_json *w, size_t n)
{
	if (w->used + n > sizeof(w->buf))
		drain(w);
	return w->buf + w->used;
}

static void put(struct ms_json *w, const void *p, size_t n)
{
	if (n > sizeof(w->buf) / 4) {          /* a long string: straight to f */
		drain(w);
		fwrite(p, 1, n, w->f);
		return;
	}
	memcpy(room(w, n), p, n);
	w->used += n;
}

static void put_c(struct ms_json *w, char c)
{
	*room(w, 1) = c;
	w->used++;
}

/* After a value or a container's end: one at the top level is all written, and goes to f. */
static void item_done(struct ms_json *w)
{
	if (!w->depth)
		drain(w);
}

/* v in decimal at b, two digits a step from the end (nanosecond times have fourteen): its length. */
static size_t decimal(char *b, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	size_t len = 1, i;
	uint64_t t;

	for (t = v; t >= 10; t /= 10)
		len++;
	for (i = len; v >= 100; v /= 100) {
		i -= 2;
		memcpy(b + i, pairs + v % 100 * 2, 2);
	}
	if (v >= 10)
		memcpy(b, pairs + v * 2, 2);
	else
		b[0] = (char)('0' + v);
	return len;
}

/* v in hex at b, at least digits of them (zero-padded, 16 at most): its length. */
static size_t hex(char *b, uint64_t v, int digits)
{
	int k = 60, i = 0;

	while (k > 0 && !(v >> k & 15) && k >= 4 * digits)
		k -= 4;
	for (; k >= 0; k -= 4)
		b[i++] = "0123456789abcdef"[v >> k & 15];
	return (size_t)i;
}

static void put_u64(struct ms_json *w, uint64_t v)
{
	w->used += decimal(room(w, 20), v);
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

/* What goes before a key or a value, put in b (SEP_MAX bytes at most): the comma, the space or the new line. Its length. */
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
	w->used += separator(w, key, room(w, SEP_MAX));
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
	put_c(w, c);
}

static void close_container(struct ms_json *w, char c, bool object)
{
	if (!w->depth || w->after_key || !(w->in_object & level_bit(w)) != !object) {
		misuse(w);
		return;
	}
	w->newline = 0;
	w->depth--;
	put_c(w, c);
	item_done(w);
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

/*
 * The byte at s[0], escaped where it stands for itself, or the UTF-8
 * sequence it starts, or \ufffd: the bytes used. Control characters (C0,
 * DEL, and C1: U+0080 to U+009F, which a terminal may take as the start of
 * an escape sequence) are written as \u escapes: valid JSON either way, but
 * a JSON line printed to a terminal then carries none.
 */
static size_t escaped(struct ms_json *w, const unsigned char *s, size_t len)
{
	const bool c1 = s[0] == 0xc2 && len > 1 && s[1] >= 0x80 && s[1] <= 0x9f;
	char *b = room(w, 6);
	size_t k;
	bool ok;

	if (s[0] == '"' || s[0] == '\\') {
		b[0] = '\\';
		b[1] = (char)s[0];
		w->used += 2;
		return 1;
	}
	if (s[0] < 0x80 || c1) {           /* a C0 control, DEL, or C1's code point (its second byte) */
		memcpy(b, "\\u00", 4);
		b[4] = "0123456789abcdef"[s[c1] >> 4];
		b[5] = "0123456789abcdef"[s[c1] & 15];
		w->used += 6;
		return 1 + c1;
	}
	k = utf8_seq(s, len, &ok);
	if (ok)
		put(w, s, k);
	else
		put(w, "\\ufffd", 6);
	return k;
}

static void str_body(struct ms_json *w, const unsigned char *s, size_t len)
{
	const unsigned mask = escape_mask(w);
	size_t i = 0, run;

	while (i < len) {
		for (run = i; run < len && !(escape[s[run]] & mask); run++)
			;
		put(w, s + i, run - i);
		if ((i = run) < len)
			i += escaped(w, s + i, len - i);
	}
}

/*
 * The quick way to a key: the separator and the key in one step, where the
 * key needs no escaping and is short, with room left after it for extra
 * bytes of the value. A report writes twenty keys a row. False, with
 * nothing written, where the slow way must be taken.
 */
/*
 * The key's slot, where the key is short and needs no escaping; NULL where
 * it does. Remembered by the key's address, with the key's text as it is
 * written: copying it whole, a fixed size, is quicker than a copy of the
 * key's own length (a string instruction) or a scan of it.
 */
static const char *plain_key(struct ms_json *w, const char *key, size_t *n)
{
	const unsigned mask = escape_mask(w);
	uintptr_t a = (uintptr_t)key;
	size_t slot = (a ^ a >> 6 ^ a >> 12) % MS_JSON_KEYS, len;
	char *t = w->keys[slot].text;

	if (w->keys[slot].at == key) {
		*n = w->keys[slot].len;
		return t;
	}
	for (len = 0; key[len]; len++)
		if (len + 4 >= MS_JSON_KEY_TEXT || escape[(unsigned char)key[len]] & mask)
			return NULL;
	memset(t, 0, MS_JSON_KEY_TEXT);     /* copied whole: no byte of it left unset */
	t[0] = '"';
	memcpy(t + 1, key, len);
	memcpy(t + 1 + len, "\": ", 3);
	w->keys[slot].at = key;
	*n = w->keys[slot].len = len + 4;
	return t;
}

static bool quick_key(struct ms_json *w, const char *key, size_t extra)
{
	const char *t;
	size_t n;
	char *b;

	if (!w->depth || !(w->in_object & level_bit(w)) || w->after_key || !(t = plain_key(w, key, &n)))
		return false;
	b = room(w, SEP_MAX + MS_JSON_KEY_TEXT + extra);
	if (!w->newline && (w->has_member & ~w->tight & level_bit(w))) {
		memcpy(b, ", ", 2);    /* the usual separator, as separator() would put it */
		b += 2;
	} else {
		b += separator(w, true, b);
	}
	memcpy(b, t, MS_JSON_KEY_TEXT / 2);
	if (n > MS_JSON_KEY_TEXT / 2)
		memcpy(b + MS_JSON_KEY_TEXT / 2, t + MS_JSON_KEY_TEXT / 2, MS_JSON_KEY_TEXT / 2);
	w->used = (size_t)(b + n - w->buf);
	w->after_key = true;
	return true;
}

void ms_json_key(struct ms_json *w, const char *key)
{
	if (quick_key(w, key, 0))
		return;
	if (!w->depth || !(w->in_object & level_bit(w)) || w->after_key) {
		misuse(w);
		return;
	}
	item_begin(w, true);
	put_c(w, '"');
	str_body(w, (const unsigned char *)key, strlen(key));
	put(w, "\": ", 3);
	w->after_key = true;
}

void ms_json_str_len(struct ms_json *w, const char *s, size_t len)
{
	item_begin(w, false);
	put_c(w, '"');
	str_body(w, (const unsigned char *)s, len);
	put_c(w, '"');
	item_done(w);
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
	put_u64(w, v);
	item_done(w);
}

void ms_json_int(struct ms_json *w, int64_t v)
{
	item_begin(w, false);
	if (v < 0)
		put_c(w, '-');
	put_u64(w, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	item_done(w);
}

static void word(struct ms_json *w, const char *s, size_t len)
{
	item_begin(w, false);
	put(w, s, len);
	item_done(w);
}

void ms_json_bool(struct ms_json *w, bool v)
{
	word(w, v ? "true" : "false", v ? 4 : 5);
}

void ms_json_null(struct ms_json *w)
{
	word(w, "null", 4);
}

/* a in hex, quoted, after prefix (plen bytes), with at least digits of them. */
static void quoted_hex(struct ms_json *w, const char *prefix, size_t plen, uint64_t a, int digits)
{
	char *b;

	item_begin(w, false);
	b = room(w, plen + 17);
	memcpy(b, prefix, plen);
	b += plen;
	b += hex(b, a, digits);
	*b++ = '"';
	w->used = (size_t)(b - w->buf);
	item_done(w);
}

void ms_json_addr(struct ms_json *w, uint64_t a)
{
	quoted_hex(w, "\"0x", 3, a, 1);
}

void ms_json_addr16(struct ms_json *w, uint64_t a)
{
	quoted_hex(w, "\"", 1, a, 16);
}

void ms_json_key_str(struct ms_json *w, const char *key, const char *s)
{
	size_t len = s ? strnlen(s, QUICK_MAX + 1) : 0, i;
	const unsigned mask = escape_mask(w);
	char *b;

	for (i = 0; i < len && !(escape[(unsigned char)s[i]] & mask); i++)
		;
	if (!s || len > QUICK_MAX || i < len || !quick_key(w, key, len + 2)) {
		ms_json_key(w, key);
		ms_json_str(w, s);
		return;
	}
	b = w->buf + w->used;
	b[0] = '"';
	memcpy(b + 1, s, len);
	b[len + 1] = '"';
	w->used += len + 2;
	w->after_key = false;
}

void ms_json_key_u64(struct ms_json *w, const char *key, uint64_t v)
{
	if (!quick_key(w, key, 20)) {
		ms_json_key(w, key);
		ms_json_u64(w, v);
		return;
	}
	w->used += decimal(w->buf + w->used, v);
	w->after_key = false;
}

void ms_json_key_int(struct ms_json *w, const char *key, int64_t v)
{
	ms_json_key(w, key);
	ms_json_int(w, v);
}

void ms_json_key_bool(struct ms_json *w, const char *key, bool v)
{
	ms_json_key(w, key);
	ms_json_bool(w, v);
}

void ms_json_key_null(struct ms_json *w, const char *key)
{
	ms_json_key(w, key);
	ms_json_null(w);
}

void ms_json_key_addr(struct ms_json *w, const char *key, uint64_t a)
{
	char *b;

	if (!quick_key(w, key, 20)) {
		ms_json_key(w, key);
		ms_json_addr(w, a);
		return;
	}
	b = w->buf + w->used;
	memcpy(b, "\"0x", 3);
	b += 3;
	b += hex(b, a, 1);
	*b++ = '"';
	w->used = (size_t)(b - w->buf);
	w->after_key = false;
}

void ms_json_key_addr_or_null(struct ms_json *w, const char *key, uint64_t a, bool present)
{
	ms_json_key(w, key);
	if (present)
		ms_json_addr(w, a);
	else
		ms_json_null(w);
}
