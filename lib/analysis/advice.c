/*
 * Profile-guided hugepage advice: each region is keyed when it is made
 * (while its process's binaries are known), the advised ones become rules,
 * and the rules go to a JSON file and back, and to the shim's compact form.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mapscope/advice.h>
#include <mapscope/symbols.h>

#include "analysis/advice-key.h"
#include "output/format.h"
#include "output/json.h"
#include "util/grow.h"
#include "util/log.h"

#define CHAIN_MAX 64

struct rule {
	struct ms_advice_key key;
	char *site;
};

struct build_id {
	char *path;
	int len;                          /* negative: the file has none, or cannot be read */
	unsigned char id[MS_BUILD_ID_MAX];
};

struct ms_advice {
	struct ms_advice_key *by_region;  /* each region's key, by id; nr 0 where it has none */
	size_t cap_regions;
	struct rule *rules;
	size_t nr, cap;
	struct build_id *ids;             /* build-ids read, by binary path */
	size_t nr_ids, cap_ids;
	size_t unkeyed;
	bool malloc_hugetlb;
	char *losses;                     /* what the recording advised from lost (ms_format_losses()), or NULL */
};

MS_EXPORT struct ms_advice *ms_advice_new(void)
{
	return calloc(1, sizeof(struct ms_advice));
}

/* The build-id of the binary at path, read once. Its length, or negative where it has none. */
static int build_id_of(struct ms_advice *adv, const char *path, const unsigned char **id)
{
	struct build_id *b;
	size_t i;

	for (i = 0; i < adv->nr_ids; i++)
		if (!strcmp(adv->ids[i].path, path))
			break;
	if (i == adv->nr_ids) {
		if (MS_GROW(adv->ids, adv->nr_ids + 1, adv->cap_ids, 16, SIZE_MAX, false))
			return -ENOMEM;
		b = &adv->ids[adv->nr_ids];
		if (!(b->path = strdup(path)))
			return -ENOMEM;
		b->len = ms_elf_build_id(path, b->id, sizeof(b->id));
		adv->nr_ids++;
	}
	*id = adv->ids[i].id;
	return adv->ids[i].len;
}

/*
 * The creating call chain of region r, innermost first, into out
 * (CHAIN_MAX): the session's (ms_session_alloc_ips) for a mapping; a heap
 * made by brk is not a mapping the session names, so its chain is
 * unwound here from the stack copy, where record took one.
 */
static uint32_t region_ips(struct ms_session *s, const struct ms_change *c, const struct ms_event *ev,
			   uint64_t *out)
{
	const struct ms_region *r = c->region;
	const uint64_t *ips;
	size_t n = c->op == MS_OP_MAP ? ms_session_alloc_ips(s, r, &ips) : 0;
	int got;

	if (!n && ev && ev->uregs && ev->ustack) {
		got = ms_symbols_unwind(ms_session_symbols(s), r->pid, ev->uregs, ev->uregs_mask, ev->ustack,
					ev->ustack_len, out, CHAIN_MAX);
		return got > 0 ? (uint32_t)got : 0;
	}
	if (!n && r->alloc_chain_len) {
		ips = r->alloc_chain;
		n = r->alloc_chain_len;
	}
	n = n < CHAIN_MAX ? n : CHAIN_MAX;
	if (n)
		memcpy(out, ips, n * sizeof(*out));
	return (uint32_t)n;
}

static char kind_letter(const struct ms_region *r)
{
	if (r->kind == MS_KIND_SHM)
		return 's';
	if (!(r->flags & MAP_PRIVATE))
		return 0;
	return r->kind == MS_KIND_ANON ? 'a' : r->kind == MS_KIND_HEAP ? 'h' : 0;
}

