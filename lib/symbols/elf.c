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
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/openat2.h>

#include <elfutils/libdwelf.h>

#include "symbols/internal.h"

#include "util/log.h"

/* Places a recording may name but no binary lives: reading them could block, or read what it must not. */
static bool refused_name(const char *path)
{
	static const char *const dirs[] = { "/proc", "/sys", "/dev" };
	size_t i, n;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		n = strlen(dirs[i]);
		if (!strncmp(path, dirs[i], n) && (path[n] == '/' || !path[n]))
			return true;
	}
	return false;
}

/*
 * Whether path lies in one of those places, as written or once resolved:
 * "//proc/1/environ", "/x/../proc" and a link to a file of /proc all name
 * one, and none may be opened, even to be refused after. (A magic link of
 * /proc, as in "//proc/self/exe", resolves to where it leads: open_path_only()
 * refuses to pass through one.)
 */
static bool refused_place(const char *path)
{
	char *real;
	bool refused;

	if (refused_name(path))
		return true;
	if (!(real = realpath(path, NULL)))
		return false;                /* nothing there: open() fails alike */
	refused = refused_name(real);
	free(real);
	return refused;
}

/* The file systems of /proc and /sys (tracing's and debugfs among them), wherever they are mounted. */
static bool refused_fs(const struct statfs *fs)
{
	return fs->f_type == PROC_SUPER_MAGIC || fs->f_type == SYSFS_MAGIC || fs->f_type == TRACEFS_MAGIC ||
	       fs->f_type == DEBUGFS_MAGIC;
}

/*
 * File systems that hold binaries and nothing of the kernel's: a regular
 * file there is read with no realpath() walk. Any other (tmpfs, which
 * /dev/shm is too; cgroup's, pstore, efivarfs and the rest under /sys) is
 * walked, so that a name resolving under /proc, /sys or /dev is refused.
 */
static bool binaries_fs(const struct statfs *fs)
{
	static const unsigned long kinds[] = { EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC,
					       OVERLAYFS_SUPER_MAGIC, SQUASHFS_MAGIC, EROFS_SUPER_MAGIC_V1,
					       F2FS_SUPER_MAGIC, NFS_SUPER_MAGIC };
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((unsigned long)fs->f_type == kinds[i])
			return true;
	return false;
}

/* Whether fd is the regular file stat found at its path, and outside /proc and /sys. */
static int check_regular_fd(int fd, const struct stat *before, struct stat *st)
{
	struct statfs fs;

	if (fstat(fd, st))
		return -errno;
	if (!S_ISREG(st->st_mode) || st->st_dev != before->st_dev || st->st_ino != before->st_ino)
		return -ENOEXEC;             /* replaced between stat and open */
	if (!fstatfs(fd, &fs) && refused_fs(&fs))
		return -EPERM;               /* a link or a bind mount changed between the checks and open() */
	return 0;
}

/*
 * Opens path for reading, never through a magic link of /proc (its
 * /proc/PID/root, exe or fd/N: ELOOP) where the kernel has openat2;
 * where it has not, or a seccomp filter refuses it, as open() does.
 */
static int open_file(const char *path)
{
	struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
				.resolve = RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd >= 0 ? (int)fd : errno == ELOOP ? -EPERM : -errno;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd >= 0 ? (int)fd : -errno;
}

/*
 * path resolved to a descriptor that opens nothing (O_PATH: no device's
 * or FIFO's open is run), never through a magic link of /proc where the
 * kernel has openat2.
 */
static int open_path_only(const char *path)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd >= 0 ? (int)fd : errno == ELOOP ? -EPERM : -errno;
	fd = open(path, O_PATH | O_CLOEXEC);
	return fd >= 0 ? (int)fd : -errno;
}

/*
 * at (O_PATH, the regular file st) opened to be read: through
 * /proc/self/fd, the very file at holds; where /proc is not there, path
 * again, checked to be that file.
 */
