#ifndef MS_SYMBOLS_LIBCVER_H
#define MS_SYMBOLS_LIBCVER_H

/*
 * glibc's minor version (2.NN) from the banner ("... release version
 * 2.NN ...") in the .rodata of the library at path, read as every binary
 * a recording names is (ms_elf_open(): a regular ELF file, never a FIFO
 * or a place under /proc, /sys or /dev): -1 where it cannot be read or
 * holds no banner.
 */
int ms_elf_glibc_minor(const char *path);

#endif