/* The key of region r as it is made: 0 with k filled (k->nr 0 where no frame names a site). */
static int key_region(struct ms_advice *adv, struct ms_session *s, const struct ms_change *c,
		      const struct ms_event *ev, struct ms_advice_key *k)
{
	struct ms_symbols *syms = ms_session_symbols(s);
	const struct ms_region *r = c->region;
	uint64_t ips[CHAIN_MAX];
	uint32_t n = region_ips(s, c, ev, ips), i;
	const unsigned char *id;
	struct ms_sym sym;
	int len;

	memset(k, 0, sizeof(*k));
	k->kind = kind_letter(r);
	k->size_class = ms_advice_size_class(r->end - r->start);
	for (i = 0; i < n && k->nr < MS_ADVICE_FRAMES; i++) {
		if (ms_symbols_resolve(syms, r->pid, ips[i], false, &sym) || !sym.dso)
			break;               /* a frame no binary holds: the chain is not to be trusted past it */
		if (ms_advice_runtime_object(sym.dso) && !k->nr)
			continue;
		if (ms_advice_runtime_object(sym.dso))
			break;               /* back in the runtime (main's caller, a callback): the site ends */
		if ((len = build_id_of(adv, sym.dso, &id)) == -ENOMEM)
			return -ENOMEM;
		k->f[k->nr].vaddr = sym.vaddr;
		k->f[k->nr].id_len = len > 0 ? (uint8_t)len : 0;
		if (len > 0)
			memcpy(k->f[k->nr].id, id, (size_t)len);
		k->nr++;
	}
	return 0;
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct ms_advice *adv = ctx;
	struct ms_symbols *syms = ms_session_symbols(s);
	const struct ms_region *r = c->region;

	if ((c->op != MS_OP_MAP && c->op != MS_OP_BRK) || !r || !syms || !kind_letter(r))
		return 0;
	if (MS_GROW(adv->by_region, (size_t)r->id + 1, adv->cap_regions, 256, SIZE_MAX, true))
		return -ENOMEM;
	if (adv->by_region[r->id].kind)
		return 0;                    /* keyed when it was made: a brk that grows it is not its maker */
	return key_region(adv, s, c, ev, &adv->by_region[r->id]);
}

MS_EXPORT const struct ms_analysis ms_advice_analysis = {
	.name = "advice", .change = on_change, .flags = MS_ANALYSIS_NEEDS_SYMBOLS,
};

/* Adds rule k (site may be NULL) unless an equal one is there. 0 or -ENOMEM. */
static int add_rule(struct ms_advice *adv, const struct ms_advice_key *k, const char *site)
{
	size_t i;

	for (i = 0; i < adv->nr; i++)
		if (ms_advice_keys_equal(&adv->rules[i].key, k))
			return 0;
	if (MS_GROW(adv->rules, adv->nr + 1, adv->cap, 16, SIZE_MAX, false))
		return -ENOMEM;
	adv->rules[adv->nr].key = *k;
	adv->rules[adv->nr].site = site ? strdup(site) : NULL;
	if (site && !adv->rules[adv->nr].site)
		return -ENOMEM;
	adv->malloc_hugetlb |= k->kind == 'h';
	adv->nr++;
	return 0;
}

MS_EXPORT int ms_advice_add(struct ms_advice *adv, const struct ms_session *s, const struct ms_huge_advice *v,
			    size_t n)
{
	const struct ms_advice_key *k;
	char line[1024];
	size_t i;
	uint32_t id;

	/* A file read later, without the terminal, says what its advice was made without. */
	if (s && !adv->losses && ms_format_losses(s, line, sizeof(line)) && !(adv->losses = strdup(line)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!v[i].advised)
			continue;
		id = v[i].region->id;
		k = id < adv->cap_regions ? &adv->by_region[id] : NULL;
		if (!k || !k->kind || !k->nr) {
			adv->unkeyed++;
			continue;
		}
		if (add_rule(adv, k, s ? ms_session_alloc_site(s, v[i].region) : NULL))
			return -ENOMEM;
	}
	return (int)adv->nr;
}

MS_EXPORT size_t ms_advice_nr_rules(const struct ms_advice *adv)
{
	return adv->nr;
}

MS_EXPORT size_t ms_advice_unkeyed(const struct ms_advice *adv)
{
	return adv->unkeyed;
}

MS_EXPORT bool ms_advice_wants_malloc_hugetlb(const struct ms_advice *adv)
{
	return adv->malloc_hugetlb;
}

MS_EXPORT const char *ms_advice_rule_site(const struct ms_advice *adv, size_t i)
{
	return i < adv->nr ? adv->rules[i].site : NULL;
}

static const char *kind_name(char kind)
{
	return kind == 'a' ? "anon" : kind == 'h' ? "heap" : "shm";
}

static void write_rule(struct ms_json *w, const struct rule *r)
{
	char hex[2 * MS_BUILD_ID_MAX + 1];
	unsigned i, j;

	ms_json_newline(w, 4);
	ms_json_object_begin(w);
	ms_json_key_str(w, "kind", kind_name(r->key.kind));
	ms_json_key_u64(w, "size_class", r->key.size_class);
	ms_json_key_str(w, "site", r->site);
	ms_json_key(w, "frames");
	ms_json_array_begin(w);
	for (i = 0; i < r->key.nr; i++) {
		for (j = 0; j < r->key.f[i].id_len; j++)
			snprintf(hex + 2 * j, 3, "%02x", r->key.f[i].id[j]);
		hex[2 * j] = '\0';
		ms_json_object_begin(w);
		ms_json_key_str(w, "build_id", hex);
		ms_json_key_addr(w, "vaddr", r->key.f[i].vaddr);
		ms_json_object_end(w);
	}
	ms_json_array_end(w);
	ms_json_object_end(w);
}

