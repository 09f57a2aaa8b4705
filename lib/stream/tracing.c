/*
 * The tracepoint formats a recording carries (TRACING_DATA, perf's
 * trace-event-info layout), and what each tracepoint event is to the
 * stream: a syscall's entry or exit, with its fields' places, or the VMA
 * tree's writes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/internal.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/tracedata.h"

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
	[SC_UNLINK] = { "unlink", { NULL } },
	[SC_UNLINKAT] = { "unlinkat", { NULL } },
	[SC_MSEAL] = { "mseal", { "start", "len" } },
	[SC_MBIND] = { "mbind", { "start", "len", "mode" } },
	[SC_HOME_NODE] = { "set_mempolicy_home_node", { "start", "len", "home_node" } },
	[SC_IOCTL] = { "ioctl", { "fd", "cmd", "arg" } },
	[SC_PRCTL] = { "prctl", { "option", "arg2", "arg3", "arg4", "arg5" } },
	[SC_RENAME] = { "rename", { NULL } },
	[SC_RENAMEAT] = { "renameat", { NULL } },
	[SC_RENAMEAT2] = { "renameat2", { "olddfd", "oldname", "newdfd", "newname", "flags" } },
	[SC_EXECVE] = { "execve", { NULL } },
	[SC_EXECVEAT] = { "execveat", { NULL } },
	[SC_IO_DESTROY] = { "io_destroy", { "ctx" } },
	[SC_PKEY_MPROTECT] = { "pkey_mprotect", { "start", "len", "prot", "pkey" } },
};

/*
 * One tracepoint's format text, as tracefs writes it:
 *
 *   name: sys_enter_mmap
 *   ID: 98
 *   format:
 *   	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *   	...
 *   	field:unsigned long addr;	offset:16;	size:8;	signed:0;
 *
 *   print fmt: ...
 *
 * Only the name, the id and the fields' places are wanted, so that is all
 * that is read: a field's name is the last word of its declaration before
 * ";" (an array's brackets dropped). libtraceevent parsed it all, print fmt
 * included, at about 130,000 instructions a format, which was 3% of a
 * report of a million samples; it also folded a print fmt's constants, and
 * divided by zero on "x % 0" in a damaged file (found by fuzz_tracing).
 * Every read is bounded by the text's size: it need not end in NUL.
 */
struct tp_format {
	const char *sys;             /* NUL-terminated, in the blob */
	const char *text;
	size_t len;
	uint64_t id;
};

/* The line of text that starts at *at: [*line, *line + return), *at moved past it. */
static size_t next_line(const struct tp_format *f, size_t *at, const char **line)
{
	const char *p = f->text + *at, *nl = memchr(p, '\n', f->len - *at);
	size_t n = nl ? (size_t)(nl - p) : f->len - *at;

	*line = p;
	*at += n + (nl ? 1 : 0);
	return n;
}

/* The decimal number at [at, end), after spaces; false where there is none. */
static bool number_at(const char *at, const char *end, uint64_t *v)
{
	bool any = false;

	for (*v = 0; at < end && *at == ' '; at++)
		;
	for (; at < end && *at >= '0' && *at <= '9' && *v < (1ULL << 40); at++, any = true)
		*v = *v * 10 + (uint64_t)(*at - '0');
	return any;
}

/* The number after key (as "offset:") in [p, p + n); false where there is none. */
static bool number_after(const char *p, size_t n, const char *key, uint64_t *v)
{
	size_t k = strlen(key);
	const char *at = n >= k ? memmem(p, n, key, k) : NULL;

	return at && number_at(at + k, p + n, v);
}

/* name's field in f: its offset and size; false where f has none, or its line gives neither. */
static bool find_field(const struct tp_format *f, const char *name, uint16_t *off, uint16_t *size)
{
	const char *line, *decl, *semi, *e, *w;
	size_t at = 0, n, want = strlen(name);
	uint64_t o, z;

	while (at < f->len) {
		n = next_line(f, &at, &line);
		decl = n >= 6 ? memmem(line, n, "field:", 6) : NULL;
		if (!decl || !(semi = memchr(decl, ';', (size_t)(line + n - decl))))
			continue;
		e = semi;
		while (e > decl + 6 && e[-1] == ' ')
			e--;
		if (e > decl + 6 && e[-1] == ']') {      /* name[16]; "char[] name" ends with its name */
			for (w = e - 1; w > decl + 6 && w[-1] != '['; w--)
				;
			if (w > decl + 6)
				e = w - 1;
		}
		for (w = e; w > decl + 6 && w[-1] != ' ' && w[-1] != '\t'; w--)
			;
		if ((size_t)(e - w) != want || memcmp(w, name, want))
			continue;
		if (!number_after(semi, (size_t)(line + n - semi), "offset:", &o) ||
		    !number_after(semi, (size_t)(line + n - semi), "size:", &z) || o > UINT16_MAX || z > UINT16_MAX)
			return false;
		*off = (uint16_t)o;
		*size = (uint16_t)z;
		return true;
	}
	return false;
}

