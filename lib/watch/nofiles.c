/*
 * The watch part of the library (libmapscope-watch) is what ms_watch_*
 * reaches in libmapscope, pulled out by the linker. A live session reaches
 * the perf.data reader and the symbols only through file sessions and
 * analyses that want symbols, which a watch never opens; these stand-ins
 * take their place there, so that the watch part needs neither zstd nor
 * elfutils. Not part of libmapscope itself (CMakeLists.txt leaves it out).
 */
#include <errno.h>
#include <stddef.h>

#include <mapscope/pdreader.h>
#include <mapscope/symbols.h>

#include "symbols/jit.h"
#include "symbols/preopen.h"
#include "analysis/sites.h"
#include "perfdata/reader.h"

struct ms_pdreader *ms_pdreader_open(const char *path)
{
	(void)path;
	errno = ENOTSUP;                /* reading files is libmapscope's, not the watch part's */
	return NULL;
}

void ms_pdreader_free(struct ms_pdreader *r)
{
	(void)r;
}

const struct ms_evlist *ms_pdreader_evlist(const struct ms_pdreader *r)
{
	(void)r;
	return NULL;
}

void ms_pdreader_tracing_data(const struct ms_pdreader *r, const void **data, size_t *len)
{
	(void)r;
	*data = NULL;
	*len = 0;
}

int ms_pdreader_span(struct ms_pdreader *r, const void **start, size_t *len, uint64_t *off)
{
	(void)r;
	(void)start;
	(void)len;
	(void)off;
	return -ENOTSUP;
}

void ms_pdreader_consume(struct ms_pdreader *r, size_t len, size_t last)
{
	(void)r;
	(void)len;
	(void)last;
}

void ms_pdreader_keep(struct ms_pdreader *r, bool keep)
{
	(void)r;
	(void)keep;
}

void ms_pdreader_release(struct ms_pdreader *r, uint64_t upto)
{
	(void)r;
	(void)upto;
}

bool ms_pdreader_in_order(const struct ms_pdreader *r)
{
	(void)r;
	return false;
}

void ms_pdreader_lasting(const struct ms_pdreader *r, const void **lo, const void **hi)
{
	(void)r;
	*lo = *hi = NULL;
}

uint64_t ms_pdreader_sample_time_last(const struct ms_pdreader *r)
{
	(void)r;
	return 0;
}

uint64_t ms_pdreader_offset_of(const struct ms_pdreader *r, const void *rec)
{
	(void)r;
	(void)rec;
	return 0;
}

const unsigned char *ms_pdreader_build_ids(const struct ms_pdreader *r, size_t *size)
{
	(void)r;
	*size = 0;
	return NULL;
}

bool ms_build_id_in(const unsigned char *data, size_t size, size_t i, const char **path,
		    const unsigned char **id, size_t *len)
{
	(void)data;
	(void)size;
	(void)i;
	(void)path;
	(void)id;
	(void)len;
	return false;
}

bool ms_pdreader_pipe(const struct ms_pdreader *r)
{
	(void)r;
	return false;
}

struct ms_symbols *ms_symbols_new(void)
{
	errno = ENOTSUP;                /* symbols need elfutils: libmapscope */
	return NULL;
}

void ms_symbols_expect_build_id(struct ms_symbols *s, const char *path, const unsigned char *id, size_t len)
{
	(void)s;
	(void)path;
	(void)id;
	(void)len;
}

void ms_symbols_track(struct ms_symbols *s, const struct ms_event *ev)
{
	(void)s;
	(void)ev;
}

void ms_symbols_free(struct ms_symbols *s)
{
	(void)s;
}

size_t ms_pdreader_nr_evsels(const struct ms_pdreader *r)
{
	(void)r;
	return 0;
}

const struct perf_event_attr *ms_pdreader_attr(const struct ms_pdreader *r, size_t i)
{
	(void)r;
	(void)i;
	return NULL;
}

struct ms_preopen *ms_symbols_preopen(struct ms_symbols *s)
{
	(void)s;
	return NULL;
}

void ms_preopen_map(void *po, const struct ms_event *ev)
{
	(void)po;
	(void)ev;
}

void ms_preopen_drain(struct ms_preopen *po)
{
	(void)po;
}

void ms_symbols_set_time(struct ms_symbols *s, uint64_t t)
{
	(void)s;
	(void)t;
}

uint64_t ms_symbols_next_change(const struct ms_symbols *s)
{
	(void)s;
	return UINT64_MAX;
}

void ms_symbols_clock_monotonic(struct ms_symbols *s, bool yes)
{
	(void)s;
	(void)yes;
}

int ms_sites_note(struct ms_sites *t, struct ms_symbols *syms, const struct ms_region *r, const struct ms_event *ev)
{
	(void)t;
	(void)syms;
	(void)r;
	(void)ev;
	return 0;
}

void ms_sites_aside(struct ms_sites *t, bool chains)
{
	(void)t;
	(void)chains;
}

bool ms_sites_noted(const struct ms_sites *t, const struct ms_region *r)
{
	(void)t;
	(void)r;
	return false;
}

const char *ms_sites_site(struct ms_sites *t, const struct ms_region *r)
{
	(void)t;
	(void)r;
	return NULL;
}

const char *ms_sites_chain(struct ms_sites *t, const struct ms_region *r)
{
	(void)t;
	(void)r;
	return NULL;
}

size_t ms_sites_ips(const struct ms_sites *t, const struct ms_region *r, const uint64_t **ips)
{
	(void)t;
	(void)r;
	*ips = NULL;
	return 0;
}

struct ms_namer *ms_sites_namer(struct ms_sites *t, const struct ms_symbols *syms)
{
	(void)t;
	(void)syms;
	return NULL;
}

void ms_sites_ask(struct ms_sites *t, const struct ms_region *r)
{
	(void)t;
	(void)r;
}

void ms_sites_stop(struct ms_sites *t)
{
	(void)t;
}

void ms_sites_release(struct ms_sites *t)
{
	(void)t;
}