static int reopen(int at, const char *path, const struct stat *st)
{
	char self[64];
	struct stat now;
	int fd, err;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	if ((fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : -errno;
	if ((fd = open_file(path)) < 0)
		return fd;
	if ((err = check_regular_fd(fd, st, &now))) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * A path comes from a recording, which anyone may have made: a FIFO there
 * would block open() and read() for ever, a device's open may act (a
 * watchdog's starts it), a terminal opened without O_NOCTTY could become
 * ours, and report run as root would read any file it names. So: refuse
 * /proc, /sys and /dev by name, as written and as resolved; resolve the
 * path to a descriptor that opens nothing (O_PATH), never through a magic
 * link of /proc; open nothing but a regular file, and none on proc's or
 * sysfs's file systems wherever they are mounted; then open that very
 * file (/proc/self/fd), so that a path swapped for a device in between is
 * never opened. A regular file on a file system of binaries
 * (binaries_fs()) lies in none of those places, so its name is not
 * resolved again: realpath() walked every binary's path a link at a time
 * (826 readlink calls in a hugepages of chromium's page load).
 */
int ms_file_open_regular(const char *path, struct stat *st)
{
	struct statfs fs;
	int at, fd;

	if (refused_name(path))
		return -EPERM;
	if ((at = open_path_only(path)) < 0)  /* nothing there (most debug-file probes): no realpath() walk */
		return at;
	if (fstat(at, st))
		fd = -errno;
	else if (!S_ISREG(st->st_mode))
		fd = refused_place(path) ? -EPERM : -ENOEXEC;
	else if (fstatfs(at, &fs) ? refused_place(path) :
		 refused_fs(&fs) || (!binaries_fs(&fs) && refused_place(path)))
		fd = -EPERM;          /* proc's and sysfs's file systems wherever mounted, unopened */
	else
		fd = reopen(at, path, st);
	close(at);
	return fd;
}

int ms_elf_open_head(const char *path, unsigned char *head, size_t cap, size_t *len)
{
	struct stat st;
	int fd = ms_file_open_regular(path, &st);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = pread(fd, head, cap, 0);
	if (n < SELFMAG || memcmp(head, ELFMAG, SELFMAG)) {
		close(fd);
		return -ENOEXEC;
	}
	*len = (size_t)n;
	return fd;
}

/* A regular file a recording names, opened only if it starts with ELF's magic, before libelf reads anything. */
int ms_elf_open(const char *path)
{
	unsigned char magic[SELFMAG];
	size_t len;

	return ms_elf_open_head(path, magic, sizeof(magic), &len);
}

/*
 * Symbols and unwinding each mapped a binary's file for themselves
 * (libdwfl's dwfl_report_elf() and unwind.c's elf_begin()), and the
 * pages both touched (headers, section headers, notes, and the 64 KiB a
 * touched page maps around it here) were resident twice: 8 MB of the
 * peak of a profile of a chromium recording, ~120 binaries. One mapping,
 * in the mode libdwfl's own open uses, so that the symbols are read as
 * they were.
 */
#define BIN_ELF_CMD ELF_C_READ_MMAP_PRIVATE

/*
 * Descriptors of binaries' files held in all the process, from their
 * segments on (ms_bin_read_segments()) or for their names and unwinding
 * (ms_bin_elf()). Past HELD_MAX, a binary's segments are read from a
 * file opened and closed for them, as its names may never need it. The
 * files opened ahead and not taken yet (preopen.c, at most 128) are not
 * counted here, and none is opened ahead past HELD_MAX.
 */
#define HELD_MAX 512
static unsigned held;

bool ms_bin_held_room(void)
{
	return __atomic_load_n(&held, __ATOMIC_RELAXED) < HELD_MAX;
}

static int hold_fd(int fd)
{
	if (fd >= 0)
		__atomic_add_fetch(&held, 1, __ATOMIC_RELAXED);
	return fd;
}

static void close_fd(int fd)
{
	close(fd);
	__atomic_sub_fetch(&held, 1, __ATOMIC_RELAXED);
}

/*
 * Whether libelf writes into elf's mapping as it is read: it inflates a
 * compressed section (SHF_COMPRESSED, or GNU's .zdebug_*, as -gz and Go's
 * linker write them) by rewriting its section header there, and libdwfl
 * relocates an ET_REL file's sections there. Asked as the file is opened:
 * once inflated, the headers say uncompressed.
 */
static bool written_in_place(Elf *elf)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (!gelf_getehdr(elf, &eh) || eh.e_type == ET_REL || elf_getshdrstrndx(elf, &shstrndx))
		return true;
	while ((scn = elf_nextscn(elf, scn)))
		if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED) ||
		    (sh.sh_type == SHT_PROGBITS && !(sh.sh_flags & SHF_ALLOC) &&
		     (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strncmp(name, ".zdebug", 7)))
			return true;
	return false;
}

int ms_bin_elf(struct bin *b, Elf **elf)
{
	int fd = -1;

	if (!b->elf_state) {
		if (b->image) {
			b->elf = elf_memory((char *)b->image, b->image_size);
		} else {
			fd = b->seg_fd ? b->seg_fd - 1 : hold_fd(ms_elf_open(b->path));
			b->seg_fd = 0;
			if (fd < 0)
				return b->elf_state = fd;
			b->elf = elf_begin(fd, b->elf_read ? ELF_C_READ : BIN_ELF_CMD, NULL);
		}
		if (!b->elf || elf_kind(b->elf) != ELF_K_ELF) {
			elf_end(b->elf);
			b->elf = NULL;
			if (fd >= 0)
				close_fd(fd);
			return b->elf_state = -ENOEXEC;
		}
		b->elf_fd = fd;
		b->elf_state = 1;
		b->elf_written = !b->elf_read && written_in_place(b->elf);
	}
	*elf = b->elf;
	return b->elf_state > 0 ? 0 : b->elf_state;
}

/* b's PT_LOAD segments from elf: state 1, or -1 where it has none. */
static void take_segments(struct bin *b, Elf *elf)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return;
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
	if (b->nr_segs)
		b->state = 1;
}

/*
 * The file's head, as libelf reads a file in memory, where it holds the
 * ELF header and all the program headers; NULL where it does not (libelf
 * would read past it), and the file itself is read.
 */
static Elf *head_elf(unsigned char *head, size_t len)
{
	Elf *elf = elf_memory((char *)head, len);
	GElf_Ehdr eh;

	if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) && eh.e_phnum != PN_XNUM &&
	    eh.e_phoff <= len && (uint64_t)eh.e_phnum * eh.e_phentsize <= len - eh.e_phoff)
		return elf;
	elf_end(elf);
	return NULL;
}

