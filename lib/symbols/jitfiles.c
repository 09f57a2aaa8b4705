/*
 * The files a JIT writes for perf, read into tables (jit.c): perf maps
 * (text: "START SIZE name", START and SIZE in hex with or without 0x) and
 * jitdumps (binary: tools/perf/Documentation/jitdump-specification.txt;
 * only CODE_LOAD and CODE_MOVE name code). Both paths come from the
 * recording or from /tmp, which anyone can write: only regular files are
 * read (elf.c's ms_file_open_regular), never blocking, and every size in a jitdump is checked before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "symbols/jit.h"

#define JITDUMP_MAGIC 0x4A695444u     /* "JiTD", in the writer's byte order */
#define JITDUMP_ARCH_TIMESTAMP 1ull   /* header flag: the CPU's counter, not a clock of ours */
#define MAX_JIT_NAME 4096

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1 };

struct jitdump_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jr_prefix {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct jr_code_load {                 /* then the name, NUL-terminated, then the code */
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

struct jr_code_move {
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

/* A regular file opened as elf.c opens binaries; anything else is refused as perf's rule words it (EPERM). */
static int open_regular(const char *path, struct stat *st)
{
	int fd = ms_file_open_regular(path, st);

	return fd == -ENOEXEC ? -EPERM : fd;
}

/* One line of a perf map into t; false where it is not "START SIZE name". */
static bool perfmap_line(struct jit_table *t, char *line, int *err)
{
	char *p = line, *e;
	uint64_t start, size;
	size_t n;

	errno = 0;
	start = strtoull(p, &e, 16);
	if (e == p || errno || (*e != ' ' && *e != '\t'))
		return false;
	size = strtoull(p = e, &e, 16);
	if (e == p || errno || (*e != ' ' && *e != '\t') || !size)
		return false;
	for (p = e; *p == ' ' || *p == '\t'; p++)
		;
	n = strcspn(p, "\r\n");
	if (!n)
		return false;
	p[n] = '\0';
	*err = ms_jit_add(t, start, size, 0, 0, p);
	return true;
}

struct jit_table *ms_perfmap_read(const char *path)
{
	struct jit_table *t = NULL;
	char *line = NULL;
	size_t cap = 0;
	struct stat st;
	FILE *f = NULL;
	int fd = open_regular(path, &st), err = 0;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (st.st_uid && st.st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	if (!(f = fdopen(fd, "r")) || !(t = ms_jit_new(path))) {
		err = ENOMEM;
		goto out;
	}
	while (!err && getline(&line, &cap, f) > 0)
		perfmap_line(t, line, &err);
	if (err) {
		ms_jit_free(t);
		t = NULL;
		err = -err;
	} else
		ms_jit_sort(t);
out:
	free(line);
	if (f)
		fclose(f);
	else
		close(fd);
	errno = err;
	return t;
}

bool ms_jitdump_path(const char *path)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4))
		return false;
	for (p = base + 4; *p >= '0' && *p <= '9'; p++)
		;
	return p > base + 4 && !strcmp(p, ".dump");
}

/* A CODE_LOAD record of rec_len bytes after its prefix, at off. 0, or -EIO where it does not fit, -ENOMEM. */
static int read_load(int fd, struct jit_table *t, uint64_t off, uint64_t rec_len, uint64_t at)
{
	char buf[sizeof(struct jr_code_load) + MAX_JIT_NAME + 1];
	struct jr_code_load l;
	size_t want = rec_len < sizeof(buf) - 1 ? (size_t)rec_len : sizeof(buf) - 1;
	ssize_t got;

	if (rec_len < sizeof(l) + 1 || (got = pread(fd, buf, want, (off_t)off)) != (ssize_t)want)
		return -EIO;
	buf[want] = '\0';                 /* a name with no end within the record is cut there */
	memcpy(&l, buf, sizeof(l));
	if (!l.code_size)
		return 0;
	return ms_jit_add(t, l.code_addr, l.code_size, at, l.code_index, buf + sizeof(l));
}

static int read_move(int fd, struct jit_table *t, uint64_t off, uint64_t rec_len, uint64_t at)
{
	struct jr_code_move m;
	int err;

	if (rec_len < sizeof(m) || pread(fd, &m, sizeof(m), (off_t)off) != (ssize_t)sizeof(m))
		return -EIO;
	err = ms_jit_move(t, m.code_index, m.old_code_addr, m.new_code_addr, m.code_size, at);
	return err == -ENOENT ? 0 : err;  /* code it never loaded: nothing to name */
}

/* The records after the header, until the end or the first that does not fit. 0 or -ENOMEM. */
static int read_records(int fd, struct jit_table *t, uint64_t off, uint64_t size, bool timed)
{
	struct jr_prefix pr;
	uint64_t at;
	int err = 0;

	while (!err && size - off >= sizeof(pr)) {
		if (pread(fd, &pr, sizeof(pr), (off_t)off) != (ssize_t)sizeof(pr) || pr.total_size < sizeof(pr) ||
		    pr.total_size > size - off)
			break;
		at = timed ? pr.timestamp : 0;
		if (pr.id == JIT_CODE_LOAD)
			err = read_load(fd, t, off + sizeof(pr), pr.total_size - sizeof(pr), at);
		else if (pr.id == JIT_CODE_MOVE)
			err = read_move(fd, t, off + sizeof(pr), pr.total_size - sizeof(pr), at);
		if (err == -EIO)
			return 0;
		off += pr.total_size;
	}
	return err;
}

struct jit_table *ms_jitdump_read(const char *path, uint32_t pid, bool timed)
{
	struct jitdump_header h;
	struct jit_table *t = NULL;
	struct stat st;
	int fd = open_regular(path, &st), err = 0;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != JITDUMP_MAGIC || h.pid != pid ||
	    h.total_size < sizeof(h) || h.total_size > (uint64_t)st.st_size)
		err = ENOEXEC;
	else if (!(t = ms_jit_new(path)))
		err = ENOMEM;
	else if ((err = -read_records(fd, t, h.total_size, (uint64_t)st.st_size,
				      timed && !(h.flags & JITDUMP_ARCH_TIMESTAMP)))) {
		ms_jit_free(t);
		t = NULL;
	} else
		ms_jit_sort(t);
	close(fd);
	errno = err;
	return t;
}
