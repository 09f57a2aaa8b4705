/*
 * The process table's and the file names' tracepoints, on a synthetic
 * recording whose formats come from a fake tracefs tree: task_newtask with
 * CLONE_VM makes the child share its parent's maps (without, the FORK's
 * copy stands), and a ctime set inside a successful unlink names the
 * file's maps deleted (outside one, or in a failed one, it does not).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/pdwriter.h>
#include <mapscope/session.h>

#include "kernel/tracefs.h"
#include "fake_tracefs.h"
#include "records.h"

#define P 4096ULL
#define PID 7
#define SIDE_ID 100
#define CLONE_VM_ 0x100ULL
#define SIGCHLD_ 17ULL

static char root[] = "/tmp/ms-lifecycle-XXXXXX";

/* The tracepoints: group/name, id, and the fields after the common ones as tracefs prints them. */
static const struct {
	const char *sys, *name;
	int id;
	const char *fields;
} tps[] = {
	{ "syscalls", "sys_enter_unlink", 800, "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:const char * pathname;\toffset:16;\tsize:8;\tsigned:0;\n" },
	{ "syscalls", "sys_exit_unlink", 801, "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n" },
	{ "task", "task_newtask", 802, "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:0;\n"
	  "\tfield:u64 clone_flags;\toffset:32;\tsize:8;\tsigned:0;\n" },
	{ "timestamp", "ctime_ns_xchg", 803, "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	  "\tfield:ino_t ino;\toffset:16;\tsize:8;\tsigned:0;\n" },
};
#define NR_TPS (sizeof(tps) / sizeof(tps[0]))

static int setup(void **state)
{
	char rel[128], text[2048];
	size_t i;

	(void)state;
	if (fake_tracefs_new(root))
		return -1;
	for (i = 0; i < NR_TPS; i++) {
		snprintf(text, sizeof(text), "name: %s\nID: %d\nformat:\n"
			 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
			 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
			 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n%s\nprint fmt: \"%s\"\n",
			 tps[i].name, tps[i].id, tps[i].fields, tps[i].name);
		snprintf(rel, sizeof(rel), "events/%s/%s/format", tps[i].sys, tps[i].name);
		fake_put(root, rel, text);
		snprintf(rel, sizeof(rel), "events/%s/%s/id", tps[i].sys, tps[i].name);
		snprintf(text, sizeof(text), "%d\n", tps[i].id);
		fake_put(root, rel, text);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fake_remove(root);
}

#define TP_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)
#define SIDE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		   PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

struct rec {
	struct ms_pdwriter *w;
	struct perf_event_attr attrs[NR_TPS + 1];
	uint64_t ids[NR_TPS + 1];
	struct ms_pdwriter_evsel ev[NR_TPS + 1];
	char paths[NR_TPS][64];
	struct ms_buf td;
	int fd;
};

static void open_rec(struct rec *r)
{
	char *argv[] = { "synthetic" };
	const char *paths[NR_TPS];
	struct ms_pdwriter_opts o;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->attrs[0] = (struct perf_event_attr){ .size = sizeof(r->attrs[0]), .type = PERF_TYPE_SOFTWARE,
						.config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = SIDE_TYPE,
						.sample_period = 1, .sample_id_all = 1, .mmap2 = 1, .task = 1 };
	r->ids[0] = SIDE_ID;
	r->ev[0] = (struct ms_pdwriter_evsel){ &r->attrs[0], "page-faults", &r->ids[0], 1 };
	for (i = 0; i < NR_TPS; i++) {
		snprintf(r->paths[i], sizeof(r->paths[i]), "%s/%s", tps[i].sys, tps[i].name);
		paths[i] = r->paths[i];
		r->attrs[i + 1] = (struct perf_event_attr){ .size = sizeof(r->attrs[0]), .type = PERF_TYPE_TRACEPOINT,
							    .config = (uint64_t)tps[i].id, .sample_type = TP_TYPE,
							    .sample_period = 1, .sample_id_all = 1 };
		r->ids[i + 1] = (uint64_t)tps[i].id;
		r->ev[i + 1] = (struct ms_pdwriter_evsel){ &r->attrs[i + 1], tps[i].name, &r->ids[i + 1], 1 };
	}
	ms_buf_init(&r->td);
	assert_int_equal(ms_tracefs_tracing_data(root, paths, NR_TPS, &r->td), 0);
	o = (struct ms_pdwriter_opts){ r->ev, NR_TPS + 1, r->td.data, r->td.len, 1, argv, CLOCK_MONOTONIC, false, 0 };
	r->fd = memfd_create("lifecycle", 0);
	r->w = ms_pdwriter_new(r->fd, &o);
	assert_non_null(r->w);
}

static void put_map(struct rec *r, uint64_t t, uint32_t pid, uint64_t addr, uint64_t ino, const char *name)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, pid, pid, addr, 2 * P, 0,
			       ino ? 254 : 0, 0, ino, 0, PROT_READ, ino ? MAP_SHARED : MAP_PRIVATE, "", pid, pid,
			       t, SIDE_ID, 0, 0, SIDE_ID };

	snprintf(m.name, sizeof(m.name), "%s", name);
	assert_int_equal(ms_pdwriter_write(r->w, &m.h), 0);
}

