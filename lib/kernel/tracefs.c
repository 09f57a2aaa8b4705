/*
 * perf prints a tracepoint's fields from the format files stored in the
 * recording (TRACING_DATA), so we copy them from tracefs when we record.
 * Layout, as perf's trace-event-read.c reads it: magic, "tracing", version
 * string, endianness, sizeof(long), page size, header_page, header_event,
 * ftrace formats, event formats by system, kallsyms, printk formats, saved
 * cmdlines.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mount.h>
#include <sys/statvfs.h>
#include <tracefs.h>

#include "kernel/tracefs.h"
#include "util/log.h"
#include "util/tracedata.h"

const char *ms_tracefs_dir(void)
{
	const char *dir = tracefs_tracing_dir();

	if (!dir && !errno)
		errno = ENOENT;
	return dir;
}

int ms_kernel_read_line(const char *path, char *out, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

int ms_tracefs_remount(const char *dir, unsigned int gid, unsigned int mode)
{
	static const struct { unsigned long st, ms; } keep[] = {
		{ ST_RDONLY, MS_RDONLY }, { ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV },
		{ ST_NOEXEC, MS_NOEXEC }, { ST_NOATIME, MS_NOATIME }, { ST_RELATIME, MS_RELATIME },
	};
	unsigned long flags = MS_REMOUNT;
	struct statvfs sv;
	char data[64];
	size_t i;

	if (statvfs(dir, &sv))
		return -errno;
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (sv.f_flag & keep[i].st)
			flags |= keep[i].ms;
	snprintf(data, sizeof(data), "gid=%u,mode=%04o", gid, mode & 07777);
	return mount("nodev", dir, "tracefs", flags, data) ? -errno : 0;
}

int ms_kernel_write(const char *path, const char *text, int how)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | how | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

/* Reads a whole (pseudo-)file; tracefs files report size 0, so read to EOF. */
static int read_file(const char *path, struct ms_buf *out)
{
	char chunk[4096];
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		ms_debug("cannot open '%s': %s", path, strerror(errno));
		return err;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		ms_buf_append(out, chunk, (size_t)n);
	}
	close(fd);
	return err ? err : ms_buf_error(out);
}

int ms_tracefs_event_id(const char *dir, const char *sys, const char *name,
			uint64_t *id)
{
	char path[4096], *end;
	struct ms_buf b;
	int err;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, sys, name);
	ms_buf_init(&b);
	err = read_file(path, &b);
	if (!err) {
		ms_buf_append(&b, "", 1);
		errno = 0;
		*id = strtoull((char *)b.data, &end, 10);
		if (errno || end == (char *)b.data)
			err = -EINVAL;
	}
	ms_buf_release(&b);
	return err;
}

/* Appends a u64 size then the file's contents. */
static int append_sized_file(const char *path, struct ms_buf *out)
{
	struct ms_buf f;
	int err;

	ms_buf_init(&f);
	err = read_file(path, &f);
	if (!err) {
		ms_buf_u64(out, f.len);
		ms_buf_append(out, f.data, f.len);
	}
	ms_buf_release(&f);
	return err;
}

/* Splits "sys/name" into its parts; 0 or -EINVAL. */
static int split_name(const char *full, char *sys, size_t syslen, const char **name)
{
	const char *slash = strchr(full, '/');

	if (!slash || (size_t)(slash - full) >= syslen || !slash[1])
		return -EINVAL;
	memcpy(sys, full, (size_t)(slash - full));
	sys[slash - full] = '\0';
	*name = slash + 1;
	return 0;
}

static int append_systems(const char *dir, const char *const *names, size_t n,
			  struct ms_buf *out)
{
	char sys[256], other[256], path[4096];
	uint32_t nr_sys = 0, count;
	unsigned char *done;
	const char *name;
	size_t i, j;
	int err = 0;

