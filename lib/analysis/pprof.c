/*
 * The samples as a gzipped pprof profile (profile.proto, packed by
 * protobuf-c), as an analysis of a session: one pprof sample per (region,
 * process, code address), whose stack is the code that touched the data
 * (with the functions inlined there, where the binary's DWARF has them)
 * topped by the data region's frame. Valued in samples and distinct pages
 * (each counted once in its region, under the code that touched it first),
 * and in faults and TLB misses where the recording has them; labelled with
 * pid, comm and kind. Code is named when its (region, process, address)
 * is first seen, while the process's binaries are known: pinned there and
 * named on the thread that names the sites where there is one
 * (analysis/codelater.h), its location made at the end; the region frame
 * takes its allocation site from the session.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <mapscope/pprof.h>
#include <mapscope/symbols.h>

#include "output/pbgz.h"
#include "profile.pb-c.h"
#include "analysis/codelater.h"
#include "session/source.h"
#include "util/chunkmap.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/strtab.h"
#include "util/log.h"

#define MAX_FRAMES MS_NAMER_FRAMES

/* The code of a (region, process, address): its location in the profile. */
struct key {
	uint32_t region;              /* id + 1; 0: no region held the address */
	uint32_t pid;
	uint64_t ip;
};

/*
 * A function's id by the addresses of its name and file, as the symbols
 * hand them out: a code location's frames name the same few hundred
 * functions for thousands of addresses, and each naming formatted and
 * hashed its strings three times. A hit is checked against the strings
 * themselves, so an address reused for another string misses.
 */
struct fn_memo {
	const char *name, *file;
	uint64_t id;                  /* 0: unused */
};

#define FN_MEMO 1024

/* 56 bytes: a profile of many regions touched once is mostly these. The region is the model's, by id. */
struct row {
	struct key k;
	uint32_t loc;                 /* location id of the code; 0 while it waits to be named (later) */
	uint64_t samples, pages, faults, tlb;
};

struct ms_pprof {
	struct ms_session *s;
	struct ms_symbols *syms;
	bool windowed;
	uint64_t from, to;
	bool have_faults, have_tlb;
	int err;                      /* ENOMEM while charging: said by ms_pprof_write */

	/*
	 * Most regions have one row and one page: a region's first row and
	 * first page are found by its id, in order, and only the others hashed.
	 */
	struct row *rows;
	size_t nr_rows, cap_rows;
	/*
	 * Where the sites' namer names code too (session_namer()): row i's
	 * code as entry i of later, its location made at the end, row after
	 * row, so that the ids and the strings' order are those of naming
	 * each row's code as it came (analysis/codelater.h).
	 */
	bool namer_asked, deferred;
	struct ms_code_later later;
	size_t nr_named;              /* deferred: rows [0, nr_named) have their location */
	uint32_t *first_row;          /* region id + 1 (0: none held the address) -> its first row + 1 */
	size_t cap_first_row;
	uint32_t *slot;               /* the other rows' open addressing: index + 1 */
	size_t nslot, nr_hashed;
	uint64_t *first_page;         /* region id + 1 -> its first page + 1 */
	size_t cap_first_page;
	struct ms_chunkmap pages;     /* the others: ms_chunk_key(region id + 1 or 0, page) */
	struct ms_chunk_key last_key; /* the chunk of the page seen last; slot UINT64_MAX: none */
	uint32_t last_idx;            /* its bitmap */

	/* The profile's tables. */
	struct ms_strtab st;
	int64_t comments[4];          /* the profile's comments, as string indexes */
	size_t nr_comments;
	struct ms_strtab fn_keys;        /* "name\001file" of function i at index i */
	struct fn_memo *fn_memo;      /* FN_MEMO of them, by the strings' addresses */
	uint32_t *loc_slot;           /* locations by their lines: open addressing, index + 1 */
	size_t nloc_slot;
	Perftools__Profiles__Function *fn;
	size_t nfn, cap_fn;
	Perftools__Profiles__Location *loc;
	Perftools__Profiles__Line *lines;   /* each location's, in one array */
	size_t *loc_line;             /* location i's first line in lines */
	size_t nloc, cap_loc, cap_loc_line, nlines, cap_lines;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 31;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 29;
	return k;
}

static uint64_t key_hash(const struct key *k)
{
	return mix(k->ip * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)k->region << 32 | k->pid));
}