/* A FORK record of child from PID, with the side-band event's trailer. */
static void put_fork(struct rec *r, uint64_t t, uint32_t child)
{
	struct fork_rec f = { { PERF_RECORD_FORK, 0, sizeof(f) }, child, PID, child, PID, t, PID, PID, t, SIDE_ID,
			      0, 0, SIDE_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &f.h), 0);
}

/* A sample of tracepoint k by PID: raw holds what follows its common fields, at offset 8. */
static void put_tp(struct rec *r, size_t k, uint64_t t, const void *raw, size_t len)
{
	unsigned char buf[256] = { 0 };
	struct perf_event_header *h = (void *)buf;
	uint32_t pid = PID, raw_size = (uint32_t)(8 + len + 4);
	uint64_t v[4] = { (uint64_t)tps[k].id, 0x400000, 0, t };
	uint16_t type = (uint16_t)tps[k].id;

	memcpy(&v[2], &pid, 4);
	memcpy((char *)&v[2] + 4, &pid, 4);
	memcpy(buf + 8, v, 32);
	memcpy(buf + 40, &raw_size, 4);
	memcpy(buf + 44, &type, 2);
	memcpy(buf + 48, &pid, 4);
	memcpy(buf + 52, raw, len);
	*h = (struct perf_event_header){ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(44 + raw_size) };
	assert_int_equal(h->size % 8, 0);
	assert_int_equal(ms_pdwriter_write(r->w, h), 0);
}

static void put_newtask(struct rec *r, uint64_t t, uint32_t child, uint64_t flags)
{
	unsigned char raw[32] = { 0 };

	memcpy(raw, &child, 4);
	memcpy(raw + 24, &flags, 8);
	put_tp(r, 2, t, raw, sizeof(raw));
}

static void put_ctime(struct rec *r, uint64_t t, uint32_t maj, uint64_t ino)
{
	unsigned char raw[24] = { 0 };
	uint32_t dev = maj << 20;

	memcpy(raw, &dev, 4);
	memcpy(raw + 8, &ino, 8);
	put_tp(r, 3, t, raw, sizeof(raw));
}

/* unlink: its entry, the ctimes set inside it, its exit with ret. */
static void put_unlink(struct rec *r, uint64_t t, uint64_t ino, int64_t ret)
{
	unsigned char raw[16] = { 0 };

	put_tp(r, 0, t, raw, sizeof(raw));
	put_ctime(r, t + 1, 254, 2);                 /* the directory */
	put_ctime(r, t + 2, 254, ino);
	memcpy(raw + 8, &ret, 8);
	put_tp(r, 1, t + 3, raw, sizeof(raw));
}

static struct ms_session *replay(struct rec *r)
{
	char path[64];
	struct ms_session *s;

	assert_int_equal(ms_pdwriter_close(r->w), 0);
	ms_pdwriter_free(r->w);
	ms_buf_release(&r->td);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	s = ms_session_open(path, NULL);
	assert_non_null(s);
	assert_int_equal(ms_session_run(s), 0);
	close(r->fd);
	return s;
}

static const char *name_at(struct ms_session *s, uint32_t pid, uint64_t addr)
{
	const struct ms_region *r = ms_aspace_lookup(ms_session_aspace(s), pid, addr);

	return r ? r->proc_name : "(none)";
}

static void clone_vm_shares(void **state)
{
	struct ms_session *s;
	struct rec r;

	(void)state;
	open_rec(&r);
	put_map(&r, 10, PID, 0x10000000, 0, "//anon");
	put_fork(&r, 20, PID + 1);
	put_newtask(&r, 21, PID + 1, CLONE_VM_ | SIGCHLD_);      /* clone(CLONE_VM) */
	put_fork(&r, 30, PID + 2);
	put_newtask(&r, 31, PID + 2, SIGCHLD_);                  /* fork */
	put_map(&r, 40, PID + 1, 0x20000000, 0, "//anon");
	put_map(&r, 50, PID + 2, 0x30000000, 0, "//anon");
	s = replay(&r);
	assert_non_null(ms_aspace_lookup(ms_session_aspace(s), PID, 0x20000000));   /* shared */
	assert_non_null(ms_aspace_lookup(ms_session_aspace(s), PID + 2, 0x10000000)); /* a copy */
	assert_null(ms_aspace_lookup(ms_session_aspace(s), PID, 0x30000000));        /* the copy's own */
	assert_null(ms_aspace_lookup(ms_session_aspace(s), PID + 2, 0x20000000));
	ms_session_free(s);
}

static void unlink_names_deleted(void **state)
{
	struct ms_session *s;
	struct rec r;

	(void)state;
	open_rec(&r);
	put_map(&r, 10, PID, 0x10000000, 77, "/a");
	put_map(&r, 11, PID, 0x20000000, 78, "/b");
	put_map(&r, 12, PID, 0x30000000, 79, "/c");
	put_unlink(&r, 20, 77, 0);
	put_unlink(&r, 30, 78, -EBUSY);              /* failed: the name stays */
	put_ctime(&r, 40, 254, 79);                  /* a write, say: outside any unlink */
	s = replay(&r);
	assert_string_equal(name_at(s, PID, 0x10000000), "/a (deleted)");
	assert_string_equal(name_at(s, PID, 0x20000000), "/b");
	assert_string_equal(name_at(s, PID, 0x30000000), "/c");
	ms_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clone_vm_shares),
		cmocka_unit_test(unlink_names_deleted),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
