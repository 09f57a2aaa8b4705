/*
 * Separate debug files with compressed sections, kept decompressed by
 * build-id under the user's cache folder (perf keeps its ~/.debug so).
 *
 * libdw inflates every compressed .debug_* section of a file when it
 * first reads its DWARF, whatever is asked of it: naming a few of libc's
 * frames with file:line inflated libc6-dbg's 4 MiB into 10 MiB at every
 * report, 20-30% of a report of a real recording. The copy holds the
 * same bytes uncompressed; libdw maps it and reads only the pages it
 * asks for. Everything before the first compressed section (the ELF
 * header, the program headers and what they point at) is copied as it
 * is; the sections from there on are laid out again, one after another,
 * then the section headers, each compressed section inflated 64 KiB at a
 * time (zlib or zstd) as it is written. A copy is used only if it is
 * whole (its size is where its section headers end), it is the user's own
 * file in the user's own folder, and it has the build-id asked for. Where
 * the cache is off or its folder is not to be trusted, the copy is made
 * all the same, for the process only, in an unnamed file of $TMPDIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <zlib.h>
#include <zstd.h>

#include "symbols/internal.h"
#include "util/cachedir.h"
#include "util/grow.h"

#define ALIGN_MAX 4096
#define CHUNK 65536
#define INFLATE_MAX 1000                  /* the most a compressed section may inflate, as a ratio */

/* Whether elf is a 64-bit ELF file of this machine's byte order with a compressed section that is not loaded. */
static bool compressed(Elf *elf)
{
	const char *ident = elf_getident(elf, NULL);
	Elf_Scn *scn = NULL;
	GElf_Shdr mem, *sh;

	if (!ident || ident[EI_CLASS] != ELFCLASS64 ||
	    ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if ((sh = gelf_getshdr(scn, &mem)) && (sh->sh_flags & SHF_COMPRESSED) && !(sh->sh_flags & SHF_ALLOC))
			return true;
	return false;
}

static bool same_id(Elf *elf, const unsigned char *id, size_t id_len)
{
	const void *bits;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);

	return n > 0 && (size_t)n == id_len && !memcmp(bits, id, id_len);
}

/* Whether fd is a whole copy: the user's regular file, its size where its section headers end, of build-id id. */
static bool copy_whole(int fd, const unsigned char *id, size_t id_len)
{
	Elf64_Ehdr *eh;
	struct stat st;
	bool ok = false;
	Elf *elf;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		eh = elf_kind(elf) == ELF_K_ELF && elf_getident(elf, NULL)[EI_CLASS] == ELFCLASS64 ? elf64_getehdr(elf)
												    : NULL;
		ok = eh && eh->e_shnum && eh->e_shentsize == sizeof(Elf64_Shdr) &&
		     eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) == (uint64_t)st.st_size &&
		     !compressed(elf) && same_id(elf, id, id_len);
		elf_end(elf);
	}
	return ok;
}