/*
 * Adds (region key, page) to the set; true when it was not there. A
 * region's first page is kept by its id (most regions of a real recording
 * have one); the others are bits in chunks of 512 pages (util/chunkmap.h),
 * as the report's, since a region's pages cluster: some 80,000 of them,
 * hashed 16 bytes each at half load, peaked at 6 MB of a chromium
 * recording's profile, where their chunks take a few hundred KB.
 */
static bool page_new(struct ms_pprof *pp, uint64_t region, uint64_t page)
{
	struct ms_chunk_key key = ms_chunk_key(region, page);
	uint64_t *word;
	int64_t idx;

	if (region >= pp->cap_first_page &&
	    MS_GROW(pp->first_page, region + 1, pp->cap_first_page, 1024, SIZE_MAX, true)) {
		pp->err = -ENOMEM;
		return false;
	}
	if (pp->first_page[region] == page + 1)
		return false;
	if (!pp->first_page[region]) {
		pp->first_page[region] = page + 1;
		return true;
	}
	if (key.slot != pp->last_key.slot || key.chunk != pp->last_key.chunk) {   /* a run stays in one chunk, as a rule */
		if ((idx = ms_chunkmap_bits(&pp->pages, key)) < 0) {
			pp->err = -ENOMEM;
			return false;
		}
		pp->last_key = key;
		pp->last_idx = (uint32_t)idx;
	}
	word = &pp->pages.bits[pp->last_idx][page % MS_CHUNK_PAGES / 64];
	if (*word & 1ULL << (page % 64))
		return false;
	*word |= 1ULL << (page % 64);
	return true;
}

/* A function's id (one per name and file), or 0 on no memory. */
static uint64_t function_named(struct ms_pprof *pp, const char *name, const char *file)
{
	int64_t n = ms_strtab_intern(&pp->st, name), f = ms_strtab_intern(&pp->st, file), k;
	char key[1100];

	snprintf(key, sizeof(key), "%s\001%s", name, file);
	if (n < 0 || f < 0 || (k = ms_strtab_intern(&pp->fn_keys, key)) < 0)
		return 0;
	if ((size_t)k < pp->nfn)
		return (uint64_t)k + 1;          /* seen: keys and functions are made in step */
	if (MS_GROW(pp->fn, pp->nfn + 1, pp->cap_fn, 64, SIZE_MAX, false))
		return 0;
	perftools__profiles__function__init(&pp->fn[pp->nfn]);
	pp->fn[pp->nfn].id = pp->nfn + 1;
	pp->fn[pp->nfn].name = pp->fn[pp->nfn].system_name = n;
	pp->fn[pp->nfn].filename = f;
	return ++pp->nfn;
}

/*
 * function_named(), from the memo where these strings were seen at these
 * addresses and the function found then has them still: the function
 * named by the same name and file is that one.
 */
static uint64_t function(struct ms_pprof *pp, const char *name, const char *file)
{
	struct fn_memo *m = &pp->fn_memo[mix((uintptr_t)name * 0x9e3779b97f4a7c15ULL ^ (uintptr_t)file) & (FN_MEMO - 1)];
	const Perftools__Profiles__Function *fn;
	uint64_t id;

	if (m->id && m->name == name && m->file == file) {
		fn = &pp->fn[m->id - 1];
		if (!strcmp(pp->st.s[fn->name], name) && !strcmp(pp->st.s[fn->filename], file))
			return m->id;
	}
	if ((id = function_named(pp, name, file)))
		*m = (struct fn_memo){ name, file, id };
	return id;
}

/* A hash of a location's lines: (function id, line) from the innermost. */
static uint64_t lines_hash(uint64_t h, uint64_t fn, int64_t line)
{
	return mix((h ^ fn) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)line);
}

static uint64_t loc_hash(const struct ms_pprof *pp, size_t k)
{
	const Perftools__Profiles__Line *l = &pp->lines[pp->loc_line[k]];
	uint64_t h = pp->loc[k].n_line;
	size_t i;

	for (i = 0; i < pp->loc[k].n_line; i++)
		h = lines_hash(h, l[i].function_id, l[i].line);
	return h;
}

