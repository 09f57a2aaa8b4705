/*
 * report's list of the prefetch instructions with the most bad prefetches
 * (record --prefetches): only where the recording has a prefetch uprobe's
 * event, so other reports are as they were, byte for byte. The text has
 * a table of them, the JSON a "prefetch_sites" list as unmapped's; the
 * HTML page has its own (output/html.c).
 */
#ifndef MS_REPORT_PREFETCH_H
#define MS_REPORT_PREFETCH_H

#include <stdbool.h>

struct ms_pdreader;
struct ms_session;

/* Whether recording r (replay_peek's; NULL: a pipe) has prefetch uprobes: report then needs symbols. */
bool report_prefetch_in(const struct ms_pdreader *r);

/* Adds the unmapped analysis where s's recording has prefetch uprobes. 0 or a negative errno. */
int report_prefetch_add(struct ms_session *s);

/* The sites with the most bad prefetches, after the table; nothing without the analysis. */
void report_prefetch_text(const struct ms_session *s);

struct ms_json;
struct ms_symbols;
struct ms_unmapped_prefetch_site;

/* The same as "prefetch_sites", a key of the report's object, as unmapped's JSON has it; nothing without. */
void report_prefetch_json(struct ms_json *w, const struct ms_session *s);

/* One entry of a "prefetch_sites" list (report's and unmapped's): ip, symbol, file, line, pid, counts. */
void report_prefetch_site_json(struct ms_json *w, struct ms_symbols *syms, const struct ms_unmapped_prefetch_site *v);

void report_prefetch_free(void);

#endif
