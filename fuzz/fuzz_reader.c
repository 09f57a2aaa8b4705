/*
 * libFuzzer: any bytes as a recording, through the reader, the stream, the
 * model and the per-region report. It must never crash, leak or read out
 * of bounds. Build: cmake -DMS_FUZZ=ON -DCMAKE_C_COMPILER=clang; run:
 * LSAN_OPTIONS=suppressions=fuzz/lsan.supp build-fuzz/fuzz/fuzz_reader -max_total_time=120 corpus/ tests/golden/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mapscope/aspace.h>
#include <mapscope/pdreader.h>
#include <mapscope/report.h>
#include <mapscope/stream.h>

static int apply(const struct ms_event *ev, void *ctx)
{
	return ms_aspace_apply(ctx, ev, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ms_report_key keys[] = { MS_SORT_SAMPLES };
	struct ms_report_row *rows = NULL, un;
	struct ms_pdreader *r;
	struct ms_stream *s;
	struct ms_aspace *as;
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
	r = ms_pdreader_open(path);
	s = r ? ms_stream_new(r) : NULL;
	as = s ? ms_aspace_new() : NULL;
	rep = as ? ms_report_new(0, UINT64_MAX) : NULL;
	if (rep) {
		ms_report_attach(rep, as);
		ms_stream_run(s, apply, as);
		ms_aspace_finish(as);
		if (!ms_report_rows(rep, as, keys, 1, &rows, &n, &un))
			free(rows);
	}
	ms_report_free(rep);
	ms_aspace_free(as);
	ms_stream_free(s);
	ms_pdreader_free(r);
	close(fd);
	return 0;
}