/* The copy at path, opened, where it is whole, this user's and of build-id id; or -1. */
static int open_copy(const char *path, const unsigned char *id, size_t id_len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd >= 0 && !copy_whole(fd, id, id_len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool put(int fd, const void *buf, size_t len, uint64_t at)
{
	ssize_t n;

	for (; len; len -= (size_t)n, at += (uint64_t)n, buf = (const char *)buf + n)
		if ((n = pwrite(fd, buf, len, (off_t)at)) <= 0)
			return false;
	return true;
}

/* Copies len bytes at from in in to at in out. */
static bool copy_range(int in, int out, uint64_t from, uint64_t at, uint64_t len)
{
	char buf[65536];
	ssize_t n;

	for (; len; len -= (uint64_t)n, from += (uint64_t)n, at += (uint64_t)n)
		if ((n = pread(in, buf, len < sizeof(buf) ? (size_t)len : sizeof(buf), (off_t)from)) <= 0 ||
		    !put(out, buf, (size_t)n, at))
			return false;
	return true;
}

/*
 * Where the part kept as it is ends: the first compressed section's
 * offset, past the headers and every segment's bytes; 0 where something
 * kept would overlap what is laid out again.
 */
static uint64_t kept_part(Elf *elf, const Elf64_Ehdr *eh, size_t nsec)
{
	uint64_t end = UINT64_MAX, top = eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize;
	Elf64_Shdr *sh;
	GElf_Phdr ph;
	size_t i;

	for (i = 1; i < nsec; i++)
		if ((sh = elf64_getshdr(elf_getscn(elf, i))) && (sh->sh_flags & SHF_COMPRESSED) && sh->sh_offset < end)
			end = sh->sh_offset;
	for (i = 0; i < eh->e_phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_filesz && ph.p_offset + ph.p_filesz > top)
			top = ph.p_offset + ph.p_filesz;
	for (i = 1; i < nsec; i++)
		if ((sh = elf64_getshdr(elf_getscn(elf, i))) && sh->sh_type != SHT_NOBITS && sh->sh_offset < end &&
		    sh->sh_offset + sh->sh_size > end)
			return 0;
	return top <= end && end != UINT64_MAX ? end : 0;
}

/* The sections laid out again, by their offset in the file (sh: the section headers, copied). */
static int by_offset(const void *a, const void *b, void *sh)
{
	const Elf64_Shdr *v = sh;
	uint64_t x = v[*(const size_t *)a].sh_offset, y = v[*(const size_t *)b].sh_offset;

	return x < y ? -1 : x > y;
}

/*
 * Feeds the compressed stream [from, from + len) of in through one of the
 * two inflaters, 64 KiB at a time, writing what comes out at at in out:
 * want bytes in all, the stream ending with the input (zstd's frames one
 * after another; zlib's one stream, nothing after it). libelf's
 * elf_compress() held each section inflated until the file was closed
 * (libc6-dbg's 10 MiB at once, at the peak of the report that makes the
 * copy).
 */
bool ms_debugcache_inflate(int in, uint64_t from, uint64_t len, uint32_t type, int out, uint64_t at, uint64_t want)
{
	unsigned char src[CHUNK], dst[CHUNK];
	z_stream z = { 0 };
	ZSTD_DStream *zs = NULL;
	ZSTD_inBuffer zi;
	ZSTD_outBuffer zo;
	uint64_t done = 0;
	size_t n, made, ret;
	bool end = false, ok = true;   /* end: zlib's stream ended, or zstd is between frames */

	if (type == ELFCOMPRESS_ZLIB ? inflateInit(&z) != Z_OK :
	    type != ELFCOMPRESS_ZSTD || !(zs = ZSTD_createDStream()))
		return false;
	while (ok && len) {
		n = len < CHUNK ? (size_t)len : CHUNK;
		if (pread(in, src, n, (off_t)from) != (ssize_t)n || (!zs && end))
			ok = false;              /* unreadable, or bytes after zlib's stream */
		from += n;
		len -= n;
		zi = (ZSTD_inBuffer){ src, n, 0 };
		z.next_in = src;
		z.avail_in = (uInt)n;
		while (ok) {
			if (zs) {
				zo = (ZSTD_outBuffer){ dst, CHUNK, 0 };
				ret = ZSTD_decompressStream(zs, &zo, &zi);
				ok = !ZSTD_isError(ret);
				end = !ret;
				made = zo.pos;
			} else {
				z.next_out = dst;
				z.avail_out = CHUNK;
				ret = (size_t)inflate(&z, Z_NO_FLUSH);
				end = (int)ret == Z_STREAM_END;
				/* Z_BUF_ERROR with no input left: the output had filled as the input ran out */
				ok = (int)ret == Z_OK || end || ((int)ret == Z_BUF_ERROR && !z.avail_in);
				ok = ok && !(end && z.avail_in);
				made = CHUNK - z.avail_out;
			}
			ok = ok && done + made <= want && put(out, dst, made, at + done);
			done += made;
			/*
			 * More may come out of what is in: input left (zstd's next
			 * frame too), or the output full, unless zstd says its frame
			 * is done and flushed (asked again, it would start the next).
			 */
			if (zs ? zi.pos == zi.size && (zo.pos < CHUNK || end) : end || z.avail_out)
				break;
		}
	}
	if (zs)
		ZSTD_freeDStream(zs);
	else
		inflateEnd(&z);
	return ok && end && done == want;
}

/*
 * Writes section i at *pos, inflated if it was compressed, and moves it
 * there in its header sh[i]; *pos then ends it.
 */
static bool place(int in, uint64_t in_size, Elf64_Shdr *sh, size_t i, int out, uint64_t *pos)
{
	uint64_t align, from = sh[i].sh_offset, size = sh[i].sh_size;
	bool inflated = sh[i].sh_flags & SHF_COMPRESSED;
	Elf64_Chdr ch;

	/* A compressed section: its header, then the stream; the header says what it inflates to. */
	if (inflated) {
		if (size < sizeof(ch) || from > in_size || size > in_size - from ||
		    pread(in, &ch, sizeof(ch), (off_t)from) != (ssize_t)sizeof(ch) ||
		    (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != ELFCOMPRESS_ZSTD) ||
		    (ch.ch_size > CHUNK && (ch.ch_size - CHUNK) / INFLATE_MAX > size - sizeof(ch)))
			return false;            /* past the file's end, or a bomb: DWARF inflates 3 to 10 times */
		sh[i].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		sh[i].sh_size = ch.ch_size;
		sh[i].sh_addralign = ch.ch_addralign;
	}
	align = sh[i].sh_addralign > 1 ? sh[i].sh_addralign : 1;
	if (align > ALIGN_MAX || (align & (align - 1)))
		return false;
	*pos = (*pos + align - 1) & ~(align - 1);
	sh[i].sh_offset = *pos;
	if (sh[i].sh_type == SHT_NOBITS)
		return true;
	if (inflated ? !ms_debugcache_inflate(in, from + sizeof(ch), size - sizeof(ch), ch.ch_type, out, *pos, ch.ch_size) :
		       !copy_range(in, out, from, *pos, size))
		return false;
	*pos += sh[i].sh_size;
	return true;
}

/* Lays out elf (read from in) again into out, as the top of the file says. */
static bool write_copy(Elf *elf, int in, int out)
{
	const Elf64_Ehdr *top = elf64_getehdr(elf);
	size_t nsec, i, n = 0, *idx = NULL;
	Elf64_Shdr *sh = NULL, *one;
	uint64_t end, pos;
	struct stat st;
	Elf64_Ehdr eh;
	bool ok = false;

	if (!top || fstat(in, &st))
		return false;
	eh = *top;
	if (elf_getshdrnum(elf, &nsec) || nsec < 2 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !(end = kept_part(elf, &eh, nsec)) || !copy_range(in, out, 0, 0, end))
		return false;
	sh = calloc(nsec, sizeof(*sh));
	idx = calloc(nsec, sizeof(*idx));
	for (i = 0; sh && idx && i < nsec; i++) {
		if (!(one = elf64_getshdr(elf_getscn(elf, i))))
			goto out;
		sh[i] = *one;
		if (i && sh[i].sh_offset >= end)
			idx[n++] = i;
	}
	if (!sh || !idx)
		goto out;
	qsort_r(idx, n, sizeof(*idx), by_offset, sh);
	for (i = 0, pos = end; i < n; i++)
		if (!place(in, (uint64_t)st.st_size, sh, idx[i], out, &pos))
			goto out;
	eh.e_shoff = (pos + 7) & ~(uint64_t)7;
	ok = put(out, sh, nsec * sizeof(*sh), eh.e_shoff) && put(out, &eh, sizeof(eh), 0);
out:
	free(sh);
	free(idx);
	return ok;
}

/*
 * Gives the unnamed file at fdpath the name path; one there (not whole, or
 * make_copy() would not be called; or whole, made meanwhile by another
 * process, which ours, whole too, replaces) is replaced.
 */
static void link_in(const char *fdpath, const char *path)
{
	if (!linkat(AT_FDCWD, fdpath, AT_FDCWD, path, AT_SYMLINK_FOLLOW) || errno != EEXIST)
		return;
	unlink(path);
	linkat(AT_FDCWD, fdpath, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/*
 * The copy written into a file with no name in path's folder, given
 * path's name once whole: a process killed as it writes (a report's
 * reader gone, Ctrl-C) leaves nothing behind. true where it was tried
 * so; false where the folder's file system has no unnamed files, or
 * /proc is not there to name one by: that is known before it is written,
 * not tried after.
 */
static bool make_unnamed(Elf *elf, int in, const char *path)
{
	char dir[4200], fdpath[64];
	const char *slash = strrchr(path, '/');
	struct stat named, own;
	int out;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if ((out = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600)) < 0)
		return false;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", out);
	if (stat(fdpath, &named) || fstat(out, &own) || named.st_dev != own.st_dev || named.st_ino != own.st_ino) {
		close(out);
		return false;
	}
	if (write_copy(elf, in, out))
		link_in(fdpath, path);
	close(out);
	return true;
}

/*
 * Writes the copy of in (whose libelf handle is elf) to path: unnamed
 * until whole (make_unnamed()), or where that cannot be, through a file
 * of its own renamed into place.
 */
static void make_copy(Elf *elf, int in, const char *path)
{
	char tmp[4200];
	int out;

	if (make_unnamed(elf, in, path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= sizeof(tmp))
		return;
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return;
	if (!write_copy(elf, in, out) || close(out) || rename(tmp, path))
		unlink(tmp);
	/* out is closed either way: close() frees it even where it reports an error */
}

/* The copy's path for build-id id in the cache's folder (made where make); false where there is none. */
bool ms_debugcache_copy_path(char *path, size_t len, const unsigned char *id, size_t id_len, bool make)
{
	size_t i, at;

	if (!id_len || id_len > 64 || !ms_cachedir_path("MAPSCOPE_DEBUG_CACHE", "debug", path, len - 2 * 64 - 8) ||
	    (make && !ms_cachedir_make(path)))
		return false;
	at = strlen(path);
	path[at++] = '/';
	for (i = 0; i < id_len; i++, at += 2)
		snprintf(path + at, 3, "%02x", id[i]);
	snprintf(path + at, 7, ".debug");
	return true;
}

/*
 * A copy for this process only, where the cache has none to give (it is
 * off, or its folder is not one to trust): written into a file with no
 * name in $TMPDIR or /tmp, gone when closed. Inflating is done either
 * way; here libdw maps what it reads instead of holding every section
 * inflated (10 MiB for libc6-dbg's libc, at the peak of a profile).
 */
static int scratch_copy(Elf *elf, int in, const unsigned char *id, size_t id_len)
{
	const char *dir = getenv("TMPDIR");
	int out = open(dir && dir[0] == '/' ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (out >= 0 && (!write_copy(elf, in, out) || !copy_whole(out, id, id_len))) {
		close(out);
		return -1;
	}
	return out;
}

/* ms_debugcache_swap(), *scratch set where the copy is one for this process only (scratch_copy()). */
static int swap(int fd, const unsigned char *id, size_t id_len, bool *scratch)
{
	char path[4200];
	Elf *elf;
	int copy = -1;

	*scratch = false;
	if (fd < 0 || !id_len)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && compressed(elf) && same_id(elf, id, id_len)) {
		if (ms_debugcache_copy_path(path, sizeof(path), id, id_len, true) &&
		    (copy = open_copy(path, id, id_len)) < 0) {
			make_copy(elf, fd, path);
			copy = open_copy(path, id, id_len);
		}
		if (copy < 0 && (copy = scratch_copy(elf, fd, id, id_len)) >= 0)
			*scratch = true;
	}
	elf_end(elf);
	if (copy < 0)
		return fd;
	close(fd);
	return copy;
}

int ms_debugcache_swap(int fd, const unsigned char *id, size_t id_len)
{
	bool scratch;

	return swap(fd, id, id_len, &scratch);
}

bool ms_debug_build_id_path(char *path, size_t len, const unsigned char *id, size_t id_len)
{
	size_t i, at;

	if (!id_len || id_len > 64 || len < 32 + 2 * 64)
		return false;
	at = (size_t)snprintf(path, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (i = 1; i < id_len; i++, at += 2)
		snprintf(path + at, 3, "%02x", id[i]);
	snprintf(path + at, 7, ".debug");
	return true;
}

int ms_debugcache_find(const unsigned char *id, size_t id_len, char **name)
{
	char path[4200], sys[4200];
	bool cached = ms_debugcache_copy_path(path, sizeof(path), id, id_len, false), scratch = false;
	int fd = cached ? open_copy(path, id, id_len) : -1, orig;

	*name = NULL;
	if (fd < 0) {
		if (!ms_debug_build_id_path(sys, sizeof(sys), id, id_len) || (orig = ms_elf_open(sys)) < 0)
			return -1;
		if ((fd = swap(orig, id, id_len, &scratch)) == orig) {
			close(fd);                    /* no copy: libdwfl finds it its own way */
			return -1;
		}
		if (fd < 0)
			return -1;
	}
	/* A copy of this process only is named as the debug file: libdwfl finds a dwz file beside that. */
	if (!(*name = strdup(scratch ? sys : path))) {
		close(fd);
		return -1;
	}
	return fd;
}
