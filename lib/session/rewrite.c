/*
 * The records the kernel does not write, made from what it does: see
 * session/rewrite.h. Everything here reads records through their types
 * (perfdata/format.h) and checks their sizes first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mapscope/symbols.h>

#include "session/rewrite.h"

#define VSYSCALL_ADDR 0xffffffffff600000ULL
#define VSYSCALL_NAME "[vsyscall]"
/* The name's bytes in the record: "[vsyscall]" with its NUL, padded to 8. */
#define VSYSCALL_NAME_SIZE 16

bool ms_has_vsyscall(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "re");
	bool have = false;

	while (f && fgets(line, sizeof(line), f))
		have |= strstr(line, VSYSCALL_NAME) != NULL;
	if (f)
		fclose(f);
	return have;
}

size_t ms_vsyscall_record(const struct perf_record_comm *comm, size_t trailer, void *out, size_t cap)
{
	size_t size = sizeof(struct perf_record_mmap2) + VSYSCALL_NAME_SIZE + trailer;
	struct perf_record_mmap2 *m = out;

	if (comm->header.size < sizeof(*comm) + trailer || size > cap || size > UINT16_MAX)
		return 0;
	memset(out, 0, size);
	m->header = (struct perf_event_header){ PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, (uint16_t)size };
	m->pid = comm->pid;
	m->tid = comm->tid;
	m->start = VSYSCALL_ADDR;
	m->len = 4096;
	m->prot = PROT_EXEC;
	m->flags = MAP_PRIVATE;
	memcpy(m->filename, VSYSCALL_NAME, sizeof(VSYSCALL_NAME));
	memcpy(m->filename + VSYSCALL_NAME_SIZE, (const char *)comm + comm->header.size - trailer, trailer);
	return size;
}

/* The record's file name, or NULL where it has none that ends inside the record. */
static const char *file_name(const struct perf_record_mmap2 *m)
{
	size_t room = perf_record_rest(m, filename);

	if (!room || !memchr(m->filename, 0, room))
		return NULL;
	return m->filename;
}

void ms_trim_exec_map(struct perf_record_mmap2 *m)
{
	const char *name;
	uint64_t size;

	if (m->header.type != PERF_RECORD_MMAP2 || (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
		return;
	if (!perf_record_rest(m, filename) || m->pgoff || m->filename[0] != '/' || !m->ino)
		return;
	if (!(name = file_name(m)))
		return;
	if (!ms_elf_first_load(name, m->ino, &size) && size < m->len)
		m->len = size;
}

void ms_binaries_init(struct ms_binaries *b)
{
	ms_buf_init(&b->names);
}

void ms_binaries_release(struct ms_binaries *b)
{
	size_t i, n = b->names.len / sizeof(char *);
	char *p;

	for (i = 0; i < n; i++) {
		memcpy(&p, b->names.data + i * sizeof(p), sizeof(p));
		free(p);
	}
	ms_buf_release(&b->names);
}

static bool known(const struct ms_binaries *b, const char *name)
{
	size_t i, n = b->names.len / sizeof(char *);
	const char *p;

	for (i = 0; i < n; i++) {
		memcpy(&p, b->names.data + i * sizeof(p), sizeof(p));
		if (!strcmp(p, name))
			return true;
	}
	return false;
}

int ms_binaries_note(struct ms_binaries *b, const struct perf_record_mmap2 *m, const char **name)
{
	const char *n;
	char *copy;

	if (m->header.type != PERF_RECORD_MMAP2 || !perf_record_rest(m, filename))
		return 0;
	if (!(m->prot & PROT_EXEC) || m->filename[0] != '/' || !(n = file_name(m)) || known(b, n))
		return 0;
	copy = strdup(n);
	if (!copy)
		return -ENOMEM;
	ms_buf_append(&b->names, &copy, sizeof(copy));
	if (ms_buf_error(&b->names)) {
		free(copy);
		b->names.error = 0;
		return -ENOMEM;
	}
	*name = n;
	return 1;
}
