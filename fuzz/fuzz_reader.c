/*
 * libFuzzer: any bytes as a recording, through a session (the reader, the
 * stream, the model) and the per-region report, every other input with
 * the stream run ahead on a thread of its own (session/ahead.h), as the
 * commands run it. It must never crash, leak or read out of bounds. Build: cmake -DMS_FUZZ=ON -DCMAKE_C_COMPILER=clang; run:
 * build-fuzz/fuzz/fuzz_reader -max_total_time=120 corpus/ tests/golden/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mapscope/report.h>
#include <mapscope/session.h>

#include "session/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ms_report_key keys[] = { MS_SORT_SAMPLES };
	const struct ms_report_row *rows = NULL, *un;
	struct ms_session *s;
	struct ms_report *rep;
	char path[64];
	size_t n;
	int fd = memfd_create("fuzz", 0);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	setenv("MAPSCOPE_STREAM_AHEAD", "1", 0);   /* ahead whatever the CPUs */
	s = ms_session_open(path, NULL);
	if (s)
		session_read_ahead(s, size % 2);
	rep = s ? ms_report_new(NULL) : NULL;
	if (rep && !ms_session_add(s, &ms_report_analysis, rep)) {
		ms_session_run(s);
		ms_report_rows(rep, ms_session_aspace(s), keys, 1, &rows, &n, &un);
	}
	ms_report_free(rep);
	ms_session_free(s);
	close(fd);
	return 0;
}