MS_EXPORT int ms_advice_write(const struct ms_advice *adv, FILE *f)
{
	struct ms_json w;
	size_t i;

	ms_json_init(&w, f, 0);
	ms_json_object_begin(&w);
	ms_json_key_str(&w, "format", "mapscope-hugepage-advice");
	ms_json_key_u64(&w, "version", 1);
	ms_json_key_bool(&w, "malloc_hugetlb", adv->malloc_hugetlb);
	if (adv->losses)
		ms_json_key_str(&w, "losses", adv->losses);
	ms_json_key(&w, "rules");
	ms_json_array_begin(&w);
	for (i = 0; i < adv->nr; i++)
		write_rule(&w, &adv->rules[i]);
	ms_json_array_end(&w);
	ms_json_object_end(&w);
	fputc('\n', f);
	return ms_json_finish(&w) || fflush(f) || ferror(f) ? -EIO : 0;
}

/*
 * Reading an advice file: a small JSON reader for this one shape, which
 * skips keys it does not know (a later version may add some) and says on
 * which line it found what it could not read.
 */
struct cur {
	const char *p, *end;
	int line;
};

static void ws(struct cur *c)
{
	for (; c->p < c->end && strchr(" \t\r\n", *c->p); c->p++)
		c->line += *c->p == '\n';
}

static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* A string into buf (len bytes; escapes kept as they are, longer ones cut). */
static bool str(struct cur *c, char *buf, size_t len)
{
	size_t n = 0;

	if (!eat(c, '"'))
		return false;
	for (; c->p < c->end && *c->p != '"'; c->p++) {
		if (*c->p == '\\' && c->p + 1 < c->end)
			c->p++;
		if (n + 1 < len)
			buf[n++] = *c->p;
	}
	buf[n] = '\0';
	return eat(c, '"');
}

static bool skip_value(struct cur *c, int depth)
{
	char tmp[8];

	ws(c);
	if (c->p >= c->end || depth > 16)
		return false;
	if (*c->p == '"')
		return str(c, tmp, sizeof(tmp));
	if (eat(c, '{') || eat(c, '[')) {
		char close = c->p[-1] == '{' ? '}' : ']';

		if (eat(c, close))
			return true;
		do {
			if (close == '}' && (!str(c, tmp, sizeof(tmp)) || !eat(c, ':')))
				return false;
			if (!skip_value(c, depth + 1))
				return false;
		} while (eat(c, ','));
		return eat(c, close);
	}
	for (; c->p < c->end && (strchr("-+.eE", *c->p) || (*c->p >= '0' && *c->p <= '9') ||
				  (*c->p >= 'a' && *c->p <= 'z')); c->p++)
		;
	return true;
}

static bool number(struct cur *c, uint64_t *v)
{
	char *e;

	ws(c);
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return false;
	*v = strtoull(c->p, &e, 10);
	c->p = e;
	return true;
}

/* { "build_id": "hex", "vaddr": "0x..." } */
static bool read_frame(struct cur *c, struct ms_advice_frame *f)
{
	char key[32], val[2 * MS_BUILD_ID_MAX + 24], *e;

	memset(f, 0, sizeof(*f));
	if (!eat(c, '{'))
		return false;
	do {
		if (!str(c, key, sizeof(key)) || !eat(c, ':'))
			return false;
		if (!strcmp(key, "build_id")) {
			if (!str(c, val, sizeof(val)) || strlen(val) % 2 || strlen(val) > 2 * MS_BUILD_ID_MAX)
				return false;
			for (f->id_len = 0; val[2 * f->id_len]; f->id_len++) {
				if (ms_advice_hex(val[2 * f->id_len]) < 0 || ms_advice_hex(val[2 * f->id_len + 1]) < 0)
					return false;
				f->id[f->id_len] = (unsigned char)(ms_advice_hex(val[2 * f->id_len]) << 4 |
								   ms_advice_hex(val[2 * f->id_len + 1]));
			}
		} else if (!strcmp(key, "vaddr")) {
			if (!str(c, val, sizeof(val)) || strncmp(val, "0x", 2))
				return false;
			errno = 0;
			f->vaddr = strtoull(val + 2, &e, 16);
			if (*e || e == val + 2 || errno)
				return false;
		} else if (!skip_value(c, 0))
			return false;
	} while (eat(c, ','));
	return eat(c, '}');
}

