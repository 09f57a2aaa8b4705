/*
 * libFuzzer: any bytes as the TRACING_DATA of a pipe-mode recording (the
 * tracepoint formats the stream reads), with a syscall tracepoint
 * event and one sample of it, through the reader and the stream. It must
 * never crash, leak or read out of bounds. Run as fuzz_reader.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <mapscope/pdreader.h>

#include "session/source.h"
#include "stream/stream.h"

static int count(const struct ms_event *ev, void *ctx)
{
	(void)ev;
	++*(int *)ctx;
	return 0;
}

static void put(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint64_t magic[2] = { 0x32454c4946524550ULL, 16 }, id = 7;
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_TRACEPOINT, .config = 1,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
						    PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
				     .sample_id_all = 1 };
	struct perf_event_header h;
	uint32_t td[2], raw = 12;
	uint64_t sample[6] = { id, 1 | (1ULL << 32), 5, 0, 0, 0 };
	struct ms_pdreader *r;
	struct ms_stream_source src;
	struct ms_stream *s;
	char path[64];
	int fd = memfd_create("fuzz", 0), events = 0;

	if (fd < 0 || size > (1u << 20))
		goto out;
	put(fd, magic, sizeof(magic));
	h = (struct perf_event_header){ 64 /* HEADER_ATTR */, 0, (uint16_t)(8 + sizeof(a) + 8) };
	put(fd, &h, sizeof(h));
	put(fd, &a, sizeof(a));
	put(fd, &id, 8);
	h = (struct perf_event_header){ 66 /* HEADER_TRACING_DATA */, 0, 16 };
	td[0] = (uint32_t)((size + 7) & ~(size_t)7);
	td[1] = 0;
	put(fd, &h, sizeof(h));
	put(fd, td, sizeof(td));
	put(fd, data, size);
	put(fd, (const char[8]){ 0 }, td[0] - size);
	/* identifier, tid, time, then RAW: a u32 size and 12 bytes, 16 in all */
	h = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, 8 + 24 + 16 };
	memcpy((char *)&sample[3], &raw, 4);
	put(fd, &h, sizeof(h));
	put(fd, sample, 24 + 16);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = ms_pdreader_open(path);
	s = r ? session_reader_stream(r) : NULL;
	if (s) {
		session_reader_source(r, &src);
		ms_stream_run(s, &src, count, &events);
	}
	ms_stream_free(s);
	ms_pdreader_free(r);
out:
	if (fd >= 0)
		close(fd);
	return 0;
}
