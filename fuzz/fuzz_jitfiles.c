/*
 * libFuzzer: any bytes as a JIT's files, a jitdump and a perf map (the
 * first byte chooses), read as the report reads them from /tmp or a
 * recording's path, then looked up at a few addresses and times. It must
 * never crash, leak or read out of bounds. Run as fuzz_jitfiles.
 *
 * The bytes go into a regular file of a folder of its own under /tmp: the
 * readers open nothing under /proc, so a memfd named by /proc/self/fd/N
 * (as this harness had it) was refused before a byte was read, and every
 * input came back NULL.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "symbols/jit.h"

static char dir[] = "/tmp/fuzz_jitfiles.XXXXXX", path[64];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = { 0, 0x1000, 0x7f0000001000ULL, UINT64_MAX - 1 };
	struct jit_table *t;
	uint32_t pid = 0;
	size_t i, k;
	ssize_t n;
	int fd;

	if (!path[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/jit", dir);
		atexit(remove_dir);
	}
	if (size < 1 || (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return 0;
	n = write(fd, data + 1, size - 1);
	close(fd);
	if (n != (ssize_t)(size - 1))
		return 0;
	if (size >= 25)
		memcpy(&pid, data + 21, sizeof(pid));   /* the dump header's pid field, as the file holds it */
	t = data[0] & 1 ? ms_perfmap_read(path) : ms_jitdump_read(path, pid, data[0] & 2);
	for (i = 0; t && i < sizeof(probes) / sizeof(probes[0]); i++)
		for (k = 0; k < t->n && k < 4; k++) {
			ms_jit_find(t, probes[i], t->v[k].from);
			ms_jit_find(t, t->v[k].start, probes[i]);
		}
	ms_jit_free(t);
	return 0;
}
