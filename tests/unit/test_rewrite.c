/*
 * What record adds to the kernel's records: [vsyscall] after an exec, the
 * ELF loader's trim of an exec's first map, and the binaries whose
 * build-ids it reads, each built from or checked against typed records.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/rewrite.h"

#define TRAILER 24

/* A COMM of an exec as the kernel writes it for record's events: name, then TID, TIME, IDENTIFIER. */
struct comm_rec {
	struct perf_record_comm c;
	char comm[8];
	uint32_t pid, tid;
	uint64_t time, identifier;
};

/* An MMAP2 with room for a path and a trailer. */
union mmap2_rec {
	struct perf_record_mmap2 m;
	unsigned char bytes[sizeof(struct perf_record_mmap2) + 4096 + 64];
};

static void mmap2_of(union mmap2_rec *r, const char *name, uint32_t prot, uint64_t len, uint64_t ino)
{
	size_t n = (strlen(name) + 8) & ~(size_t)7;

	memset(r, 0, sizeof(*r));
	r->m.header = (struct perf_event_header){ PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
						  (uint16_t)(sizeof(r->m) + n + TRAILER) };
	r->m.pid = r->m.tid = 42;
	r->m.start = 0x555500000000ULL;
	r->m.len = len;
	r->m.ino = ino;
	r->m.prot = prot;
	r->m.flags = MAP_PRIVATE;
	memcpy(r->m.filename, name, strlen(name) + 1);
}

static void trailer_size_follows_the_attr(void **state)
{
	struct perf_event_attr a = { .sample_id_all = 1, .sample_type = PERF_SAMPLE_IDENTIFIER |
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR };

	assert_int_equal(sizeof(struct perf_record_mmap2), 72);   /* the kernel's layout */
	assert_int_equal(offsetof(struct perf_record_mmap2, prot), 64);
	assert_int_equal(sizeof(struct perf_record_sample_head), 32);
	assert_int_equal(ms_sample_id_size(&a), 24);
	a.sample_type |= PERF_SAMPLE_CPU | PERF_SAMPLE_ID;
	assert_int_equal(ms_sample_id_size(&a), 40);
	a.sample_id_all = 0;
	assert_int_equal(ms_sample_id_size(&a), 0);
}

static void vsyscall_record_takes_the_execs_ids(void **state)
{
	struct comm_rec comm = {
		.c = { .header = { PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(comm) }, .pid = 7, .tid = 8 },
		.comm = "true", .pid = 7, .tid = 8, .time = 123456789, .identifier = 99,
	};
	struct perf_record_mmap2 want = {
		.header = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(want) + 16 + TRAILER },
		.pid = 7, .tid = 8, .start = 0xffffffffff600000ULL, .len = 4096,
		.prot = PROT_EXEC, .flags = MAP_PRIVATE,
	};
	unsigned char out[256] __attribute__((aligned(8)));
	const struct perf_record_mmap2 *m = (const void *)out;
	size_t n = ms_vsyscall_record(&comm.c, TRAILER, out, sizeof(out));

	assert_int_equal(n, want.header.size);
	assert_memory_equal(m, &want, sizeof(want));
	assert_string_equal(m->filename, "[vsyscall]");
	/* The exec's own trailer: the map is of the exec's time, in its task. */
	assert_memory_equal(out + n - TRAILER, &comm.pid, TRAILER);
	/* Too small a COMM for the trailer, too small a buffer: nothing. */
	comm.c.header.size = sizeof(comm.c) + 8;
	assert_int_equal(ms_vsyscall_record(&comm.c, TRAILER, out, sizeof(out)), 0);
	comm.c.header.size = sizeof(comm);
	assert_int_equal(ms_vsyscall_record(&comm.c, TRAILER, out, n - 1), 0);
}

/* What the loader leaves of the first PT_LOAD, read with <elf.h> alone: the ground truth. */
static uint64_t first_load_size(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY), i;
	uint64_t size = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (i = 0; i < eh.e_phnum && !size; i++) {
		assert_int_equal(pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)),
				 sizeof(ph));
		if (ph.p_type == PT_LOAD)
			size = (ph.p_filesz + (ph.p_vaddr & 4095) + 4095) & ~4095ULL;
	}
	close(fd);
	return size;
}

static void exec_map_is_cut_as_the_loader_cut_it(void **state)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	uint64_t whole = 64ULL << 20, want;
	union mmap2_rec r;
	struct stat st;

	assert_true(n > 0);
	self[n] = '\0';
	assert_int_equal(stat(self, &st), 0);
	want = first_load_size(self);
	assert_true(want > 0 && want < whole);

	mmap2_of(&r, self, PROT_READ, whole, st.st_ino);
	ms_trim_exec_map(&r.m);
	assert_int_equal(r.m.len, want);

	/* Not the file mapped (another inode), not from the file's start, a build-id MMAP2: untouched. */
	mmap2_of(&r, self, PROT_READ, whole, st.st_ino + 1);
	ms_trim_exec_map(&r.m);
	assert_int_equal(r.m.len, whole);
	mmap2_of(&r, self, PROT_READ, whole, st.st_ino);
	r.m.pgoff = 4096;
	ms_trim_exec_map(&r.m);
	assert_int_equal(r.m.len, whole);
	mmap2_of(&r, self, PROT_READ, whole, st.st_ino);
	r.m.header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	ms_trim_exec_map(&r.m);
	assert_int_equal(r.m.len, whole);
	/* A map already smaller than the segment stays as it is. */
	mmap2_of(&r, self, PROT_READ, 4096, st.st_ino);
	ms_trim_exec_map(&r.m);
	assert_int_equal(r.m.len, 4096);
}

static void binaries_are_noted_once(void **state)
{
	struct ms_binaries b;
	union mmap2_rec r;
	const char *name = NULL;

	ms_binaries_init(&b);
	mmap2_of(&r, "/usr/bin/true", PROT_READ | PROT_EXEC, 8192, 1);
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 1);
	assert_ptr_equal(name, r.m.filename);
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 0);        /* known */
	mmap2_of(&r, "/usr/lib/libc.so.6", PROT_READ | PROT_EXEC, 8192, 2);
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 1);
	assert_string_equal(name, "/usr/lib/libc.so.6");
	mmap2_of(&r, "/usr/lib/libm.so.6", PROT_READ, 8192, 3);          /* data, not code */
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 0);
	mmap2_of(&r, "[anon:jit]", PROT_READ | PROT_EXEC, 8192, 0);      /* JIT code: no file */
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 0);
	mmap2_of(&r, "[vdso]", PROT_READ | PROT_EXEC, 8192, 0);
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 0);
	/* A name that does not end inside the record is not read. */
	mmap2_of(&r, "/usr/lib/libz.so.1", PROT_READ | PROT_EXEC, 8192, 4);
	r.m.header.size = sizeof(r.m) + 8;
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 0);
	r.m.header.size = sizeof(r.m) + 24;
	assert_int_equal(ms_binaries_note(&b, &r.m, &name), 1);
	ms_binaries_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trailer_size_follows_the_attr),
		cmocka_unit_test(vsyscall_record_takes_the_execs_ids),
		cmocka_unit_test(exec_map_is_cut_as_the_loader_cut_it),
		cmocka_unit_test(binaries_are_noted_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
