/*
 * Internal: the report's rows without the allocation sites no one prints.
 * A site is named when first asked for (sites.h); a report that prints
 * no empty row (no samples, no ongoing access: report without --all) need
 * not name theirs.
 */
#ifndef MS_ANALYSIS_REPORTSITES_H
#define MS_ANALYSIS_REPORTSITES_H

#include <stdbool.h>

#include <mapscope/report.h>

/* yes: ms_report_row() and ms_report_rows() give empty rows a NULL alloc. Off by default. */
void ms_report_unnamed_empty(struct ms_report *rep, bool yes);

#endif