/* Room for one more location in the table by lines. 0 or -ENOMEM. */
static int loc_room(struct ms_pprof *pp)
{
	size_t n = pp->nloc_slot ? 2 * pp->nloc_slot : 1024, i, k;
	uint32_t *t;

	if ((pp->nloc + 1) * 2 <= pp->nloc_slot)
		return 0;
	if (!(t = calloc(n, sizeof(*t))))
		return -ENOMEM;
	for (k = 0; k < pp->nloc; k++) {
		for (i = loc_hash(pp, k) & (n - 1); t[i]; i = (i + 1) & (n - 1))
			;
		t[i] = (uint32_t)k + 1;
	}
	free(pp->loc_slot);
	pp->loc_slot = t;
	pp->nloc_slot = n;
	return 0;
}

/* Whether location k has the lines of functions ids[0..n) at f[0..n)'s lines. */
static bool same_lines(const struct ms_pprof *pp, size_t k, const uint64_t *ids, const struct ms_frame *f, int n)
{
	const Perftools__Profiles__Line *l = &pp->lines[pp->loc_line[k]];
	int i;

	if (pp->loc[k].n_line != (size_t)n)
		return false;
	for (i = 0; i < n; i++)
		if (l[i].function_id != ids[i] || l[i].line != f[i].line)
			return false;
	return true;
}

/*
 * A location of frames f[0..n) (innermost first: pprof's order for the
 * lines of one location, the last being the caller the others were
 * inlined into): one per list of (function, line). Its id, or 0 on no
 * memory.
 */
static uint64_t location(struct ms_pprof *pp, const struct ms_frame *f, int n)
{
	uint64_t ids[MAX_FRAMES], h = (uint64_t)n;
	size_t k, mask;
	int i;

	for (i = 0; i < n; i++) {
		if (!(ids[i] = function(pp, f[i].name ? f[i].name : "[unknown]", f[i].file ? f[i].file : "")))
			return 0;
		h = lines_hash(h, ids[i], f[i].line);
	}
	if (loc_room(pp))
		return 0;
	mask = pp->nloc_slot - 1;
	for (k = h & mask; pp->loc_slot[k]; k = (k + 1) & mask)
		if (same_lines(pp, pp->loc_slot[k] - 1, ids, f, n))
			return pp->loc_slot[k];
	if (pp->nloc >= UINT32_MAX - 1 || MS_GROW(pp->loc, pp->nloc + 1, pp->cap_loc, 64, SIZE_MAX, false) ||
	    MS_GROW(pp->loc_line, pp->nloc + 1, pp->cap_loc_line, 64, SIZE_MAX, false) ||
	    MS_GROW(pp->lines, pp->nlines + (size_t)n, pp->cap_lines, 64, SIZE_MAX, false))
		return 0;
	perftools__profiles__location__init(&pp->loc[pp->nloc]);
	pp->loc[pp->nloc].id = pp->nloc + 1;
	pp->loc[pp->nloc].n_line = (size_t)n;
	pp->loc_line[pp->nloc] = pp->nlines;
	for (i = 0; i < n; i++) {
		perftools__profiles__line__init(&pp->lines[pp->nlines]);
		pp->lines[pp->nlines].function_id = ids[i];
		pp->lines[pp->nlines].line = f[i].line;
		pp->nlines++;
	}
	pp->loc_slot[k] = (uint32_t)pp->nloc + 1;
	return ++pp->nloc;
}

/* The location of code named as frames f[0, n): "[unknown]" where n is not above 0. */
static uint64_t named_location(struct ms_pprof *pp, const struct ms_frame *f, int n)
{
	static const struct ms_frame unknown = { .name = "[unknown]" };

	return n > 0 ? location(pp, f, n) : location(pp, &unknown, 1);
}

static bool kernel_ip(uint64_t ip)
{
	return ip >= 0xffff800000000000ULL;
}

/* The code's location: named now, while the process's binaries are known. */
static uint64_t code_location(struct ms_pprof *pp, uint32_t pid, uint64_t ip)
{
	static const struct ms_frame kernel = { .name = "[kernel]" };
	struct ms_frame f[MAX_FRAMES];

	if (kernel_ip(ip))
		return location(pp, &kernel, 1);
	return named_location(pp, f, pp->syms ? ms_symbols_code_frames(pp->syms, pid, ip, f, MAX_FRAMES) : 0);
}

