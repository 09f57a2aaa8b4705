/*
 * The report as a gzipped pprof profile (profile.proto, packed by
 * protobuf-c): one sample per (region, code symbol) row, whose stack is the
 * code that touched the data with the data region's frame on top, valued
 * in samples and distinct pages, labelled with pid, comm and kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include <mapscope/pprof.h>

#include "profile.pb-c.h"
#include "util/log.h"

struct strtab {
	char **s;
	size_t n, cap;
	size_t *slot;                 /* open addressing: index + 1, 0 empty */
	size_t nslot;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The string's index in the table, adding it where new; -1 on no memory. */
static int64_t intern(struct strtab *t, const char *s)
{
	size_t i, k, *slot;
	char **grown;

	if (t->n * 2 >= t->nslot) {
		size_t n = t->nslot ? 2 * t->nslot : 1024;

		slot = calloc(n, sizeof(*slot));
		if (!slot)
			return -1;
		for (k = 0; k < t->n; k++) {
			for (i = hash(t->s[k]) & (n - 1); slot[i]; i = (i + 1) & (n - 1))
				;
			slot[i] = k + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->nslot = n;
	}
	for (i = hash(s) & (t->nslot - 1); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->s[t->slot[i] - 1], s))
			return (int64_t)(t->slot[i] - 1);
	if (t->n == t->cap) {
		grown = realloc(t->s, (t->cap ? 2 * t->cap : 256) * sizeof(*grown));
		if (!grown)
			return -1;
		t->s = grown;
		t->cap = t->cap ? 2 * t->cap : 256;
	}
	if (!(t->s[t->n] = strdup(s)))
		return -1;
	t->slot[i] = t->n + 1;
	return (int64_t)t->n++;
}

static void strtab_free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
}

struct builder {
	struct strtab st;
	Perftools__Profiles__Function *fn;
	Perftools__Profiles__Location *loc;
	Perftools__Profiles__Line *line;
	Perftools__Profiles__Line **line_p;
	size_t nfn, cap;
	struct strtab keys;           /* "name\001file" of function i at index i: finds it again */
};

/* The location of a function (one each): its id, or 0 on no memory. */
static uint64_t location(struct builder *b, const char *name, const char *file)
{
	int64_t n = intern(&b->st, name), f = intern(&b->st, file), k;
	char key[1100];
	void *p;

	snprintf(key, sizeof(key), "%s\001%s", name, file);
	if (n < 0 || f < 0 || (k = intern(&b->keys, key)) < 0)
		return 0;
	if ((size_t)k < b->nfn)
		return (uint64_t)k + 1;          /* seen: keys and functions are made in step */
	if (b->nfn == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;

		if (!(p = realloc(b->fn, cap * sizeof(*b->fn))))
			return 0;
		b->fn = p;
		if (!(p = realloc(b->loc, cap * sizeof(*b->loc))))
			return 0;
		b->loc = p;
		if (!(p = realloc(b->line, cap * sizeof(*b->line))))
			return 0;
		b->line = p;
		b->cap = cap;
	}
	perftools__profiles__function__init(&b->fn[b->nfn]);
	b->fn[b->nfn].id = b->nfn + 1;
	b->fn[b->nfn].name = b->fn[b->nfn].system_name = n;
	b->fn[b->nfn].filename = f;
	return ++b->nfn;
}

/* The data region's frame: "[heap]", a file's path, or "anon 24 MiB (alloc: make_buffers)". */
static void region_frame(const struct ms_report_row *row, char *buf, size_t len)
{
	const struct ms_region *r = row->region;
	uint64_t size = r ? r->end - r->start : 0;
	char sz[32];

	if (!r) {
		snprintf(buf, len, "[unmapped]");
		return;
	}
	if (size >= 1ULL << 20)
		snprintf(sz, sizeof(sz), "%" PRIu64 " MiB", size >> 20);
	else
		snprintf(sz, sizeof(sz), "%" PRIu64 " KiB", size >> 10);
	if (r->kind == MS_KIND_ANON && row->alloc && row->alloc[0])
		snprintf(buf, len, "anon %s (alloc: %s)", sz, row->alloc);
	else if (r->name[0] && strcmp(r->name, "[anon]"))
		snprintf(buf, len, "%s", r->name);
	else
		snprintf(buf, len, "anon %s", sz);
}

/* gzip's wrapper around deflate, into fd. 0 or a negative errno. */
static int write_gzip(int fd, const uint8_t *data, size_t len)
{
	unsigned char out[65536];
	z_stream z = { 0 };
	size_t have;
	ssize_t w;
	int zr, err = 0;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		have = sizeof(out) - z.avail_out;
		for (size_t off = 0; off < have && !err; off += (size_t)w)
			if ((w = write(fd, out + off, have - off)) <= 0)
				err = w < 0 ? -errno : -EIO;
	} while (zr == Z_OK && !err);
	deflateEnd(&z);
	return err ? err : zr == Z_STREAM_END ? 0 : -EIO;
}

