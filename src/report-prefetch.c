/* report's bad prefetch sites (report-prefetch.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <mapscope/pdreader.h>
#include <mapscope/symbols.h>
#include <mapscope/unmapped.h>

#include "output/format.h"
#include "output/json.h"
#include "output/text.h"
#include "report-prefetch.h"

#define SHOWN 10

static struct ms_unmapped *un;

/* Whether the recording has an event of a prefetch's uprobe: "mapscope_PID:pfN". */
static bool has_prefetch_events(const struct ms_pdreader *r)
{
	const char *name;
	size_t i;

	for (i = 0; r && i < ms_pdreader_nr_evsels(r); i++)
		if ((name = ms_pdreader_evsel_name(r, i)) && !strncmp(name, "mapscope_", 9) && strstr(name, ":pf"))
			return true;
	return false;
}

bool report_prefetch_in(const struct ms_pdreader *r)
{
	return has_prefetch_events(r);       /* a pipe (NULL) is read once: its sites are left to unmapped */
}

int report_prefetch_add(struct ms_session *s)
{
	if (!has_prefetch_events(ms_session_reader(s)))
		return 0;
	if (!(un = ms_unmapped_new()))
		return -ENOMEM;
	return ms_session_add(s, &ms_unmapped_analysis, un);
}

/* The sites, most bad prefetches first: false where there are none (or no analysis). */
static bool sites(const struct ms_unmapped_prefetch_site **v, size_t *n)
{
	*n = 0;
	return un && !ms_unmapped_prefetch_sites(un, v, n) && *n;
}

void report_prefetch_text(const struct ms_session *s)
{
	const struct ms_unmapped_prefetch_site *v;
	char sym[256];
	const char *file;
	size_t n, i;
	int line;

	if (!sites(&v, &n))
		return;
	printf("\nprefetch instructions, most bad prefetches first (record --prefetches; mapscope unmapped "
	       "says where they went):\n%10s %10s %7s  %s\n", "bad", "prefetches", "wasted", "code");
	for (i = 0; i < n && i < SHOWN; i++) {
		ms_format_code(ms_session_symbols(s), v[i].pid, v[i].ip, sym, sizeof(sym), &file, &line);
		printf("%10" PRIu64 " %10" PRIu64 " %6.1f%%  %s", v[i].bad, v[i].prefetches,
		       100.0 * (double)v[i].bad / (double)v[i].prefetches, MS_TEXT(sym));
		if (file)
			printf(" (%s:%d)", MS_TEXT(file), line);
		printf("\n");
	}
	if (n > SHOWN)
		printf("%10s (%zu more: mapscope unmapped)\n", "", n - SHOWN);
}

void report_prefetch_site_json(struct ms_json *w, struct ms_symbols *syms, const struct ms_unmapped_prefetch_site *v)
{
	char sym[256];
	const char *file;
	int line;

	ms_format_code(syms, v->pid, v->ip, sym, sizeof(sym), &file, &line);
	ms_json_object_begin(w);
	ms_json_key_addr(w, "ip", v->ip);
	ms_json_key_str(w, "symbol", sym);
	ms_json_key_str(w, "file", file);
	ms_json_key_int(w, "line", line);
	ms_json_key_u64(w, "pid", v->pid);
	ms_json_key_u64(w, "prefetches", v->prefetches);
	ms_json_key_u64(w, "bad", v->bad);
	ms_json_object_end(w);
}

void report_prefetch_json(struct ms_json *w, const struct ms_session *s)
{
	const struct ms_unmapped_prefetch_site *v;
	size_t n, i;

	if (!sites(&v, &n))
		return;
	ms_json_newline(w, 1);
	ms_json_key(w, "prefetch_sites");
	ms_json_array_begin(w);
	for (i = 0; i < n; i++) {
		ms_json_newline(w, 2);
		report_prefetch_site_json(w, ms_session_symbols(s), &v[i]);
	}
	ms_json_array_end(w);
}

void report_prefetch_free(void)
{
	ms_unmapped_free(un);
	un = NULL;
}
