/*
 * /proc/PID/smaps, per VMA: a header line "start-end perms offset dev
 * inode path", then "Key:   N kB" lines. Only the sizes that say how much
 * of a VMA is resident and was touched are read; the rest is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/smaps.h"

/* The hex number at *p (up to end), *p moved past it; false where there is none. */
static bool hex_at(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	int d;

	for (*v = 0; q < end; q++) {
		d = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;
		if (d < 0 || *v >> 60)
			break;
		*v = *v << 4 | (uint64_t)d;
	}
	if (q == *p)
		return false;
	*p = q;
	return true;
}

/* A VMA's header line: "start-end ..."; false where line is not one. */
static bool header_line(const char *p, const char *end, uint64_t *start, uint64_t *stop)
{
	if (!hex_at(&p, end, start) || p == end || *p != '-')
		return false;
	p++;
	return hex_at(&p, end, stop) && p < end && *p == ' ' && *stop > *start;
}

/* The kB of a "Key:   N kB" line, in bytes, where line starts with key; false otherwise. */
static bool size_line(const char *p, const char *end, const char *key, uint64_t *bytes)
{
	size_t k = strlen(key);
	uint64_t v = 0;
	bool any = false;

	if ((size_t)(end - p) < k || memcmp(p, key, k))
		return false;
	for (p += k; p < end && *p == ' '; p++)
		;
	for (; p < end && *p >= '0' && *p <= '9' && v < (1ULL << 50); p++, any = true)
		v = v * 10 + (uint64_t)(*p - '0');
	if (any)
		*bytes = v << 10;
	return any;
}

int ms_smaps_parse(const char *text, size_t len, ms_smaps_fn fn, void *ctx)
{
	const char *p = text, *end = text + len, *nl;
	struct ms_smaps_vma v = { 0 };
	bool open = false;
	uint64_t a, b;
	int err;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (header_line(p, nl, &a, &b)) {
			if (open && (err = fn(&v, ctx)))
				return err;
			v = (struct ms_smaps_vma){ .start = a, .end = b };
			open = true;
			continue;
		}
		if (!open || size_line(p, nl, "Rss:", &v.rss) || size_line(p, nl, "Referenced:", &v.referenced) ||
		    size_line(p, nl, "Anonymous:", &v.anon))
			continue;
		size_line(p, nl, "AnonHugePages:", &v.anon_huge);
	}
	return open ? fn(&v, ctx) : 0;
}

/* The whole of path into buf. 0 or a negative errno. */
static int read_whole(const char *path, struct ms_buf *buf)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf->len = 0;
	for (;;) {
		if (buf->cap - buf->len < 65536) {
			ms_buf_zero(buf, 65536);         /* room to read into */
			if ((err = ms_buf_error(buf)))
				break;
			buf->len -= 65536;
		}
		n = read(fd, buf->data + buf->len, buf->cap - buf->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		buf->len += (size_t)n;
	}
	close(fd);
	return err;
}

int ms_smaps_read(const char *proc, pid_t pid, struct ms_buf *buf, ms_smaps_fn fn, void *ctx)
{
	char path[64];
	int err;

	snprintf(path, sizeof(path), "%s/%d/smaps", proc, (int)pid);
	if ((err = read_whole(path, buf)))
		return err;
	return ms_smaps_parse((const char *)buf->data, buf->len, fn, ctx);
}

int ms_smaps_clear_refs(const char *proc, pid_t pid, bool flush_tlb)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%d/clear_refs", proc, (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		err = -errno;
	/* "4" clears soft-dirty bits, which this kernel lacks, and flushes the TLB of the process's mm. */
	else if (flush_tlb && write(fd, "4", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

bool ms_smaps_vmflags_soft_dirty(const char *text, size_t len, uint64_t addr)
{
	const char *p = text, *end = text + len, *nl, *flags;
	bool in = false;

	for (; p < end; p = nl + 1) {
		unsigned long long lo, hi;

		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if (sscanf(p, "%llx-%llx ", &lo, &hi) == 2 && memchr(p, ' ', (size_t)(nl - p)))
			in = lo <= addr && addr < hi;
		else if (in && (size_t)(nl - p) > 8 && !memcmp(p, "VmFlags:", 8)) {
			for (flags = p + 8; flags + 2 <= nl; flags++)
				if (flags[-1] == ' ' && flags[0] == 's' && flags[1] == 'd' &&
				    (flags + 2 == nl || flags[2] == ' '))
					return true;
			return false;
		}
		if (nl == end)
			break;
	}
	return false;
}

bool ms_smaps_kernel_has_soft_dirty(void)
{
	struct ms_buf buf;
	void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool has = true;            /* unknown: say yes, so nobody's soft-dirty bits are cleared */

	if (page == MAP_FAILED)
		return true;
	ms_buf_init(&buf);
	/* A fresh mapping always has VM_SOFTDIRTY where the kernel tracks it. */
	if (!read_whole("/proc/self/smaps", &buf))
		has = ms_smaps_vmflags_soft_dirty((const char *)buf.data, buf.len, (uint64_t)(uintptr_t)page);
	ms_buf_release(&buf);
	munmap(page, 4096);
	return has;
}