MS_EXPORT int ms_pprof_write(int fd, const struct ms_report_row *rows, size_t n,
			     const struct ms_report_row *unmapped, uint64_t start_ns, uint64_t duration_ns)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[2], period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *type_p[2] = { &types[0], &types[1] };
	Perftools__Profiles__Sample *smp = NULL, **smp_p = NULL;
	Perftools__Profiles__Label *lab = NULL, **lab_p = NULL;
	Perftools__Profiles__Location **loc_p = NULL;
	Perftools__Profiles__Function **fn_p = NULL;
	struct builder b = { 0 };
	uint64_t *ids = NULL;
	int64_t *vals = NULL;
	uint8_t *buf = NULL;
	char frame[512], code[512];
	const struct ms_report_row *row;
	size_t i, k, nr = n + (unmapped && unmapped->samples ? 1 : 0), ns = 0;
	int64_t kpid, kcomm, kkind;
	int err = -ENOMEM;

	intern(&b.st, "");
	smp = calloc(nr ? nr : 1, sizeof(*smp));
	smp_p = calloc(nr ? nr : 1, sizeof(*smp_p));
	lab = calloc(3 * (nr ? nr : 1), sizeof(*lab));
	lab_p = calloc(3 * (nr ? nr : 1), sizeof(*lab_p));
	ids = calloc(2 * (nr ? nr : 1), sizeof(*ids));
	vals = calloc(2 * (nr ? nr : 1), sizeof(*vals));
	if (!smp || !smp_p || !lab || !lab_p || !ids || !vals)
		goto out;
	for (k = 0; k < 2; k++)
		perftools__profiles__value_type__init(&types[k]);
	types[0].type = intern(&b.st, "samples");
	types[0].unit = intern(&b.st, "count");
	types[1].type = intern(&b.st, "pages");
	types[1].unit = intern(&b.st, "count");
	period.type = types[0].type;
	period.unit = types[0].unit;
	kpid = intern(&b.st, "pid");
	kcomm = intern(&b.st, "comm");
	kkind = intern(&b.st, "kind");
	for (i = 0; i < nr; i++) {
		row = i < n ? &rows[i] : unmapped;
		if (!row->samples)
			continue;
		region_frame(row, frame, sizeof(frame));
		snprintf(code, sizeof(code), "%s", row->symbol && row->symbol[0] ? row->symbol : "[unknown]");
		perftools__profiles__sample__init(&smp[ns]);
		/* The leaf first: the code that touched the data, then the data region on top. */
		ids[2 * ns] = location(&b, code, row->dso ? row->dso : "");
		ids[2 * ns + 1] = location(&b, frame, "");
		if (!ids[2 * ns] || !ids[2 * ns + 1])
			goto out;
		smp[ns].location_id = &ids[2 * ns];
		smp[ns].n_location_id = 2;
		vals[2 * ns] = (int64_t)row->samples;
		vals[2 * ns + 1] = (int64_t)row->pages;
		smp[ns].value = &vals[2 * ns];
		smp[ns].n_value = 2;
		for (k = 0; k < 3; k++) {
			perftools__profiles__label__init(&lab[3 * ns + k]);
			lab_p[3 * ns + k] = &lab[3 * ns + k];
		}
		lab[3 * ns].key = kpid;
		lab[3 * ns].num = row->region ? row->region->pid : 0;
		lab[3 * ns + 1].key = kcomm;
		lab[3 * ns + 1].str = intern(&b.st, row->region ? row->region->comm : "");
		lab[3 * ns + 2].key = kkind;
		lab[3 * ns + 2].str = intern(&b.st, row->region ? ms_region_kind_name(row->region->kind) : "unmapped");
		if (lab[3 * ns + 1].str < 0 || lab[3 * ns + 2].str < 0)
			goto out;
		smp[ns].label = &lab_p[3 * ns];
		smp[ns].n_label = 3;
		smp_p[ns] = &smp[ns];
		ns++;
	}
	/* One location per function, with its one line. */
	loc_p = calloc(b.nfn ? b.nfn : 1, sizeof(*loc_p));
	fn_p = calloc(b.nfn ? b.nfn : 1, sizeof(*fn_p));
	b.line_p = calloc(b.nfn ? b.nfn : 1, sizeof(*b.line_p));
	if (!loc_p || !fn_p || !b.line_p)
		goto out;
	for (i = 0; i < b.nfn; i++) {
		perftools__profiles__line__init(&b.line[i]);
		b.line[i].function_id = i + 1;
		b.line_p[i] = &b.line[i];
		perftools__profiles__location__init(&b.loc[i]);
		b.loc[i].id = i + 1;
		b.loc[i].line = &b.line_p[i];
		b.loc[i].n_line = 1;
		loc_p[i] = &b.loc[i];
		fn_p[i] = &b.fn[i];
	}
	p.sample_type = type_p;
	p.n_sample_type = 2;
	p.sample = smp_p;
	p.n_sample = ns;
	p.location = loc_p;
	p.n_location = b.nfn;
	p.function = fn_p;
	p.n_function = b.nfn;
	p.string_table = b.st.s;
	p.n_string_table = b.st.n;
	/* The recording's clock is CLOCK_MONOTONIC, not a date: no time_nanos, only the duration. */
	(void)start_ns;
	p.duration_nanos = (int64_t)duration_ns;
	p.default_sample_type = types[0].type;
	p.period_type = &period;
	p.period = 1;
	buf = malloc(perftools__profiles__profile__get_packed_size(&p) + 1);
	if (!buf)
		goto out;
	err = write_gzip(fd, buf, perftools__profiles__profile__pack(&p, buf));
out:
	free(buf);
	free(loc_p);
	free(fn_p);
	free(b.line_p);
	free(b.line);
	free(b.loc);
	free(b.fn);
	strtab_free(&b.st);
	strtab_free(&b.keys);
	free(smp);
	free(smp_p);
	free(lab);
	free(lab_p);
	free(ids);
	free(vals);
	return err;
}
