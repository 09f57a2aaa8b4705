/*
 * The report as a pprof profile (profile.proto, gzipped), for go tool pprof
 * and the fleet profilers that take it (Pyroscope, Parca): one sample per
 * row, whose stack is the code that touched the data (the row's symbol and
 * binary) topped by a frame naming the data region ("[heap]", a file's
 * path, "anon 24 MiB (alloc: make_buffers)"), valued in samples and
 * distinct pages, labelled with pid, comm and the region's kind.
 */
#ifndef MAPSCOPE_PPROF_H
#define MAPSCOPE_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/report.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Writes rows (from ms_report_rows, grouped by region and symbol) and the
 * unmapped row to fd, which stays the caller's. 0 or a negative errno.
 */
int ms_pprof_write(int fd, const struct ms_report_row *rows, size_t n,
		   const struct ms_report_row *unmapped, uint64_t start_ns, uint64_t duration_ns);

#ifdef __cplusplus
}
#endif
#endif
