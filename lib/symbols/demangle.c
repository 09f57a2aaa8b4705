/*
 * C++ and Rust names as people read them, and as perf prints them: scopes
 * and template arguments without the parameter list
 * ("v8::internal::Heap::Scavenge", "core::fmt::write"). The demanglers are
 * libiberty's (Debian's libiberty-dev): cp-demangle.c for the Itanium C++
 * ABI and rust-demangle.c for Rust's legacy and v0 manglings. Both files
 * carry the GCC linking exception, so linking them sets no terms on the
 * library. Their callback forms are used: cplus_demangle() goes through
 * xmalloc, which prints and exits when memory runs out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/internal.h"
#include "util/grow.h"
#include "util/hash.h"

#define MAX_NAME (64 << 10)           /* longer names stay mangled */

struct out {
	char *buf;
	size_t len, cap;
	bool over;
};

static void append(const char *s, size_t n, void *arg)
{
	struct out *o = arg;

	if (o->over || o->len + n + 1 > MAX_NAME || MS_GROW(o->buf, o->len + n + 1, o->cap, 256, MAX_NAME, false)) {
		o->over = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

char *ms_demangle(const char *name)
{
	struct out o = { 0 };

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* Rust first, as cplus_demangle() tries it: its legacy names are valid C++ ones too. */
	if (!rust_demangle_callback(name, DMGL_NO_OPTS, append, &o) || o.over) {
		o.len = 0;
		o.over = false;
		if (!cplus_demangle_v3_callback(name, DMGL_NO_OPTS, append, &o) || o.over) {
			free(o.buf);
			return NULL;
		}
	}
	return o.buf;
}

static size_t slot_of(const struct ms_symbols *s, const char *raw)
{
	size_t i = ms_hash64((uint64_t)(uintptr_t)raw, s->dm_cap);

	while (s->dm[i].raw && s->dm[i].raw != raw)
		i = (i + 1) & (s->dm_cap - 1);
	return i;
}

static int dm_grow(struct ms_symbols *s)
{
	struct demangled *old = s->dm;
	size_t cap = s->dm_cap, i;

	s->dm_cap = cap ? 2 * cap : 256;
	s->dm = calloc(s->dm_cap, sizeof(*s->dm));
	if (!s->dm) {
		s->dm = old;
		s->dm_cap = cap;
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++)
		if (old[i].raw)
			s->dm[slot_of(s, old[i].raw)] = old[i];
	free(old);
	return 0;
}

/*
 * One demangled string per raw name: the names handed out keep the
 * identity of the symbol they name (callers group by the pointer), and
 * each is demangled once.
 */
const char *ms_symbols_demangled(struct ms_symbols *s, const char *raw)
{
	size_t i;
	char *d;

	if (!raw || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return raw;
	if ((s->dm_len + 1) * 2 > s->dm_cap && dm_grow(s))
		return raw;
	i = slot_of(s, raw);
	if (s->dm[i].raw)
		return s->dm[i].name;
	d = ms_demangle(raw);
	s->dm[i].raw = raw;
	s->dm[i].name = d ? d : raw;
	s->dm[i].owned = d != NULL;
	s->dm_len++;
	return s->dm[i].name;
}

void ms_symbols_demangled_release(struct ms_symbols *s)
{
	size_t i;

	for (i = 0; i < s->dm_cap; i++)
		if (s->dm[i].owned)
			free((char *)s->dm[i].name);
	free(s->dm);
	s->dm = NULL;
	s->dm_cap = s->dm_len = 0;
}
