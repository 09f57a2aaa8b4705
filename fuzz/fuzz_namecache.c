/*
 * libFuzzer: any bytes as a file of the namer's kept answers
 * (lib/symbols/namecache.c), read as a report reads it, looked up by the
 * keys its slots name and by others, then written again with an answer
 * more. It must never crash, leak, loop or read out of bounds. Run as
 * fuzz_namecache. Where the first byte is even, the header's magic and
 * config are made the ones looked for, so that the table is reached.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/namecache.h"

static char dir[] = "/tmp/fuzz_namecache.XXXXXX", path[128];

static void remove_dir(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ms_namekey config = { 0x1234, 0x5678 };
	struct ms_namecache *c;
	struct ms_namekey k;
	unsigned char *copy;
	size_t len, i;
	int fd;

	if (!path[0]) {
		if (!mkdtemp(dir))
			abort();
		setenv("MAPSCOPE_NAME_CACHE", dir, 1);
		snprintf(path, sizeof(path), "%s/%016llx%016llx.names", dir, 0x1234ULL, 0x5678ULL);
		atexit(remove_dir);
	}
	if (!(copy = malloc(size ? size : 1)))
		return 0;
	memcpy(copy, data, size);
	if (size >= 24 && !(data[0] & 1)) {
		memcpy(copy, "MSNAMES1", 8);
		memcpy(copy + 8, &config.a, 8);
		memcpy(copy + 16, &config.b, 8);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, copy, size) != (ssize_t)size)
		abort();
	close(fd);
	if ((c = ms_namecache_open(&config))) {
		for (i = 48; i + 16 <= size && i < 48 + 24 * 16; i += 24) {   /* the keys the first slots hold */
			memcpy(&k, copy + i, 16);
			if (ms_namecache_get(c, &k, &len) && len)
				(void)((const volatile unsigned char *)ms_namecache_get(c, &k, &len))[len - 1];
		}
		k = (struct ms_namekey){ size, 1 };
		ms_namecache_get(c, &k, &len);
		ms_namecache_put(c, &k, data, size < 64 ? size : 64);
		ms_namecache_save(c);
		ms_namecache_free(c);
	}
	free(copy);
	return 0;
}