/* The rows' code left to be named (later), named in the order the rows were made. 0 or -ENOMEM. */
static int name_rows(struct ms_pprof *pp)
{
	struct ms_frame f[MAX_FRAMES];
	struct row *w;
	size_t same;
	int n;

	for (; pp->deferred && pp->nr_named < pp->nr_rows; pp->nr_named++) {
		w = &pp->rows[pp->nr_named];
		if (kernel_ip(w->k.ip))
			w->loc = (uint32_t)code_location(pp, w->k.pid, w->k.ip);
		else if ((n = ms_code_later_frames(&pp->later, pp->nr_named, w->k.pid, w->k.ip, f, MAX_FRAMES, &same)) < 0)
			w->loc = pp->rows[same].loc;
		else
			w->loc = (uint32_t)named_location(pp, f, n);
		if (!w->loc)
			return -ENOMEM;
	}
	return 0;
}

/* Row w, made now: its region's first, or hashed into slot i. */
static struct row *row_made(struct ms_pprof *pp, struct row *w, size_t i)
{
	uint32_t *first = &pp->first_row[w->k.region];

	if (!*first)
		*first = (uint32_t)pp->nr_rows;
	else {
		pp->slot[i] = (uint32_t)pp->nr_rows;
		pp->nr_hashed++;
	}
	return w;
}

/* The row of (region, pid, ip), made where new; NULL on no memory. */
static struct row *row_of(struct ms_pprof *pp, const struct ms_region *r, uint32_t pid, uint64_t ip)
{
	struct key k = { r ? r->id + 1 : 0, pid, ip };
	size_t i, mask;
	struct row *w;

	if (k.region >= pp->cap_first_row &&
	    MS_GROW(pp->first_row, (size_t)k.region + 1, pp->cap_first_row, 1024, SIZE_MAX, true))
		return NULL;
	if (pp->first_row[k.region] && (w = &pp->rows[pp->first_row[k.region] - 1])->k.ip == ip && w->k.pid == pid)
		return w;
	if ((pp->nr_hashed + 1) * 2 > pp->nslot) {
		size_t n = pp->nslot ? 2 * pp->nslot : 1024, j;
		uint32_t *t = calloc(n, sizeof(*t));

		if (!t || pp->nr_rows >= UINT32_MAX - 1) {
			free(t);
			return NULL;
		}
		for (j = 0; j < pp->nr_rows; j++) {
			if (pp->first_row[pp->rows[j].k.region] == j + 1)
				continue;           /* found by its region */
			for (i = key_hash(&pp->rows[j].k) & (n - 1); t[i]; i = (i + 1) & (n - 1))
				;
			t[i] = (uint32_t)j + 1;
		}
		free(pp->slot);
		pp->slot = t;
		pp->nslot = n;
	}
	mask = pp->nslot - 1;
	for (i = key_hash(&k) & mask; pp->slot[i]; i = (i + 1) & mask) {
		w = &pp->rows[pp->slot[i] - 1];
		if (w->k.ip == ip && w->k.pid == pid && w->k.region == k.region)
			return w;
	}
	if (MS_GROW(pp->rows, pp->nr_rows + 1, pp->cap_rows, 64, SIZE_MAX, false))
		return NULL;
	if (!pp->namer_asked) {
		struct ms_namer *n = pp->syms ? session_namer(pp->s) : NULL;

		pp->namer_asked = true;
		pp->deferred = n != NULL;
		ms_code_later_init(&pp->later, pp->syms, n);
	}
	pp->rows[pp->nr_rows] = (struct row){ .k = k };
	if (pp->deferred ? (kernel_ip(ip) ? ms_code_later_skip(&pp->later) : ms_code_later_add(&pp->later, pid, ip)) :
			   !(pp->rows[pp->nr_rows].loc = (uint32_t)code_location(pp, pid, ip)))
		return NULL;
	pp->nr_rows++;
	return row_made(pp, &pp->rows[pp->nr_rows - 1], i);
}

static void charge(void *ctx, const struct ms_event *ev, const struct ms_region *r)
{
	struct ms_pprof *pp = ctx;
	struct row *w;

	if (pp->err || (pp->windowed && (ev->time < pp->from || ev->time > pp->to)))
		return;
	if (!(w = row_of(pp, r, ev->pid, ev->sample.ip))) {
		pp->err = -ENOMEM;
		return;
	}
	w->samples++;
	/* A page counts once in its region, under the code that touched it first: totals are the report's. */
	if (page_new(pp, w->k.region, ev->sample.addr >> 12))
		w->pages++;
	if (ev->sample.fault) {
		w->faults++;
		pp->have_faults = true;
	}
	if (ms_event_tlb_miss(ev)) {
		w->tlb++;
		pp->have_tlb = true;
	}
}

