/*
 * For the tests of how a recording lies in the page cache: how much of a
 * mapping of this process the kernel maps with PMDs (2 MiB folios of a
 * file), and whether the file system under a directory keeps a file's
 * page cache in 2 MiB folios at all (ext4 since Linux 6.16, xfs; tmpfs
 * only with huge=), which a test needs before it asks for them.
 */
#ifndef MS_TEST_PMD_FILE_H
#define MS_TEST_PMD_FILE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PMD_BYTES (2u << 20)

/* The KiB of the mapping that starts at addr that are mapped with PMDs (smaps FilePmdMapped). */
static inline unsigned long file_pmd_kib(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long long start, end;
	unsigned long kib = 0;
	char line[512];
	bool in = false;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = start == (uintptr_t)addr;
		else if (in && sscanf(line, "FilePmdMapped: %lu kB", &kib) == 1)
			break;
	}
	fclose(f);
	return in ? kib : 0;
}

/* A mapping of len bytes of fd at a 2 MiB boundary, every page read; NULL where it cannot map. */
static inline const unsigned char *map_pmd_aligned(int fd, size_t len)
{
	size_t span = (len + 4095) & ~(size_t)4095, i;
	unsigned char *area = mmap(NULL, span + PMD_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *at;
	volatile unsigned char sum = 0;

	if (area == MAP_FAILED)
		return NULL;
	at = (unsigned char *)(((uintptr_t)area + PMD_BYTES - 1) & ~(uintptr_t)(PMD_BYTES - 1));
	if (mmap(at, span, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		munmap(area, span + PMD_BYTES);
		return NULL;
	}
	if (at > area)
		munmap(area, (size_t)(at - area));
	munmap(at + span, (size_t)(area + PMD_BYTES - at));
	for (i = 0; i < len; i += 4096)
		sum += at[i];
	(void)sum;
	return at;
}

/*
 * Whether a file in dir, written with one 2 MiB write at offset 0, is
 * mapped with a PMD when read: the file system keeps 2 MiB folios.
 */
static inline bool dir_keeps_pmd_folios(const char *dir)
{
	char path[4096];
	unsigned char *buf = calloc(1, PMD_BYTES);
	const unsigned char *m;
	bool yes = false;
	int fd;

	snprintf(path, sizeof(path), "%s/pmd-probe-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (pwrite(fd, buf, PMD_BYTES, 0) == (ssize_t)PMD_BYTES && (m = map_pmd_aligned(fd, PMD_BYTES))) {
		yes = file_pmd_kib(m) >= PMD_BYTES / 1024;
		munmap((void *)(uintptr_t)m, PMD_BYTES);
	}
	free(buf);
	close(fd);
	return yes;
}

#endif
