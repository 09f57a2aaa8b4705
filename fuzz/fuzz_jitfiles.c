/*
 * libFuzzer: any bytes as a JIT's files, a jitdump and a perf map (the
 * first byte chooses), read as the report reads them from /tmp or a
 * recording's path, then looked up at a few addresses and times. It must
 * never crash, leak or read out of bounds. Run as fuzz_jitfiles.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/jit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = { 0, 0x1000, 0x7f0000001000ULL, UINT64_MAX - 1 };
	struct jit_table *t;
	char path[64];
	uint32_t pid = 0;
	size_t i, k;
	int fd;

	if (size < 1 || (fd = memfd_create("jit", 0)) < 0)
		return 0;
	if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);   /* a memfd: a regular file on tmpfs */
	if (size >= 25)
		memcpy(&pid, data + 21, sizeof(pid));   /* the dump header's pid field, as the file holds it */
	t = data[0] & 1 ? ms_perfmap_read(path) : ms_jitdump_read(path, pid, data[0] & 2);
	for (i = 0; t && i < sizeof(probes) / sizeof(probes[0]); i++)
		for (k = 0; k < t->n && k < 4; k++) {
			ms_jit_find(t, probes[i], t->v[k].from);
			ms_jit_find(t, t->v[k].start, probes[i]);
		}
	ms_jit_free(t);
	close(fd);
	return 0;
}