/* The rest of f's first line that starts with key ("name: "): its length, or -1 where none does. */
static ptrdiff_t line_after(const struct tp_format *f, const char *key, const char **rest)
{
	const char *line;
	size_t at = 0, n, k = strlen(key);

	while (at < f->len) {
		n = next_line(f, &at, &line);
		if (n >= k && !memcmp(line, key, k)) {
			*rest = line + k;
			return (ptrdiff_t)(n - k);
		}
	}
	return -1;
}

/* f's "name:" into out (cut to len - 1), or "" where it has none. */
static void name_of(const struct tp_format *f, char *out, size_t len)
{
	const char *name;
	ptrdiff_t n = line_after(f, "name: ", &name);

	if (n < 0)
		n = 0;
	if ((size_t)n >= len)
		n = (ptrdiff_t)len - 1;
	memcpy(out, name, (size_t)n);
	out[n] = '\0';
}

/* f's "ID:" into f->id; false where it has none. */
static bool read_id(struct tp_format *f)
{
	const char *id;
	ptrdiff_t n = line_after(f, "ID:", &id);

	return n >= 0 && number_at(id, id + n, &f->id);
}

/*
 * Walks the TRACING_DATA blob (perf's trace-event-info layout): the event
 * formats go into *out (malloc'd, *n of them), the rest is skipped. 0, or
 * -EBADMSG where the blob does not hold together, or -ENOMEM.
 */
static int walk_tracing_data(const unsigned char *p, size_t len, struct tp_format **out, size_t *nout)
{
	const unsigned char *end = p + len;
	struct tp_format *v = NULL;
	uint32_t n, nsys, i, j;
	size_t nv = 0, cap = 0;
	uint64_t size;
	const char *sys;

#define NEED(k) do { if ((size_t)(end - p) < (size_t)(k)) goto bad; } while (0)
#define STR(s) do { s = (const char *)p; p = memchr(p, 0, (size_t)(end - p)); if (!p) goto bad; p++; } while (0)
	NEED(10);
	if (memcmp(p, "\027\010\104tracing", 10))
		goto bad;
	p += 10;
	STR(sys);                               /* version */
	NEED(6);                                /* endianness, long size, page size */
	p += 6;
	if (!(p = ms_tracedata_skip_section(p, end, "header_page", 12)) || !(p = ms_tracedata_skip_section(p, end, "header_event", 13)))
		goto bad;
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
			if (MS_GROW(v, nv + 1, cap, 32, SIZE_MAX, false)) {
				free(v);
				return -ENOMEM;
			}
			v[nv] = (struct tp_format){ sys, (const char *)p, (size_t)size, 0 };
			if (!read_id(&v[nv]))
				ms_warn("a '%s' tracepoint's format in the recording has no ID: ignoring it", sys);
			else
				nv++;
			p += size;
		}
	}
#undef NEED
#undef STR
	*out = v;
	*nout = nv;
	return 0;
bad:
	*out = v;                               /* what was read before the damage still counts */
	*nout = nv;
	return -EBADMSG;
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
static void classify_vma_tree(struct evinfo *ei, const struct tp_format *f)
{
	static const char *const fields[] = { "index", "last", "val" };
	int k;

	for (k = 0; k < 3; k++)
		if (!find_field(f, fields[k], &ei->off[k], &ei->size[k]) || ei->size[k] != 8)
			return;
	ei->nr_fields = 3;
	ei->kind = EK_VMA_TREE;
}

/* mmap_lock:mmap_lock_acquire_returned (mm, write, success) or mmap_lock_released (mm, write). */
static void classify_mmlock(struct evinfo *ei, const struct tp_format *f, int n)
{
	static const char *const fields[] = { "mm", "write", "success" };
	int k;

	for (k = 0; k < n; k++)
		if (!find_field(f, fields[k], &ei->off[k], &ei->size[k]) || ei->size[k] != (k ? 1 : 8))
			return;
	ei->nr_fields = n;
	ei->kind = EK_MMLOCK;
}

/* mapscope:vma_referenced: record --referenced's figures for one VMA, each a field of 8 bytes but pid. */
static void classify_referenced(struct evinfo *ei, const struct tp_format *f)
{
	int k;

	for (k = 0; k < 8; k++)
		if (!find_field(f, stream_referenced_fields[k], &ei->off[k], &ei->size[k]) ||
		    ei->size[k] != (k ? 8 : 4)) {
			ms_warn("tracepoint 'mapscope:vma_referenced' has no field '%s' of %d bytes: ignoring it",
				stream_referenced_fields[k], k ? 8 : 4);
			return;
		}
	ei->nr_fields = 8;
	ei->kind = EK_ACCESS;
}