	done = calloc(n ? n : 1, 1);
	if (!done)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (split_name(names[i], sys, sizeof(sys), &name))
			goto invalid;
	/* The number of systems comes first: count distinct prefixes. */
	for (i = 0; i < n; i++) {
		split_name(names[i], sys, sizeof(sys), &name);
		for (j = 0; j < i; j++) {
			split_name(names[j], other, sizeof(other), &name);
			if (!strcmp(sys, other))
				break;
		}
		nr_sys += j == i;
	}
	ms_buf_u32(out, nr_sys);
	for (i = 0; i < n && !err; i++) {
		if (done[i])
			continue;
		split_name(names[i], sys, sizeof(sys), &name);
		ms_buf_cstr(out, sys);
		count = 0;
		for (j = i; j < n; j++) {
			split_name(names[j], other, sizeof(other), &name);
			count += !strcmp(sys, other);
		}
		ms_buf_u32(out, count);
		for (j = i; j < n && !err; j++) {
			split_name(names[j], other, sizeof(other), &name);
			if (strcmp(sys, other))
				continue;
			done[j] = 1;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sys, name);
			err = append_sized_file(path, out);
			if (err)
				ms_err("cannot read tracepoint format '%s': %s", path, strerror(-err));
		}
	}
	free(done);
	return err;
invalid:
	free(done);
	return -EINVAL;
}

int ms_tracefs_tracing_data(const char *dir, const char *const *names, size_t n,
			    struct ms_buf *out)
{
	static const unsigned char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	char path[4096];
	struct ms_buf f;
	int err;

	ms_buf_append(out, magic, sizeof(magic));
	ms_buf_cstr(out, "0.6");
	ms_buf_append(out, &(unsigned char){ __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ }, 1);
	ms_buf_append(out, &(unsigned char){ sizeof(long) }, 1);
	ms_buf_u32(out, (uint32_t)sysconf(_SC_PAGESIZE));

	ms_buf_append(out, "header_page", 12);
	snprintf(path, sizeof(path), "%s/events/header_page", dir);
	if ((err = append_sized_file(path, out)))
		return err;
	ms_buf_append(out, "header_event", 13);
	snprintf(path, sizeof(path), "%s/events/header_event", dir);
	if ((err = append_sized_file(path, out)))
		return err;

	ms_buf_u32(out, 0);                  /* no ftrace formats */
	if ((err = append_systems(dir, names, n, out)))
		return err;
	ms_buf_u32(out, 0);                  /* no kallsyms: perf resolves those itself */

	/* printk formats are optional; an unreadable file is an empty one. */
	ms_buf_init(&f);
	snprintf(path, sizeof(path), "%s/printk_formats", dir);
	if (read_file(path, &f))
		f.len = 0;
	ms_buf_u32(out, (uint32_t)f.len);
	ms_buf_append(out, f.data, f.len);
	ms_buf_release(&f);

	ms_buf_u64(out, 0);                  /* no saved cmdlines: COMM records name tasks */
	return ms_buf_error(out);
}

/* Where the count of systems lies in the blob [p, end), or NULL where it does not parse that far. */
static const unsigned char *systems_at(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *z;
	uint32_t n, i;
	uint64_t size;

	if (end - p < 10 || memcmp(p, "\027\010\104tracing", 10))
		return NULL;
	if (!(z = memchr(p + 10, 0, (size_t)(end - p - 10))) || end - (z + 1) < 6)
		return NULL;                 /* the version string, then endianness, long size, page size */
	p = z + 7;
	if (!(p = ms_tracedata_skip_section(p, end, "header_page", 12)) || !(p = ms_tracedata_skip_section(p, end, "header_event", 13)) ||
	    end - p < 4)
		return NULL;
	memcpy(&n, p, 4);                    /* ftrace formats */
	for (p += 4, i = 0; i < n; i++) {
		if (end - p < 8)
			return NULL;
		memcpy(&size, p, 8);
		if ((uint64_t)(end - p - 8) < size)
			return NULL;
		p += 8 + size;
	}
	return end - p < 4 ? NULL : p;
}

int ms_tracefs_add_system(const void *td, size_t len, const char *sys, const void *fmt, size_t fmt_len,
			  struct ms_buf *out)
{
	const unsigned char *p = td, *at = systems_at(p, p + len);
	uint32_t nsys;

	if (!at)
		return -EBADMSG;
	memcpy(&nsys, at, 4);
	ms_buf_append(out, p, (size_t)(at - p));
	ms_buf_u32(out, nsys + 1);
	ms_buf_cstr(out, sys);               /* first: what follows the systems is copied as it is */
	ms_buf_u32(out, 1);
	ms_buf_u64(out, fmt_len);
	ms_buf_append(out, fmt, fmt_len);
	ms_buf_append(out, at + 4, (size_t)(p + len - (at + 4)));
	return ms_buf_error(out);
}