/*
 * Reads the PT_LOAD segments; quietly unusable for files that are not
 * ELF, or not regular files. The descriptor they were read from is kept
 * for ms_bin_elf(): names and unwinding opened the file again, each open
 * a stat, a realpath() walk (a readlink a component), openat2, fstat,
 * fstatfs and a read of the magic (1,600 system calls in the chromium
 * page load's report). Only the descriptor: a command that never names
 * the binary maps nothing of it (but a file opened ahead, preopen.h,
 * comes with its ELF made, mapped). The program headers come from the read
 * of the magic where they lie in the first 4 KiB, as they do in nearly
 * every binary: libelf's own open of the file cost an fcntl, an fstat and
 * two or three reads more.
 */
void ms_bin_read_segments(struct bin *b)
{
	unsigned char head[MS_ELF_HEAD];
	size_t len = 0;
	Elf *elf;
	int fd;

	b->state = -1;
	if (b->image) {                      /* another's mapping: read once, here and for the symbols */
		if (!ms_bin_elf(b, &elf))
			take_segments(b, elf);
		return;
	}
	fd = ms_elf_open_head(b->path, head, sizeof(head), &len);
	ms_bin_segments_from(b, fd, head, len, NULL, false);
}

void ms_bin_segments_from(struct bin *b, int fd, unsigned char *head, size_t len, Elf *made, bool written)
{
	const bool keep = ms_bin_held_room();
	Elf *elf = made;

	b->state = -1;
	if (fd == -ENOEXEC || fd == -EPERM)
		return;
	if (fd < 0) {
		b->state = -2;
		b->open_errno = -fd;
		return;
	}
	if (elf || (elf = head_elf(head, len)) ||
	    ((elf = elf_begin(fd, ELF_C_READ, NULL)) && elf_kind(elf) == ELF_K_ELF))
		take_segments(b, elf);
	if (elf != made)
		elf_end(elf);
	if (keep && b->state == 1 && !b->elf_state && !b->seg_fd) {
		if (!made) {
			b->seg_fd = hold_fd(fd) + 1;
			return;
		}
		b->elf = made;               /* as ms_bin_elf() would make it */
		b->elf_fd = hold_fd(fd);
		b->elf_state = 1;
		b->elf_written = written;
		return;
	}
	elf_end(made);
	close(fd);
}

Elf *ms_bin_elf_ahead(int fd, bool *written)
{
	Elf *elf = elf_begin(fd, BIN_ELF_CMD, NULL);

	if (elf && elf_kind(elf) == ELF_K_ELF) {
		*written = written_in_place(elf);
		return elf;
	}
	elf_end(elf);
	return NULL;
}

Elf *ms_bin_elf_ref(Elf *elf)
{
	/* ELF_C_READ is taken over a descriptor of any reading mode: a reference is the descriptor, counted once more. */
	return elf ? elf_begin(-1, ELF_C_READ, elf) : NULL;
}

void ms_bin_elf_release(struct bin *b)
{
	if (b->elf_state > 0) {
		elf_end(b->elf);
		if (b->elf_fd >= 0)
			close_fd(b->elf_fd);
	}
	if (b->seg_fd)
		close_fd(b->seg_fd - 1);
	b->seg_fd = 0;
	b->elf = NULL;
	b->elf_state = 0;
}

MS_EXPORT int ms_elf_build_id(const char *path, unsigned char *id, size_t cap)
{
	const void *bits;
	ssize_t n = -ENOENT;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = ms_elf_open(path);
	if (fd < 0)
		return fd;
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
	fd = ms_elf_open(path);
	if (fd < 0)
		return fd;
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
