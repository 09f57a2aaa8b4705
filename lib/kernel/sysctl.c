/*
 * mapscope:sysctl: one setting of the recording machine, read by record
 * as it starts and written as a sample (kernel/sysctl.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include "kernel/sysctl.h"
#include "kernel/tpcommon.h"

/* The tracepoint's data: its header, the value, and the setting's name (__data_loc: offset | length << 16). */
static const char format_fields[] =
	MS_TP_COMMON_FORMAT
	"\n"
	"\tfield:u64 value;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"%s=%llu\", __get_str(name), REC->value\n";

/* The sample's fixed part: IDENTIFIER, IP, TID, TIME, ADDR, then RAW (as vma_referenced's). */
struct head {
	MS_TP_SAMPLE_HEAD;
	MS_TP_COMMON_FIELDS;
	uint64_t value;
	uint32_t loc;
} __attribute__((packed));

void ms_sysctl_format(uint16_t tp_id, struct ms_buf *out)
{
	ms_tp_format(MS_SYSCTL_EVENT, tp_id, format_fields, sizeof(format_fields) - 1, out);
}

size_t ms_sysctl_encode(uint16_t tp_id, uint32_t pid, uint64_t time, const char *name, uint64_t value, void *out,
			size_t cap)
{
	size_t n = strlen(name) + 1, size = sizeof(struct head) + n;
	struct head h;

	/* The sample ends on 8 bytes: the raw data is padded (raw_size counts the padding). */
	size = (size + 7) & ~(size_t)7;
	if (n > MS_SYSCTL_NAME_MAX || size > cap)
		return 0;
	memset(&h, 0, sizeof(h));
	h.header = (struct perf_event_header){ .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
					       .size = (uint16_t)size };
	h.identifier = MS_SYSCTL_ID;
	h.pid = h.tid = pid;
	h.time = time;
	h.raw_size = (uint32_t)(size - offsetof(struct head, common_type));
	h.common_type = tp_id;
	h.common_pid = (int32_t)pid;
	h.value = value;
	h.loc = (uint32_t)((sizeof(h) - offsetof(struct head, common_type)) | n << 16);
	memset(out, 0, size);
	memcpy(out, &h, sizeof(h));
	memcpy((char *)out + sizeof(h), name, n);
	return size;
}

int ms_sysctl_read(const char *procfs, const char *name, uint64_t *value)
{
	char path[256], text[32], *end, *p;
	ssize_t n;
	int fd, len;

	len = snprintf(path, sizeof(path), "%s/sys/%s", procfs, name);
	if (len < 0 || (size_t)len >= sizeof(path))
		return -ENAMETOOLONG;
	for (p = path + strlen(procfs) + 5; *p; p++)   /* vm.mmap_min_addr -> vm/mmap_min_addr */
		if (*p == '.')
			*p = '/';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	text[n] = '\0';
	errno = 0;
	*value = strtoull(text, &end, 10);
	if (errno || end == text || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

int ms_read_fault_zero_page(uint64_t *value)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t entry = 0;
	volatile char *m;
	ssize_t n;
	int fd;

	if (page <= 0 || (fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	m = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	(void)*m;
	n = pread(fd, &entry, sizeof(entry), (off_t)((uintptr_t)m / (uintptr_t)page * sizeof(entry)));
	munmap((void *)m, (size_t)page);
	close(fd);
	if (n != sizeof(entry) || !(entry >> 63 & 1))   /* PM_PRESENT: the read faulted it in */
		return n < 0 ? -errno : -EINVAL;
	*value = !(entry >> 56 & 1);                   /* PM_MMAP_EXCLUSIVE: a page of its own */
	return 0;
}
