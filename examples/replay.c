/* The region table of a recording, with libmapscope's public API. usage: replay [FILE] */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <mapscope/report.h>
#include <mapscope/session.h>

int main(int argc, char **argv)
{
	static const enum ms_report_key by_samples[] = { MS_SORT_SAMPLES };
	struct ms_session *s = ms_session_open(argc > 1 ? argv[1] : "mapscope.data", NULL);
	struct ms_report *rep = ms_report_new(NULL);        /* rows by region */
	const struct ms_report_row *rows, *unmapped;        /* lent by rep: nothing to free */
	size_t n, i;
	int err;

	if (!s || !rep || ms_session_add(s, &ms_report_analysis, rep))
		return perror("replay"), 1;
	err = ms_session_run(s);
	if ((err < 0 && err != -EBADMSG) ||
	    ms_report_rows(rep, ms_session_aspace(s), by_samples, 1, &rows, &n, &unmapped))
		return fprintf(stderr, "replay: cannot read the recording\n"), 1;
	printf("%7s %10s %-12s %-24s %10s\n", "pid", "region", "kind", "name", "samples");
	for (i = 0; i < n; i++)
		printf("%7u %10u %-12s %-24s %10" PRIu64 "\n", rows[i].region->pid, rows[i].region->id,
		       ms_region_kind_name(rows[i].region->kind), rows[i].region->name, rows[i].samples);
	printf("%7s %10s %-12s %-24s %10" PRIu64 "\n", "", "", "unmapped", "", unmapped->samples);
	printf("total %" PRIu64 "\n", ms_report_total(rep));
	ms_report_free(rep);
	ms_session_free(s);
	return 0;
}
