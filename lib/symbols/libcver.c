/*
 * glibc's version, read from its banner in the libc a recording names
 * (libcver.h): the advice for malloc's memory says whether its tunable is
 * there (2.35+).
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "symbols/libcver.h"

/* The number at p, of at most 3 digits and no more than end allows: -1 where there is none. */
static int small_number(const char *p, const char *end)
{
	int v = -1, k;

	for (k = 0; k < 3 && p < end && *p >= '0' && *p <= '9'; k++, p++)
		v = (v < 0 ? 0 : v * 10) + (*p - '0');
	return v;
}

/* The first .rodata of elf, where it has one: NULL where none. */
static Elf_Scn *rodata(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t strndx;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (name = elf_strptr(elf, strndx, sh->sh_name)) && !strcmp(name, ".rodata"))
			return scn;
	return NULL;
}

/*
 * Only .rodata is read (on Debian's libc 154 KiB of 1.9 MiB): the whole
 * file, read and searched, was 5% of a hugepages of chromium's page load.
 * The first one alone, and only up to RODATA_MAX: a recording names any
 * file, and libelf reads a section whole, as large as its header says
 * (a sparse file of 1 GiB took 1 GiB of memory).
 */
#define RODATA_MAX (16u << 20)

int ms_elf_glibc_minor(const char *path)
{
	static const char key[] = "release version 2.";
	int fd = ms_elf_open(path), minor = -1;
	Elf *elf;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	const char *p;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	if ((elf = elf_begin(fd, ELF_C_READ, NULL)) && (scn = rodata(elf, &sh)) && sh.sh_type == SHT_PROGBITS &&
	    sh.sh_size <= RODATA_MAX && (d = elf_rawdata(scn, NULL)) && d->d_buf &&
	    (p = memmem(d->d_buf, d->d_size, key, sizeof(key) - 1)))
		minor = small_number(p + sizeof(key) - 1, (const char *)d->d_buf + d->d_size);
	elf_end(elf);
	close(fd);
	return minor;
}