/* mapscope:user_string: which of its syscall's strings (4 bytes), and the string (__data_loc, 4 bytes). */
static void classify_ustring(struct evinfo *ei, const struct tp_format *f)
{
	static const char *const fields[] = { "arg", "str" };
	int k;

	for (k = 0; k < 2; k++)
		if (!find_field(f, fields[k], &ei->off[k], &ei->size[k]) || ei->size[k] != 4)
			return;
	ei->nr_fields = 2;
	ei->kind = EK_USTRING;
}

static bool find_field_of(const void *f, const char *name, uint16_t *off, uint16_t *size)
{
	return find_field(f, name, off, size);
}

/*
 * The process table's and the file names' tracepoints: task:task_newtask
 * (the new task's id and clone flags) and the timestamp: ones that set a
 * ctime (inode_set_ctime_to_ts; on a multigrain filesystem ctime_ns_xchg
 * and ctime_xchg_skip): the device and inode of a file whose ctime an
 * unlink set.
 */
static bool classify_task(struct evinfo *ei, const struct tp_format *f, const char *name)
{
	static const char *const newtask[] = { "pid", "clone_flags" }, *const ctime[] = { "dev", "ino" };
	const char *const *fields;
	int k;

	if (!strcmp(f->sys, "task") && !strcmp(name, "task_newtask"))
		fields = newtask;
	else if (!strcmp(f->sys, "timestamp") && (!strcmp(name, "inode_set_ctime_to_ts") ||
						  !strcmp(name, "ctime_ns_xchg") || !strcmp(name, "ctime_xchg_skip")))
		fields = ctime;
	else
		return false;
	for (k = 0; k < 2; k++)
		if (!find_field(f, fields[k], &ei->off[k], &ei->size[k]) || (ei->size[k] != 4 && ei->size[k] != 8))
			return true;
	ei->nr_fields = 2;
	ei->kind = fields == newtask ? EK_NEWTASK : EK_CTIME;
	return true;
}

/* A syscall tracepoint, its fields' places from its format. */
static void classify(struct evinfo *ei, const struct tp_format *f)
{
	char name[64];
	bool exit;
	int i, k;

	name_of(f, name, sizeof(name));
	if (!strcmp(f->sys, "maple_tree") && !strcmp(name, "ma_write")) {
		classify_vma_tree(ei, f);
		return;
	}
	if (!strcmp(f->sys, "mmap_lock") && (!strcmp(name, "mmap_lock_acquire_returned") ||
					     !strcmp(name, "mmap_lock_released"))) {
		classify_mmlock(ei, f, strcmp(name, "mmap_lock_released") ? 3 : 2);
		return;
	}
	if (!strcmp(f->sys, "mapscope") && !strcmp(name, "vma_referenced")) {
		classify_referenced(ei, f);
		return;
	}
	if (!strcmp(f->sys, "mapscope") && !strcmp(name, "user_string")) {
		classify_ustring(ei, f);
		return;
	}
	if (stream_classify_damon(ei, f->sys, name, find_field_of, f) || classify_task(ei, f, name) ||
	    stream_classify_sysctl(ei, f->sys, name, find_field_of, f) ||
	    stream_classify_prefetch(ei, f->sys, find_field_of, f))
		return;
	if (strcmp(f->sys, "syscalls") || (i = syscall_of(name, &exit)) < 0)
		return;
	ei->sc = (enum sc)i;
	if (exit) {
		if (!find_field(f, "ret", &ei->off[0], &ei->size[0]))
			return;
		ei->kind = EK_EXIT;
		ei->nr_fields = 1;
		return;
	}
	for (k = 0; k < 5 && stream_syscalls[i].args[k]; k++)
		if (!find_field(f, stream_syscalls[i].args[k], &ei->off[k], &ei->size[k])) {
			ms_warn("tracepoint '%s' has no field '%s': ignoring it", name, stream_syscalls[i].args[k]);
			return;
		}
	ei->nr_fields = k;
	ei->kind = EK_ENTER;
}

int stream_classify_tracepoints(struct ms_stream *s, const void *td, size_t len)
{
	struct tp_format *f = NULL;
	size_t n = 0, i, j;
	int err = walk_tracing_data(td, len, &f, &n);

	if (err == -ENOMEM)
		return err;
	if (err)
		ms_warn("the recording's tracing data does not parse%s", n ? " to its end: the tracepoints after "
			"the damage are ignored" : ": tracepoints are ignored");
	for (i = 0; i < s->nr_ev; i++)
		if (s->ev[i].attr->type == PERF_TYPE_TRACEPOINT)
			for (j = 0; j < n; j++)
				if (f[j].id == s->ev[i].attr->config) {
					classify(&s->ev[i], &f[j]);
					break;
				}
	free(f);
	return 0;
}
