/*
 * mapscope:user_string: a string a syscall's entry pointed to, read by
 * record from the caller and written after the entry (kernel/ustring.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kernel/tpcommon.h"
#include "kernel/ustring.h"

/* The tracepoint's data: its header, which string (1 or 2), and the string (__data_loc: offset | length << 16). */
static const char format_fields[] =
	MS_TP_COMMON_FORMAT
	"\n"
	"\tfield:unsigned int arg;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] str;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"arg=%u str=%s\", REC->arg, __get_str(str)\n";

/* The sample's fixed part: IDENTIFIER, IP, TID, TIME, ADDR, then RAW (as vma_referenced's). */
struct head {
	MS_TP_SAMPLE_HEAD;
	MS_TP_COMMON_FIELDS;
	uint32_t arg, loc;
} __attribute__((packed));

void ms_ustring_format(uint16_t tp_id, struct ms_buf *out)
{
	ms_tp_format(MS_USTRING_EVENT, tp_id, format_fields, sizeof(format_fields) - 1, out);
}

size_t ms_ustring_encode(uint16_t tp_id, uint32_t pid, uint32_t tid, uint64_t time, uint32_t arg,
			 const char *str, void *out, size_t cap)
{
	size_t n = strlen(str) + 1, raw = 16 + n, size = offsetof(struct head, common_type) + raw;
	struct head h;

	/* The sample ends on 8 bytes: the raw data is padded (raw_size counts the padding). */
	size = (size + 7) & ~(size_t)7;
	raw = size - offsetof(struct head, common_type);
	if (n > 0xffff || size > cap || size > 0xffff)
		return 0;
	memset(&h, 0, sizeof(h));
	h.header = (struct perf_event_header){ .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
					       .size = (uint16_t)size };
	h.identifier = MS_USTRING_ID;
	h.pid = pid;
	h.tid = tid;
	h.time = time;
	h.raw_size = (uint32_t)raw;
	h.common_type = tp_id;
	h.common_pid = (int32_t)tid;
	h.arg = arg;
	h.loc = (uint32_t)(16 | n << 16);
	memset(out, 0, size);
	memcpy(out, &h, sizeof(h));
	memcpy((char *)out + sizeof(h), str, n);
	return size;
}

/* From the process: a page at a time, as a string may end just before a page that is not mapped. */
static int read_remote(pid_t pid, uint64_t addr, char *out, size_t len)
{
	size_t got = 0, chunk;
	struct iovec local, remote;
	ssize_t n;

	while (got < len) {
		chunk = 4096 - ((addr + got) & 4095);
		if (chunk > len - got)
			chunk = len - got;
		local = (struct iovec){ out + got, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)(addr + got), chunk };
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -EFAULT;
		if (memchr(out + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

int ms_ustring_read(pid_t pid, uint64_t addr, const unsigned char *stack, uint64_t sp, uint64_t stack_size,
		    char *out, size_t len)
{
	const unsigned char *nul;

	if (!len)
		return -ENAMETOOLONG;
	/* The stack as it was at the entry: a buffer there may be written over by now. */
	if (stack && addr >= sp && addr - sp < stack_size &&
	    (nul = memchr(stack + (addr - sp), '\0', stack_size - (addr - sp)))) {
		if ((size_t)(nul - (stack + (addr - sp))) >= len)
			return -ENAMETOOLONG;
		memcpy(out, stack + (addr - sp), (size_t)(nul - (stack + (addr - sp))) + 1);
		return 0;
	}
	return addr ? read_remote(pid, addr, out, len) : -EFAULT;
}

/* Drops ".", "..", and repeated slashes from an absolute path, in place (what is left of it stays absolute). */
static void normalise(char *path)
{
	char *in = path, *out = path, *seg;
	size_t n;

	while (*in) {
		while (*in == '/')
			in++;
		seg = in;
		while (*in && *in != '/')
			in++;
		n = (size_t)(in - seg);
		if (!n || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > path && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, seg, n);
		out += n;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* The directory name is resolved against: the working directory, or an open directory. */
static int base_dir(const char *procfs, pid_t pid, pid_t tid, int dirfd, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "%s/%d/task/%d/cwd", procfs, (int)pid, (int)tid);
	else
		snprintf(link, sizeof(link), "%s/%d/fd/%d", procfs, (int)pid, dirfd);
	n = readlink(link, out, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1 || out[0] != '/')
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

int ms_ustring_path(const char *procfs, pid_t pid, pid_t tid, int dirfd, const char *name, char *out, size_t len)
{
	char joined[PATH_MAX * 2], dir[PATH_MAX], *slash, *real;
	int err;

	/*
	 * An empty name is no path (the kernel refuses it, ENOENT): one read
	 * empty was read after the call had run, its memory used again. Joined
	 * to the directory it would name that instead.
	 */
	if (!name[0])
		return -ENOENT;
	if (name[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", name);
	} else {
		if ((err = base_dir(procfs, pid, tid, dirfd, dir, sizeof(dir))))
			return err;
		snprintf(joined, sizeof(joined), "%s/%s", dir, name);
	}
	normalise(joined);
	/* d_path resolves the directory's links: so does realpath, where the directory is still there. */
	slash = strrchr(joined, '/');
	if (slash && slash != joined) {
		*slash = '\0';
		real = realpath(joined, NULL);
		*slash = '/';
		if (real) {
			snprintf(dir, sizeof(dir), "%s%s", strcmp(real, "/") ? real : "", slash);
			free(real);
			snprintf(joined, sizeof(joined), "%s", dir);
		}
	}
	if (strlen(joined) >= len)
		return -ENAMETOOLONG;
	memcpy(out, joined, strlen(joined) + 1);
	return 0;
}
