/*
 * The key of a piece of hugepage advice, as it must survive a new run of
 * the program: never an address, but what made the memory. The creating
 * call chain from its first frame outside the C library, the loader and
 * the allocator (a few frames, each a binary's build-id and the return
 * address as an address in that binary's ELF image: the same whatever
 * ASLR does), the kind of memory, and its size class (log2 of its bytes).
 *
 * Header-only and free of allocation, because two sides use it: the
 * library, which writes and reads advice files, and the LD_PRELOAD shim of
 * `mapscope run`, which runs inside malloc and may call nothing that
 * allocates. The shim gets the keys in the compact text form below, in
 * its environment:
 *
 *	all                        advise every anonymous mapping (the upper bound)
 *	K C ID+VADDR/ID+VADDR;...  one key per ';': kind letter (a anon, h heap,
 *	                           s shmem), size class in decimal, frames with
 *	                           the build-id and vaddr in hex
 */
#ifndef MS_ADVICE_KEY_H
#define MS_ADVICE_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MS_ADVICE_FRAMES 4          /* frames of the chain a key holds */
#define MS_BUILD_ID_MAX 20

struct ms_advice_frame {
	uint64_t vaddr;                 /* return address minus the binary's load bias */
	uint8_t id_len;                 /* 0: the binary has no build-id */
	unsigned char id[MS_BUILD_ID_MAX];
};

struct ms_advice_key {
	char kind;                      /* 'a' anon, 'h' heap, 's' shmem */
	uint8_t size_class;             /* floor(log2(bytes)) */
	uint8_t nr;                     /* frames */
	struct ms_advice_frame f[MS_ADVICE_FRAMES];
};

/*
 * Whether the binary at path is the mechanism of an allocation, not its
 * site: the C library, the loader, an allocator library, the shim itself.
 * A key's frames begin after these and end where the chain returns to them.
 */
static inline bool ms_advice_runtime_object(const char *path)
{
	static const char *const names[] = { "libc.so", "ld-linux", "libpthread", "libjemalloc", "libtcmalloc",
					     "libmimalloc", "mapscope-hugepages" };
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; base && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

static inline uint8_t ms_advice_size_class(uint64_t bytes)
{
	return bytes ? (uint8_t)(63 - __builtin_clzll(bytes)) : 0;
}

static inline bool ms_advice_frame_eq(const struct ms_advice_frame *a, const struct ms_advice_frame *b)
{
	return a->vaddr == b->vaddr && a->id_len == b->id_len && !memcmp(a->id, b->id, a->id_len);
}

/*
 * Whether key k (of a mapping being made) matches rule: the same kind,
 * a size class within one of the rule's (malloc's request and the mapping
 * it makes differ by a header and a page's rounding), and the rule's
 * frames the first of k's.
 */
static inline bool ms_advice_key_match(const struct ms_advice_key *rule, const struct ms_advice_key *k)
{
	int d = (int)rule->size_class - (int)k->size_class;
	unsigned i;

	if (rule->kind != k->kind || d > 1 || d < -1 || !rule->nr || k->nr < rule->nr)
		return false;
	for (i = 0; i < rule->nr; i++)
		if (!ms_advice_frame_eq(&rule->f[i], &k->f[i]))
			return false;
	return true;
}

static inline bool ms_advice_keys_equal(const struct ms_advice_key *a, const struct ms_advice_key *b)
{
	return a->kind == b->kind && a->size_class == b->size_class && a->nr == b->nr &&
	       ms_advice_key_match(a, b);
}

/* Writes k in the compact form (no ';'). The length it needs, as snprintf. */
static inline size_t ms_advice_key_encode(const struct ms_advice_key *k, char *buf, size_t len)
{
	size_t at = 0;
	unsigned i, j;

#define MS_PUT(...) (at += (size_t)snprintf(buf + (at < len ? at : 0), at < len ? len - at : 0, __VA_ARGS__))
	MS_PUT("%c %u ", k->kind, (unsigned)k->size_class);
	for (i = 0; i < k->nr; i++) {
		if (i)
			MS_PUT("/");
		for (j = 0; j < k->f[i].id_len; j++)
			MS_PUT("%02x", k->f[i].id[j]);
		MS_PUT("+%llx", (unsigned long long)k->f[i].vaddr);
	}
#undef MS_PUT
	return at;
}

static inline int ms_advice_hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ?
	       c - 'A' + 10 : -1;
}

/* One frame "ID+VADDR" at s into f: the end of it, or NULL where it is not one. */
static inline const char *ms_advice_frame_decode(const char *s, struct ms_advice_frame *f)
{
	unsigned digits = 0;
	int h;

	memset(f, 0, sizeof(*f));
	for (; *s != '+'; s += 2) {
		if (ms_advice_hex(s[0]) < 0 || ms_advice_hex(s[1]) < 0 || f->id_len == MS_BUILD_ID_MAX)
			return NULL;
		f->id[f->id_len++] = (unsigned char)(ms_advice_hex(s[0]) << 4 | ms_advice_hex(s[1]));
	}
	for (s++; (h = ms_advice_hex(*s)) >= 0 && digits < 16; s++, digits++)
		f->vaddr = f->vaddr << 4 | (uint64_t)h;
	return digits && ms_advice_hex(*s) < 0 ? s : NULL;
}

/* One key of the compact form at s into k: the end of it (at ';' or the end), or NULL. */
static inline const char *ms_advice_key_decode(const char *s, struct ms_advice_key *k)
{
	unsigned cls = 0;

	memset(k, 0, sizeof(*k));
	if ((s[0] != 'a' && s[0] != 'h' && s[0] != 's') || s[1] != ' ')
		return NULL;
	k->kind = s[0];
	for (s += 2; *s >= '0' && *s <= '9' && cls < 64; s++)
		cls = cls * 10 + (unsigned)(*s - '0');
	if (cls >= 64 || *s++ != ' ')
		return NULL;
	k->size_class = (uint8_t)cls;
	do {
		if (k->nr == MS_ADVICE_FRAMES || !(s = ms_advice_frame_decode(s, &k->f[k->nr++])))
			return NULL;
	} while (*s == '/' && s++);
	return *s == ';' || !*s ? s : NULL;
}

#endif
