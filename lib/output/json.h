/*
 * Internal: the one JSON writer every command's JSON goes through (git's
 * json-writer.h model). It tracks nesting and commas, so a caller only says
 * begin, key, value, end; it escapes quotes, backslashes and control
 * characters (C0, DEL and C1: a terminal takes U+009B for ESC [) and
 * writes any byte sequence that is not valid UTF-8 as \ufffd, one for
 * each maximal invalid subsequence (Unicode's "substitution of maximal
 * subparts"), so that every output decodes under a strict parser.
 *
 * Layout: members and elements are separated by ", " and keys by ": "
 * ({"samples": 1, "pages": 2}); ms_json_newline() puts the next member or
 * element on a line of its own; a tight array separates by "," alone. One
 * object per line (timeline, watch) is an object ended and a '\n' after it.
 *
 * The writer borrows f and writes to it through a buffer of its own: what
 * it wrote is in f once the outermost container is closed (or a top-level
 * value written), and at ms_json_finish(). A caller writes to f itself only
 * at those points. A misuse (a key outside an object, an end that matches
 * no begin, nesting past MS_JSON_MAX_DEPTH) is remembered and returned by
 * ms_json_finish(), as is a write error on f.
 *
 * A key is checked for what needs escaping once per writer and remembered
 * by its address: a key passed twice at one address must hold the same
 * bytes both times, as literals and static name tables do (every caller's
 * keys are such).
 */
#ifndef MS_OUTPUT_JSON_H
#define MS_OUTPUT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MS_JSON_MAX_DEPTH 32
#define MS_JSON_BUF 16384     /* the writer's buffer: bytes between writes to f */
#define MS_JSON_KEYS 64       /* keys remembered as needing no escaping */
#define MS_JSON_KEY_TEXT 64   /* the longest such key, quoted, with its colon and space */

/* ms_json_init() flags. */
#define MS_JSON_SCRIPT 0x1   /* also escape '<', '>', '&': the text goes inside an HTML <script> */

struct ms_json {
	FILE *f;
	unsigned flags;
	int depth;                   /* open containers */
	uint64_t in_object;          /* bit d: container at depth d+1 is an object */
	uint64_t has_member;         /* bit d: it has a member or element already */
	uint64_t tight;              /* bit d: its elements are separated by "," alone */
	bool after_key;              /* a key was written; its value comes next */
	int newline;                 /* 1 + the indent of a new line before the next item; 0: none */
	int error;                   /* 0, or the first -errno */
	size_t used;                 /* bytes of buf not yet written to f */
	struct {                     /* keys that need no escaping, by a hash of their address */
		const char *at;
		size_t len;                  /* of text */
		char text[MS_JSON_KEY_TEXT]; /* "key": */
	} keys[MS_JSON_KEYS];
	char buf[MS_JSON_BUF];
};

void ms_json_init(struct ms_json *w, FILE *f, unsigned flags);
/* 0 when every container was closed and every write succeeded, else a negative errno. */
int ms_json_finish(struct ms_json *w);

void ms_json_object_begin(struct ms_json *w);
void ms_json_object_end(struct ms_json *w);
void ms_json_array_begin(struct ms_json *w);
/* An array whose elements are separated by "," with no space: [1,2,3]. */
void ms_json_array_begin_tight(struct ms_json *w);
void ms_json_array_end(struct ms_json *w);

/* The next member or element starts a new line, indented by indent spaces (at most 16). */
void ms_json_newline(struct ms_json *w, int indent);

/* A member's key: its value is the next thing written. */
void ms_json_key(struct ms_json *w, const char *key);

/* Values: an element of an array, or the value of the key just written. */
void ms_json_str(struct ms_json *w, const char *s);     /* NULL writes null */
void ms_json_str_len(struct ms_json *w, const char *s, size_t len);
void ms_json_u64(struct ms_json *w, uint64_t v);
void ms_json_int(struct ms_json *w, int64_t v);
void ms_json_bool(struct ms_json *w, bool v);
void ms_json_null(struct ms_json *w);
/* An address as the schema wants it: "0x7f...". */
void ms_json_addr(struct ms_json *w, uint64_t a);
/* An address as 16 hex digits, no prefix: "00007f...", which sorts as a string. */
void ms_json_addr16(struct ms_json *w, uint64_t a);

/* Key and value in one call. */
void ms_json_key_str(struct ms_json *w, const char *key, const char *s);
void ms_json_key_u64(struct ms_json *w, const char *key, uint64_t v);
void ms_json_key_int(struct ms_json *w, const char *key, int64_t v);
void ms_json_key_bool(struct ms_json *w, const char *key, bool v);
void ms_json_key_null(struct ms_json *w, const char *key);
void ms_json_key_addr(struct ms_json *w, const char *key, uint64_t a);
/* The address, or null when !present. */
void ms_json_key_addr_or_null(struct ms_json *w, const char *key, uint64_t a, bool present);

#endif