static void on_begin(void *ctx, struct ms_session *s)
{
	struct ms_pprof *pp = ctx;

	pp->s = s;
	pp->syms = ms_session_symbols(s);
}

static void on_start(void *ctx, struct ms_session *s)
{
	struct ms_pprof *pp = ctx;

	pp->windowed = ms_session_window(s, &pp->from, &pp->to);
}

/* The rows' code named, while the namer is there to ask. */
static void on_finish(void *ctx, struct ms_session *s)
{
	struct ms_pprof *pp = ctx;

	(void)s;
	if (!pp->err)
		pp->err = name_rows(pp);
}

MS_EXPORT const struct ms_analysis ms_pprof_analysis = {
	.name = "pprof", .charge = charge, .begin = on_begin, .start = on_start, .finish = on_finish,
	.flags = MS_ANALYSIS_NEEDS_SYMBOLS,
};

MS_EXPORT struct ms_pprof *ms_pprof_new(void)
{
	struct ms_pprof *pp = calloc(1, sizeof(*pp));

	if (pp && (!(pp->fn_memo = calloc(FN_MEMO, sizeof(*pp->fn_memo))) || ms_strtab_intern(&pp->st, "") < 0)) {
		ms_pprof_free(pp);
		return NULL;
	}
	if (pp)
		pp->last_key.slot = UINT64_MAX;
	return pp;
}

MS_EXPORT void ms_pprof_free(struct ms_pprof *pp)
{
	if (!pp)
		return;
	ms_code_later_release(&pp->later);
	free(pp->rows);
	free(pp->first_row);
	free(pp->slot);
	free(pp->first_page);
	ms_chunkmap_release(&pp->pages);
	free(pp->fn);
	free(pp->loc);
	free(pp->lines);
	free(pp->loc_line);
	ms_strtab_release(&pp->st);
	ms_strtab_release(&pp->fn_keys);
	free(pp->fn_memo);
	free(pp->loc_slot);
	free(pp);
}

/* The data region's frame: "[heap]", a file's path, or "anon 24 MiB (alloc: make_buffers)". */
static void region_frame(const struct ms_pprof *pp, const struct ms_region *r, char *buf, size_t len)
{
	uint64_t size = r ? r->end - r->start : 0;
	const char *alloc = r ? ms_session_alloc_site(pp->s, r) : NULL;
	char sz[32];

	if (!r) {
		snprintf(buf, len, "[unmapped]");
		return;
	}
	if (size >= 1ULL << 20)
		snprintf(sz, sizeof(sz), "%" PRIu64 " MiB", size >> 20);
	else
		snprintf(sz, sizeof(sz), "%" PRIu64 " KiB", size >> 10);
	if (r->kind == MS_KIND_ANON && alloc && alloc[0])
		snprintf(buf, len, "anon %s (alloc: %s)", sz, alloc);
	else if (r->name[0] && strcmp(r->name, "[anon]"))
		snprintf(buf, len, "%s", r->name);
	else
		snprintf(buf, len, "anon %s", sz);
}

/* A row's region, or NULL where none held the address. */
static const struct ms_region *row_region(const struct ms_pprof *pp, const struct row *w)
{
	return w->k.region ? ms_aspace_region(ms_session_aspace(pp->s), w->k.region - 1) : NULL;
}

/* The name of a row's process: its region's, or where none held the address, its stack's. */
static const char *row_comm(const struct ms_pprof *pp, const struct row *w, const struct ms_region *r)
{
	const struct ms_region *st = r ? r : ms_aspace_stack(ms_session_aspace(pp->s), w->k.pid);

	return st ? st->comm : "";
}

/*
 * The profile as it is packed: the message's fields in field order, the
 * samples (field 2) packed one at a time and gzipped as they come, so
 * that neither a message of every sample (320 bytes a row) nor the packed
 * bytes of them all are held: only the tables after them (locations,
 * functions, strings), which grow with the code, not the samples.
 * protobuf-c packs a message's fields by number, and lib/output/pbgz.c
 * gzips the bytes as the whole message packed at once would be.
 */
