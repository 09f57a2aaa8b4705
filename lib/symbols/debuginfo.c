/*
 * Separate debug files named by a binary's .gnu_debuglink, where the
 * build-id path (/usr/lib/debug/.build-id/xx/rest.debug) has none: beside
 * the binary, in its .debug folder, and under /usr/lib/debug by its
 * folder, as gdb, perf and dwfl_standard_find_debuginfo() look. That last
 * one would do it, but ends with a debuginfod query (symbols.c says why
 * not). A candidate is taken only if it is the binary's: the same
 * build-id, or where the binary has none, the CRC the link records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "symbols/internal.h"

/* The CRC-32 of the whole file fd (zlib's is the one .gnu_debuglink uses); false on a read error. */
static bool file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, NULL, 0);
	off_t at = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		c = crc32(c, buf, (uInt)n);
		at += n;
	}
	*crc = (uint32_t)c;
	return n == 0;
}

static bool is_the_one(int fd, const char *path, const unsigned char *id, size_t id_len, uint32_t crc)
{
	unsigned char got[64];
	uint32_t c;

	if (id_len)
		return ms_elf_build_id(path, got, sizeof(got)) == (int)id_len && !memcmp(got, id, id_len);
	return file_crc(fd, &c) && c == crc;
}

bool ms_debuglink_place(const char *file_name, const char *link, int i, char *path, size_t len)
{
	const char *slash = strrchr(file_name, '/');
	int dir_len = slash ? (int)(slash - file_name) : 0;

	if (!slash || !link || !*link || strchr(link, '/') || i < 0 || i >= MS_DEBUGLINK_PLACES)
		return false;                 /* a link is a file name, never a path out of these folders */
	if (i == 0)
		snprintf(path, len, "%.*s/%s", dir_len, file_name, link);
	else if (i == 1)
		snprintf(path, len, "%.*s/.debug/%s", dir_len, file_name, link);
	else
		snprintf(path, len, "/usr/lib/debug%.*s/%s", dir_len, file_name, link);
	return true;
}

int ms_debuglink_find(const char *file_name, const char *link, uint32_t crc, const unsigned char *id,
		      size_t id_len, char **found)
{
	char path[4096];
	int fd, i;

	*found = NULL;
	for (i = 0; ms_debuglink_place(file_name, link, i, path, sizeof(path)); i++) {
		if (!strcmp(path, file_name) || (fd = ms_elf_open(path)) < 0)
			continue;
		if (is_the_one(fd, path, id, id_len, crc)) {
			if (!(*found = strdup(path))) {
				close(fd);
				return -ENOMEM;
			}
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}
