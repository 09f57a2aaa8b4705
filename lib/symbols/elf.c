/*
 * ELF files read for what they say about a binary: its PT_LOAD segments,
 * its build-id, the part of its first segment the loader leaves mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "symbols/internal.h"

#include "util/log.h"

/* Reads the PT_LOAD segments; quietly unusable for files that are not ELF. */
void ms_bin_read_segments(struct bin *b)
{
	size_t n, i;
	GElf_Phdr ph;
	Elf *elf;
	int fd;

	b->state = -1;
	fd = open(b->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		b->state = -2;
		b->open_errno = errno;
		return;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return;
	}
	b->segs = calloc(n ? n : 1, sizeof(*b->segs));
	b->lo = UINT64_MAX;
	for (i = 0; b->segs && i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b->segs[b->nr_segs++] = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz };
		if (ph.p_vaddr < b->lo)
			b->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > b->hi)
			b->hi = ph.p_vaddr + ph.p_memsz;
	}
	elf_end(elf);
	close(fd);
	if (b->nr_segs)
		b->state = 1;
}

MS_EXPORT int ms_elf_build_id(const char *path, unsigned char *id, size_t cap)
{
	const void *bits;
	ssize_t n = -ENOENT;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		n = dwelf_elf_gnu_build_id(elf, &bits);
		if (n > 0 && (size_t)n <= cap)
			memcpy(id, bits, (size_t)n);
		else
			n = -ENOENT;
		elf_end(elf);
	}
	close(fd);
	return (int)n;
}

MS_EXPORT int ms_elf_first_load(const char *path, uint64_t ino, uint64_t *size)
{
	struct stat st;
	GElf_Phdr ph;
	size_t n, i;
	Elf *elf;
	int fd, err = -ENOENT;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n))
		for (i = 0; i < n; i++) {
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			*size = (ph.p_filesz + (ph.p_vaddr & 4095) + 4095) & ~4095ULL;
			err = *size ? 0 : -ENOENT;
			break;
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