/* A region's frame location, remembered: region is its id + 1 (0: unused). */
struct frame_memo {
	uint32_t region, loc;
};

#define FRAME_MEMO 4096

struct out {
	Perftools__Profiles__ValueType types[4], period, *type_p[4];
	size_t nt;                            /* value types in use */
	Perftools__Profiles__Location **loc_p;
	Perftools__Profiles__Function **fn_p;
	Perftools__Profiles__Line **line_p;
	int64_t kpid, kcomm, kkind;           /* label keys */
	struct frame_memo *frames;            /* FRAME_MEMO of them, direct-mapped by region id + 1 */
	struct ms_pbgz gz;                    /* the file, gzipped as it is packed */
};

static void out_release(struct out *o)
{
	ms_pbgz_release(&o->gz);
	free(o->loc_p);
	free(o->fn_p);
	free(o->line_p);
	free(o->frames);
}

/* Profile p's fields packed onto the bytes: those before the samples, or after. 0 or -ENOMEM. */
static int out_profile(struct out *o, const Perftools__Profiles__Profile *p)
{
	if (ms_pbgz_room(&o->gz, perftools__profiles__profile__get_packed_size(p)))
		return -ENOMEM;
	o->gz.len += perftools__profiles__profile__pack(p, o->gz.buf + o->gz.len);
	return 0;
}

/* samples and pages always; faults and TLB misses where the recording has them. */
static void value_types(struct ms_pprof *pp, struct out *o)
{
	size_t k;

	o->nt = 2;
	for (k = 0; k < 4; k++) {
		perftools__profiles__value_type__init(&o->types[k]);
		o->type_p[k] = &o->types[k];
		o->types[k].unit = ms_strtab_intern(&pp->st, "count");
	}
	o->types[0].type = ms_strtab_intern(&pp->st, "samples");
	o->types[1].type = ms_strtab_intern(&pp->st, "pages");
	if (pp->have_faults)
		o->types[o->nt++].type = ms_strtab_intern(&pp->st, "faults");
	if (pp->have_tlb)
		o->types[o->nt++].type = ms_strtab_intern(&pp->st, "tlb_misses");
	perftools__profiles__value_type__init(&o->period);
	o->period.type = o->types[0].type;
	o->period.unit = o->types[0].unit;
	o->kpid = ms_strtab_intern(&pp->st, "pid");
	o->kcomm = ms_strtab_intern(&pp->st, "comm");
	o->kkind = ms_strtab_intern(&pp->st, "kind");
}

/*
 * The location of row w's region frame, from the memo where the region's
 * is there. A region's rows are some five to one on a recording of many
 * processes, and naming the frame again for each (its size formatted, its
 * allocation site looked up, its location key interned) took a fifth of
 * writing the profile. The memo is of a fixed size, not a slot a region:
 * the location table finds a frame named again, so a region that lost
 * its place gets the same id. 0 on no memory.
 */
static uint64_t frame_location(struct ms_pprof *pp, struct out *o, const struct row *w, const struct ms_region *r)
{
	struct frame_memo *m = &o->frames[w->k.region & (FRAME_MEMO - 1)];
	char frame[512];
	uint64_t loc;

	if (r && m->region == w->k.region)
		return m->loc;
	region_frame(pp, r, frame, sizeof(frame));
	loc = location(pp, &(struct ms_frame){ .name = frame }, 1);
	if (r && loc)
		*m = (struct frame_memo){ w->k.region, (uint32_t)loc };
	return loc;
}

/* Row w as the next sample: the leaf is the code that touched the data, the data region on top. 0 or -ENOMEM. */
static int add_sample(struct ms_pprof *pp, struct out *o, const struct row *w, const struct ms_region *r,
		      const char *comm)
{
	int64_t lab[3][3] = { { o->kpid, 0, w->k.pid }, { o->kcomm, 0, 0 }, { o->kkind, 0, 0 } };
	uint64_t ids[2], vals[4];
	size_t k = 2;

	ids[0] = w->loc;
	/* The frame's strings first, then the labels': the string table's order is the profile's. */
	if (!(ids[1] = frame_location(pp, o, w, r)))
		return -ENOMEM;
	lab[1][1] = ms_strtab_intern(&pp->st, comm);
	lab[2][1] = ms_strtab_intern(&pp->st, r ? ms_region_kind_name(r->kind) : "unmapped");
	if (lab[1][1] < 0 || lab[2][1] < 0)
		return -ENOMEM;
	vals[0] = w->samples;
	vals[1] = w->pages;
	if (pp->have_faults)
		vals[k++] = w->faults;
	if (pp->have_tlb)
		vals[k++] = w->tlb;
	return ms_pbgz_sample(&o->gz, ids, 2, vals, o->nt, lab, 3);
}

