/*
 * report's columns from hardware memory samples (mapscope/memlevel.h):
 * dTLB misses, the level that served most accesses, and the mean latency
 * (WEIGHT, cycles). Only where the recording has such an event and a
 * sample of it gave a data source: other reports are as they were, byte
 * for byte.
 */
#ifndef MS_REPORT_MEMLEVEL_H
#define MS_REPORT_MEMLEVEL_H

#include <stdio.h>

struct ms_json;
struct ms_memlevel;
struct ms_region;
struct ms_session;

/* Adds the analysis where s's recording has a hardware data-source event. 0 or a negative errno. */
int report_memlevel_add(struct ms_session *s);

/* The analysis added, or NULL. */
struct ms_memlevel *report_memlevel(void);

/* Text: the columns' header, and a row's (r NULL: the unmapped row); nothing without the analysis. */
void report_memlevel_text_header(void);
void report_memlevel_text(const struct ms_region *r);

/* JSON: the row's "memory" object. */
void report_memlevel_json(struct ms_json *w, const struct ms_region *r);

/* CSV: the header's columns, and a row's. */
void report_memlevel_csv_header(void);
void report_memlevel_csv(const struct ms_region *r);

void report_memlevel_free(void);

#endif
