/*
 * The tracepoint formats a recording carries (TRACING_DATA, perf's
 * trace-event-info layout), parsed with libtraceevent, and what each
 * tracepoint event is to the stream: a syscall's entry or exit, with its
 * fields' places, or the VMA tree's writes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"
#include "util/log.h"

const struct stream_syscall stream_syscalls[SC_NR] = {
	[SC_MMAP] = { "mmap", { "addr", "len", "prot", "flags" } },
	[SC_MUNMAP] = { "munmap", { "addr", "len" } },
	[SC_MREMAP] = { "mremap", { "addr", "old_len", "new_len", "flags", "new_addr" } },
	[SC_MPROTECT] = { "mprotect", { "start", "len", "prot" } },
	[SC_BRK] = { "brk", { "brk" } },
	[SC_MADVISE] = { "madvise", { "start", "len_in", "behavior" } },
	[SC_SHMAT] = { "shmat", { "shmid", "shmaddr", "shmflg" } },
	[SC_SHMDT] = { "shmdt", { "shmaddr" } },
	[SC_MLOCK] = { "mlock", { "start", "len" } },
	[SC_MLOCK2] = { "mlock2", { "start", "len", "flags" } },
	[SC_MUNLOCK] = { "munlock", { "start", "len" } },
	[SC_MLOCKALL] = { "mlockall", { "flags" } },
	[SC_MUNLOCKALL] = { "munlockall", { NULL } },
};

/*
 * One event's format, without its print fmt: only the fields' places are
 * wanted here, and libtraceevent folds the constants of a print fmt's
 * arguments as it parses them, dividing by zero on "x % 0" (a damaged or
 * hostile file killed the process with SIGFPE; found by fuzz_tracing).
 * The format is handed over up to its "print fmt:" line, with an empty one.
 */
static int parse_format(struct tep_handle *tep, const char *fmt, uint64_t size, const char *sys)
{
	static const char empty[] = "print fmt: \"\"\n";
	const char *cut = size ? memmem(fmt, (size_t)size, "print fmt:", 10) : NULL;
	size_t keep = cut ? (size_t)(cut - fmt) : (size_t)size;
	char *copy;
	int err;

	if (size > (1u << 20))
		return -1;
	copy = malloc(keep + sizeof(empty));
	if (!copy)
		return -1;
	memcpy(copy, fmt, keep);
	memcpy(copy + keep, empty, sizeof(empty));
	err = tep_parse_event(tep, copy, keep + sizeof(empty) - 1, sys);
	free(copy);
	return err;
}

/* Parses the TRACING_DATA blob into tep: header_page and the event formats. */
int stream_parse_tracing_data(struct tep_handle *tep, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	uint32_t n, nsys, i, j;
	uint64_t size;
	const char *sys;
	int long_size;

#define NEED(k) do { if ((size_t)(end - p) < (size_t)(k)) return -EBADMSG; } while (0)
#define STR(s) do { s = (const char *)p; p = memchr(p, 0, (size_t)(end - p)); if (!p) return -EBADMSG; p++; } while (0)
	NEED(10);
	if (memcmp(p, "\027\010\104tracing", 10))
		return -EBADMSG;
	p += 10;
	STR(sys);                               /* version */
	NEED(6);
	tep_set_file_bigendian(tep, p[0] ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	long_size = p[1];
	tep_set_long_size(tep, long_size);
	memcpy(&n, p + 2, 4);
	tep_set_page_size(tep, (int)n);
	p += 6;
	NEED(12 + 8);
	if (memcmp(p, "header_page", 12))
		return -EBADMSG;
	p += 12;
	memcpy(&size, p, 8);
	p += 8;
	NEED(size);
	tep_parse_header_page(tep, (char *)p, size, long_size);
	p += size;
	NEED(13 + 8);
	if (memcmp(p, "header_event", 13))
		return -EBADMSG;
	p += 13;
	memcpy(&size, p, 8);
	p += 8;
	NEED(size);
	p += size;
	NEED(4);
	memcpy(&n, p, 4);                       /* ftrace formats: not needed */
	p += 4;
	for (i = 0; i < n; i++) {
		NEED(8);
		memcpy(&size, p, 8);
		p += 8;
		NEED(size);
		p += size;
	}
	NEED(4);
	memcpy(&nsys, p, 4);
	p += 4;
	for (i = 0; i < nsys; i++) {
		STR(sys);
		NEED(4);
		memcpy(&n, p, 4);
		p += 4;
		for (j = 0; j < n; j++) {
			NEED(8);
			memcpy(&size, p, 8);
			p += 8;
			NEED(size);
			if (parse_format(tep, (const char *)p, size, sys))
				ms_warn("cannot parse the format of a '%s' tracepoint in the recording", sys);
			p += size;
		}
	}
#undef NEED
#undef STR
	return 0;
}

/* The syscall a tracepoint named sys_enter_NAME or sys_exit_NAME follows, or -1; *exit: which half. */
static int syscall_of(const char *event, bool *exit)
{
	const char *name;
	int i;

	*exit = !strncmp(event, "sys_exit_", 9);
	if (!*exit && strncmp(event, "sys_enter_", 10))
		return -1;
	name = event + (*exit ? 9 : 10);
	for (i = 0; i < SC_NR; i++)
		if (!strcmp(name, stream_syscalls[i].name))
			return i;
	return -1;
}

/* maple_tree:ma_write: the range a write into a maple tree covers, and what it stores there. */
static void classify_vma_tree(struct evinfo *ei, struct tep_event *e)
{
	static const char *const fields[] = { "index", "last", "val" };
	struct tep_format_field *f;
	int k;

	for (k = 0; k < 3; k++) {
		f = tep_find_field(e, fields[k]);
		if (!f || f->size != 8)
			return;
		ei->off[k] = (uint16_t)f->offset;
		ei->size[k] = (uint16_t)f->size;
	}
	ei->nr_fields = 3;
	ei->kind = EK_VMA_TREE;
}

/* A syscall tracepoint, its fields' places from the recording's formats. */
void stream_classify_tracepoint(struct ms_stream *s, struct evinfo *ei, uint64_t id)
{
	struct tep_event *e = s->tep ? tep_find_event(s->tep, (int)id) : NULL;
	struct tep_format_field *f;
	bool exit;
	int i, k;

	if (e && !strcmp(e->system, "maple_tree") && !strcmp(e->name, "ma_write")) {
		classify_vma_tree(ei, e);
		return;
	}
	if (!e || strcmp(e->system, "syscalls") || (i = syscall_of(e->name, &exit)) < 0)
		return;
	ei->sc = (enum sc)i;
	if (exit) {
		f = tep_find_field(e, "ret");
		if (!f)
			return;
		ei->kind = EK_EXIT;
		ei->off[0] = (uint16_t)f->offset;
		ei->size[0] = (uint16_t)f->size;
		ei->nr_fields = 1;
		return;
	}
	for (k = 0; k < 5 && stream_syscalls[i].args[k]; k++) {
		f = tep_find_field(e, stream_syscalls[i].args[k]);
		if (!f) {
			ms_warn("tracepoint '%s' has no field '%s': ignoring it", e->name, stream_syscalls[i].args[k]);
			return;
		}
		ei->off[k] = (uint16_t)f->offset;
		ei->size[k] = (uint16_t)f->size;
	}
	ei->nr_fields = k;
	ei->kind = EK_ENTER;
}