/* The pointer arrays the message wants over the locations, functions and lines. 0 or -ENOMEM. */
static int tables(struct ms_pprof *pp, struct out *o)
{
	size_t i;

	o->loc_p = calloc(pp->nloc ? pp->nloc : 1, sizeof(*o->loc_p));
	o->fn_p = calloc(pp->nfn ? pp->nfn : 1, sizeof(*o->fn_p));
	o->line_p = calloc(pp->nlines ? pp->nlines : 1, sizeof(*o->line_p));
	if (!o->loc_p || !o->fn_p || !o->line_p)
		return -ENOMEM;
	for (i = 0; i < pp->nlines; i++)
		o->line_p[i] = &pp->lines[i];
	for (i = 0; i < pp->nloc; i++) {
		pp->loc[i].line = &o->line_p[pp->loc_line[i]];
		o->loc_p[i] = &pp->loc[i];
	}
	for (i = 0; i < pp->nfn; i++)
		o->fn_p[i] = &pp->fn[i];
	return 0;
}

/* The sample types: the profile's field 1, packed first. 0 or -ENOMEM. */
static int pack_head(struct out *o)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;

	p.sample_type = o->type_p;
	p.n_sample_type = o->nt;
	return out_profile(o, &p);
}

/* The fields after the samples (locations, functions, strings, ...), gzipped to the stream's end. */
static int pack_tail(struct ms_pprof *pp, struct out *o, uint64_t duration_ns)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	int err;

	p.location = o->loc_p;
	p.n_location = pp->nloc;
	p.function = o->fn_p;
	p.n_function = pp->nfn;
	p.string_table = pp->st.s;
	p.n_string_table = pp->st.n;
	p.comment = pp->comments;
	p.n_comment = pp->nr_comments;
	/* The recording's clock is CLOCK_MONOTONIC, not a date: no time_nanos, only the duration. */
	p.duration_nanos = (int64_t)duration_ns;
	p.default_sample_type = o->types[0].type;
	p.period_type = &o->period;
	p.period = 1;
	if ((err = out_profile(o, &p)))
		return err;
	return ms_pbgz_flush(&o->gz, true);
}

MS_EXPORT int ms_pprof_add_comment(struct ms_pprof *pp, const char *text)
{
	int64_t k;

	if (pp->nr_comments == sizeof(pp->comments) / sizeof(pp->comments[0]))
		return -ENOSPC;
	if (!pp->err)
		pp->err = name_rows(pp);   /* the code's strings come first in the table, as when named as it came */
	if (pp->err)
		return pp->err;
	if ((k = ms_strtab_intern(&pp->st, text)) < 0)
		return -ENOMEM;
	pp->comments[pp->nr_comments++] = k;
	return 0;
}

MS_EXPORT int ms_pprof_write(struct ms_pprof *pp, int fd, uint32_t pid, const char *comm, uint64_t duration_ns)
{
	struct out o = { 0 };
	size_t i;
	int err;

	if (!pp->err)
		pp->err = name_rows(pp);
	if (pp->err)
		return pp->err;
	value_types(pp, &o);
	if (!(o.frames = calloc(FRAME_MEMO, sizeof(*o.frames))))
		return -ENOMEM;
	if ((err = ms_pbgz_open(&o.gz, fd)) || (err = pack_head(&o)))
		goto out;
	for (i = 0; i < pp->nr_rows; i++) {
		const struct row *w = &pp->rows[i];
		const struct ms_region *r = row_region(pp, w);
		const char *c = row_comm(pp, w, r);

		if ((pid && w->k.pid != pid) || (comm && strcmp(comm, c)))
			continue;
		if ((err = add_sample(pp, &o, w, r, c)))
			goto out;
	}
	if (!(err = tables(pp, &o)))
		err = pack_tail(pp, &o, duration_ns);
out:
	out_release(&o);
	return err;
}