static bool read_frames(struct cur *c, struct ms_advice_key *k)
{
	if (!eat(c, '['))
		return false;
	if (eat(c, ']'))
		return true;
	do
		if (k->nr == MS_ADVICE_FRAMES || !read_frame(c, &k->f[k->nr++]))
			return false;
	while (eat(c, ','));
	return eat(c, ']');
}

/* One rule: 0, -EINVAL, -ENOMEM. */
static int read_rule(struct ms_advice *adv, struct cur *c)
{
	struct ms_advice_key k = { 0 };
	char key[32], val[256] = "", site[256] = "";
	uint64_t v;
	bool has_site = false;

	if (!eat(c, '{'))
		return -EINVAL;
	do {
		if (!str(c, key, sizeof(key)) || !eat(c, ':'))
			return -EINVAL;
		if (!strcmp(key, "kind")) {
			if (!str(c, val, sizeof(val)))
				return -EINVAL;
			k.kind = !strcmp(val, "anon") ? 'a' : !strcmp(val, "heap") ? 'h' : !strcmp(val, "shm") ? 's' : 0;
		} else if (!strcmp(key, "size_class")) {
			if (!number(c, &v) || v > 63)
				return -EINVAL;
			k.size_class = (uint8_t)v;
		} else if (!strcmp(key, "frames")) {
			if (!read_frames(c, &k))
				return -EINVAL;
		} else if (!strcmp(key, "site") && (ws(c), c->p < c->end && *c->p == '"')) {
			if (!str(c, site, sizeof(site)))
				return -EINVAL;
			has_site = true;
		} else if (!skip_value(c, 0))
			return -EINVAL;
	} while (eat(c, ','));
	if (!eat(c, '}') || !k.kind || !k.nr)
		return -EINVAL;
	return add_rule(adv, &k, has_site ? site : NULL);
}

static int read_rules(struct ms_advice *adv, struct cur *c)
{
	int err;

	if (!eat(c, '['))
		return -EINVAL;
	if (eat(c, ']'))
		return 0;
	do
		if ((err = read_rule(adv, c)))
			return err;
	while (eat(c, ','));
	return eat(c, ']') ? 0 : -EINVAL;
}

MS_EXPORT int ms_advice_read(struct ms_advice *adv, const char *text, size_t len, int *line)
{
	struct cur c = { text, text + len, 1 };
	char key[32], val[64];
	bool format = false;
	uint64_t version = 0;
	int err = -EINVAL;

	if (!eat(&c, '{'))
		goto out;
	do {
		if (!str(&c, key, sizeof(key)) || !eat(&c, ':'))
			goto out;
		if (!strcmp(key, "format")) {
			if (!str(&c, val, sizeof(val)) || strcmp(val, "mapscope-hugepage-advice"))
				goto out;
			format = true;
		} else if (!strcmp(key, "version")) {
			if (!number(&c, &version) || version != 1)
				goto out;
		} else if (!strcmp(key, "rules")) {
			if ((err = read_rules(adv, &c)))
				goto out;
			err = -EINVAL;
		} else if (!skip_value(&c, 0))
			goto out;
	} while (eat(&c, ','));
	if (eat(&c, '}') && format && version == 1)
		err = 0;
out:
	if (line)
		*line = c.line;
	return err;
}

MS_EXPORT char *ms_advice_encode(const struct ms_advice *adv)
{
	size_t len = 1, at = 0, i;
	char *s;

	for (i = 0; i < adv->nr; i++)
		len += ms_advice_key_encode(&adv->rules[i].key, NULL, 0) + 1;
	if (!(s = malloc(len)))
		return NULL;
	s[0] = '\0';
	for (i = 0; i < adv->nr; i++) {
		if (i)
			s[at++] = ';';
		at += ms_advice_key_encode(&adv->rules[i].key, s + at, len - at);
	}
	return s;
}

MS_EXPORT void ms_advice_free(struct ms_advice *adv)
{
	size_t i;

	if (!adv)
		return;
	free(adv->losses);
	for (i = 0; i < adv->nr; i++)
		free(adv->rules[i].site);
	for (i = 0; i < adv->nr_ids; i++)
		free(adv->ids[i].path);
	free(adv->rules);
	free(adv->ids);
	free(adv->by_region);
	free(adv);
}
