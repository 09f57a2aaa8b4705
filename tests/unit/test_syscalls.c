/*
 * Syscall pairing, on synthetic recordings whose tracepoint formats come
 * from a fake tracefs tree: an entry and its exit make one change, applied
 * when the syscall succeeded; threads interleave; an exit with no entry is
 * left alone; a file with entries only applies what an entry says alone;
 * a call that failed part-way applies the part before its failure point;
 * a munmap refused at a sealed VMA splits the VMA at its start;
 * a call in flight when the recording began (its entry unseen) unmaps
 * what the VMA tree's writes of NULL say, and only then.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/pdwriter.h>
#include <mapscope/session.h>

#include "kernel/tracefs.h"
#include "fake_tracefs.h"
#include "records.h"

#define P 4096ULL
#define A 0x10000000ULL
#define PID 7
#define FAULT_ID 100

static char root[] = "/tmp/ms-syscalls-XXXXXX";

/* The syscalls of the recordings: name, tracepoint id, argument fields (enter). */
static const struct {
	const char *name;
	int id;
	const char *args[5];
} calls[] = {
	{ "munmap", 700, { "addr", "len" } },
	{ "mremap", 710, { "addr", "old_len", "new_len", "flags", "new_addr" } },
	{ "mlock", 720, { "start", "len" } },
	{ "mprotect", 730, { "start", "len", "prot" } },
	{ "madvise", 740, { "start", "len_in", "behavior" } },
	{ "mseal", 750, { "start", "len", "flags" } },
	{ "execve", 760, { NULL } },
	{ "mmap", 770, { "addr", "len", "prot", "flags", "fd" } },
};

static void put(const char *rel, const char *text)
{
	fake_put(root, rel, text);
}

/* A syscall tracepoint's format as the kernel prints it: common fields, __syscall_nr, then 8-byte fields. */
static void put_format(const char *name, int id, const char *const *fields, int n)
{
	char rel[128], text[2048], idtext[16];
	int used, i;

	used = snprintf(text, sizeof(text), "name: %s\nID: %d\nformat:\n"
			"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
			"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
			"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
			"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n", name, id);
	for (i = 0; i < n; i++)
		used += snprintf(text + used, sizeof(text) - (size_t)used,
				 "\tfield:unsigned long %s;\toffset:%d;\tsize:8;\tsigned:0;\n", fields[i], 16 + 8 * i);
	snprintf(text + used, sizeof(text) - (size_t)used, "\nprint fmt: \"%s\"\n", name);
	snprintf(rel, sizeof(rel), "events/syscalls/%s/format", name);
	put(rel, text);
	snprintf(rel, sizeof(rel), "events/syscalls/%s/id", name);
	snprintf(idtext, sizeof(idtext), "%d\n", id);
	put(rel, idtext);
}

/* The VMA tree's write, as the kernel's format has it. */
static const char ma_write_format[] =
	"name: ma_write\nID: 900\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:const char * fn;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long min;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long max;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long index;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long last;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long piv;\toffset:48;\tsize:8;\tsigned:0;\n"
	"\tfield:void * val;\toffset:56;\tsize:8;\tsigned:0;\n"
	"\tfield:void * node;\toffset:64;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"range:%lu-%lu val %p\", REC->index, REC->last, REC->val\n";

static int setup(void **state)
{
	static const char *const ret[] = { "ret" };
	char name[64];
	size_t i;
	int n;

	(void)state;
	if (fake_tracefs_new(root))
		return -1;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		for (n = 0; n < 5 && calls[i].args[n]; n++)
			;
		snprintf(name, sizeof(name), "sys_enter_%s", calls[i].name);
		put_format(name, calls[i].id, calls[i].args, n);
		snprintf(name, sizeof(name), "sys_exit_%s", calls[i].name);
		put_format(name, calls[i].id + 1, ret, 1);
	}
	put("events/maple_tree/ma_write/format", ma_write_format);
	put("events/maple_tree/ma_write/id", "900\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

/* --- writing a recording ---------------------------------------------------- */

#define TP_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)
#define FAULT_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

struct rec {
	struct ms_pdwriter *w;
	struct perf_event_attr attrs[8];
	uint64_t ids[8];
	struct ms_pdwriter_evsel ev[8];
	char names[8][64];
	size_t n;
	struct ms_buf td;
	int fd;
};

/* A recording with the page-fault event and the given halves ("sys_enter_munmap", ...). */
static void open_rec(struct rec *r, const char *const *tps, size_t n)
{
	char *argv[] = { "synthetic" };
	const char *paths[8];
	struct ms_pdwriter_opts o = { 0 };
	uint64_t id;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->attrs[0] = (struct perf_event_attr){ .size = sizeof(r->attrs[0]), .type = PERF_TYPE_SOFTWARE,
						.config = PERF_COUNT_SW_PAGE_FAULTS, .sample_type = FAULT_TYPE,
						.sample_period = 1, .sample_id_all = 1, .mmap2 = 1, .task = 1 };
	r->ids[0] = FAULT_ID;
	r->ev[0] = (struct ms_pdwriter_evsel){ &r->attrs[0], "page-faults", &r->ids[0], 1 };
	for (i = 0; i < n; i++) {
		snprintf(r->names[i], sizeof(r->names[i]), "%s/%s", strcmp(tps[i], "ma_write") ? "syscalls" :
			 "maple_tree", tps[i]);
		paths[i] = r->names[i];
		assert_int_equal(ms_tracefs_event_id(root, strcmp(tps[i], "ma_write") ? "syscalls" : "maple_tree",
						     tps[i], &id), 0);
		r->attrs[i + 1] = (struct perf_event_attr){ .size = sizeof(r->attrs[0]), .type = PERF_TYPE_TRACEPOINT,
							    .config = id, .sample_type = TP_TYPE, .sample_period = 1,
							    .sample_id_all = 1 };
		r->ids[i + 1] = id;                  /* the event's id: its tracepoint's, for these tests */
		r->ev[i + 1] = (struct ms_pdwriter_evsel){ &r->attrs[i + 1], tps[i], &r->ids[i + 1], 1 };
	}
	r->n = n + 1;
	ms_buf_init(&r->td);
	assert_int_equal(ms_tracefs_tracing_data(root, paths, n, &r->td), 0);
	o = (struct ms_pdwriter_opts){ r->ev, r->n, r->td.data, r->td.len, 1, argv, CLOCK_MONOTONIC, false, 0 };
	r->fd = memfd_create("syscalls", 0);
	r->w = ms_pdwriter_new(r->fd, &o);
	assert_non_null(r->w);
}

static void close_rec(struct rec *r)
{
	assert_int_equal(ms_pdwriter_close(r->w), 0);
	ms_pdwriter_free(r->w);
	ms_buf_release(&r->td);
}

/* An MMAP2 of anonymous memory by thread tid of PID. */
static void put_map_by(struct rec *r, uint64_t t, uint32_t tid, uint64_t addr, uint64_t len)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, PID, tid, addr, len, 0,
			       0, 0, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon", PID, tid, t, FAULT_ID,
			       0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &m.h), 0);
}

static void put_map(struct rec *r, uint64_t t, uint64_t addr, uint64_t len)
{
	put_map_by(r, t, PID, addr, len);
}

/*
 * A tracepoint sample of tid: the syscall's entry (its arguments) or exit
 * (args[0]: its return value); or ma_write's fields from min on.
 */
static void put_tp(struct rec *r, const char *tp, uint64_t t, uint32_t tid, const uint64_t *args, int n)
{
	unsigned char buf[256] = { 0 };
	struct perf_event_header *h = (void *)buf;
	uint32_t pid = PID, raw_size = (uint32_t)(16 + 8 * n + 4);
	uint64_t id, v[4];
	uint16_t type;
	size_t off;

	assert_int_equal(ms_tracefs_event_id(root, strcmp(tp, "ma_write") ? "syscalls" : "maple_tree", tp, &id), 0);
	v[0] = id;                       /* IDENTIFIER */
	v[1] = 0x400000;                 /* IP */
	memcpy(&v[2], &pid, 4);
	memcpy((char *)&v[2] + 4, &tid, 4);
	v[3] = t;
	memcpy(buf + 8, v, 32);
	memcpy(buf + 40, &raw_size, 4);
	off = 44;
	type = (uint16_t)id;
	memcpy(buf + off, &type, 2);     /* common_type */
	memcpy(buf + off + 4, &tid, 4);  /* common_pid */
	memcpy(buf + off + 16, args, (size_t)n * 8);
	*h = (struct perf_event_header){ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(off + raw_size) };
	assert_int_equal(h->size % 8, 0);
	assert_int_equal(ms_pdwriter_write(r->w, h), 0);
}

static void enter(struct rec *r, const char *call, uint64_t t, uint32_t tid, const uint64_t *args, int n)
{
	char tp[64];

	snprintf(tp, sizeof(tp), "sys_enter_%s", call);
	put_tp(r, tp, t, tid, args, n);
}

static void leave(struct rec *r, const char *call, uint64_t t, uint32_t tid, int64_t ret)
{
	char tp[64];
	uint64_t v = (uint64_t)ret;

	snprintf(tp, sizeof(tp), "sys_exit_%s", call);
	put_tp(r, tp, t, tid, &v, 1);
}

/* The VMA tree's write by tid over [start, end): val, a VMA (a kernel pointer), or NULL (a hole). */
static void tree_write(struct rec *r, uint64_t t, uint32_t tid, uint64_t start, uint64_t end, uint64_t val)
{
	uint64_t f[7] = { 0, UINT64_MAX, start, end - 1, 0, val, 0xffff888100000000ULL };

	put_tp(r, "ma_write", t, tid, f, 7);     /* fn's 8 bytes take __syscall_nr's place */
}

/* A FORK record: tid of PID made a new process. */
static void put_fork(struct rec *r, uint64_t t, uint32_t tid, uint32_t child)
{
	struct fork_rec f = { { PERF_RECORD_FORK, 0, sizeof(f) }, child, PID, child, tid, t, child, child, t,
			      FAULT_ID, 0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &f.h), 0);
}

/* An exec's COMM record: tid of PID runs a new program from t on. */
static void put_exec(struct rec *r, uint64_t t, uint32_t tid)
{
	struct comm_rec c = { { PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(c) }, PID, tid, "true", PID, tid,
			      t, FAULT_ID, 0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &c.h), 0);
}

/* --- replaying it ------------------------------------------------------------ */

struct seen {
	enum ms_aspace_op op[32];
	uint64_t start[32], end[32];
	uint32_t tid[32];
	int n;
};

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct seen *w = ctx;

	(void)s;
	(void)ev;
	if (c->op != MS_OP_MAP && w->n < 32) {
		w->op[w->n] = c->op;
		w->start[w->n] = c->start;
		w->end[w->n] = c->end;
		w->tid[w->n++] = c->tid;
	}
	return 0;
}

static struct ms_session *replay(struct rec *r, struct seen *w)
{
	static const struct ms_analysis changes = { .name = "changes", .change = on_change };
	char path[64];
	struct ms_session *s;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	s = ms_session_open(path, NULL);
	assert_non_null(s);
	memset(w, 0, sizeof(*w));
	assert_int_equal(ms_session_add(s, &changes, w), 0);
	assert_int_equal(ms_session_run(s), 0);
	close(r->fd);
	return s;
}

static bool mapped(struct ms_session *s, uint64_t addr)
{
	return ms_aspace_lookup(ms_session_aspace(s), PID, addr) != NULL;
}

static const char *const both[] = {
	"sys_enter_munmap", "sys_exit_munmap", "sys_enter_mremap", "sys_exit_mremap",
	"sys_enter_mlock", "sys_exit_mlock",
};

/* An entry and its exit: applied when the call succeeded, not when it failed; an exit alone is left. */
static void pairs_by_thread(void **state)
{
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[5];

	(void)state;
	open_rec(&r, both, sizeof(both) / sizeof(both[0]));
	put_map(&r, 1, A, 32 * P);
	a[0] = A + 4 * P, a[1] = 2 * P;
	enter(&r, "munmap", 10, PID, a, 2);
	leave(&r, "munmap", 11, PID, 0);
	a[0] = A + 8 * P, a[1] = P;
	enter(&r, "munmap", 20, PID, a, 2);
	leave(&r, "munmap", 21, PID, -EINVAL);       /* failed: nothing changes */
	/* Two threads, their calls interleaved: each exit closes its own thread's entry. */
	a[0] = A + 10 * P, a[1] = P;
	enter(&r, "munmap", 30, PID + 1, a, 2);
	a[0] = A + 12 * P, a[1] = P;
	enter(&r, "munmap", 31, PID + 2, a, 2);
	leave(&r, "munmap", 32, PID + 2, 0);
	leave(&r, "munmap", 33, PID + 1, -ENOMEM);
	leave(&r, "munmap", 40, PID + 3, 0);         /* an exit whose entry was not recorded */
	/* mremap: the result says where the memory went. */
	a[0] = A + 14 * P, a[1] = 2 * P, a[2] = 2 * P, a[3] = MREMAP_MAYMOVE, a[4] = 0;
	enter(&r, "mremap", 50, PID, a, 5);
	leave(&r, "mremap", 51, PID, (int64_t)0x20000000);
	/* mlock of an unaligned range: rounded out to pages. */
	a[0] = A + 20 * P + 100, a[1] = P;
	enter(&r, "mlock", 60, PID, a, 2);
	leave(&r, "mlock", 61, PID, 0);
	close_rec(&r);

	s = replay(&r, &w);
	assert_int_equal(w.n, 4);
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.start[0], A + 4 * P);
	assert_int_equal(w.end[0], A + 6 * P);
	assert_int_equal(w.op[1], MS_OP_UNMAP);
	assert_int_equal(w.tid[1], PID + 2);
	assert_int_equal(w.start[1], A + 12 * P);
	assert_int_equal(w.op[2], MS_OP_REMAP);
	assert_int_equal(w.op[3], MS_OP_LOCK);
	assert_int_equal(w.start[3], A + 20 * P);
	assert_int_equal(w.end[3], A + 22 * P);
	assert_false(mapped(s, A + 4 * P));
	assert_false(mapped(s, A + 5 * P));
	assert_true(mapped(s, A + 6 * P));
	assert_true(mapped(s, A + 8 * P));            /* the failed munmap */
	assert_true(mapped(s, A + 10 * P));           /* the other thread's, failed */
	assert_false(mapped(s, A + 12 * P));
	assert_false(mapped(s, A + 14 * P));
	assert_true(mapped(s, 0x20000000));
	assert_true(mapped(s, 0x20000000 + P));
	ms_session_free(s);
}

/* Entries only (perf record -e syscalls:sys_enter_munmap): what an entry says alone is applied. */
static void lone_entries(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_enter_mremap", "sys_exit_mremap" };
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[2] = { A + 4 * P, 2 * P };

	(void)state;
	open_rec(&r, tps, 3);
	put_map(&r, 1, A, 32 * P);
	enter(&r, "munmap", 10, PID, a, 2);
	close_rec(&r);
	s = replay(&r, &w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_false(mapped(s, A + 4 * P));
	assert_true(mapped(s, A + 6 * P));
	ms_session_free(s);
}

/*
 * Failed part-way: mprotect changed the VMAs its MMAP2 records show, up to
 * the failure point; madvise over a hole advised every VMA; mlock locked
 * up to the gap. A failed mprotect with no MMAP2 changed nothing.
 */
static void failed_part_way(void **state)
{
	static const char *const tps[] = { "sys_enter_mprotect", "sys_exit_mprotect", "sys_enter_madvise",
					   "sys_exit_madvise", "sys_enter_mlock", "sys_exit_mlock" };
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[3];

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 8 * P);
	put_map(&r, 2, A + 9 * P, 8 * P);
	a[0] = A + 2 * P, a[1] = 10 * P, a[2] = PROT_READ;
	enter(&r, "mprotect", 10, PID, a, 3);
	put_map(&r, 11, A + 2 * P, 6 * P);             /* mprotect_fixup's record of the VMA it changed */
	leave(&r, "mprotect", 12, PID, -ENOMEM);
	a[0] = A + 8 * P, a[1] = 4 * P, a[2] = PROT_NONE;
	enter(&r, "mprotect", 20, PID, a, 3);
	leave(&r, "mprotect", 21, PID, -ENOMEM);       /* from the hole: nothing changed */
	a[0] = A, a[1] = 16 * P, a[2] = MADV_DONTDUMP;
	enter(&r, "madvise", 30, PID, a, 3);
	leave(&r, "madvise", 31, PID, -ENOMEM);
	a[0] = A + 9 * P, a[1] = P, a[2] = MADV_DONTDUMP;
	enter(&r, "madvise", 40, PID, a, 3);
	leave(&r, "madvise", 41, PID, -EINVAL);        /* failed at the start: left out */
	a[0] = A + 4 * P, a[1] = 8 * P;
	enter(&r, "mlock", 50, PID, a, 2);
	leave(&r, "mlock", 51, PID, -ENOMEM);
	close_rec(&r);

	s = replay(&r, &w);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.op[0], MS_OP_PROTECT);
	assert_int_equal(w.start[0], A + 2 * P);
	assert_int_equal(w.end[0], A + 8 * P);
	assert_int_equal(ms_aspace_prot_at(ms_session_aspace(s), PID, A + 7 * P), PROT_READ);
	assert_int_equal(ms_aspace_prot_at(ms_session_aspace(s), PID, A + 9 * P), PROT_READ | PROT_WRITE);
	assert_int_equal(w.op[1], MS_OP_MADVISE);
	assert_int_equal(w.op[2], MS_OP_LOCK);
	ms_session_free(s);
}

/*
 * Calls in flight since before the recording (an attach): their entries
 * unseen, their writes of NULL into the VMA tree are unmaps where the
 * exit says an unmapping call succeeded, and nothing where the thread's
 * next record is an entry, a FORK or a failed exit. A store by another
 * thread between the write and the exit cuts the hole.
 */
static void in_flight(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "ma_write" };
	const uint64_t vma = 0xffff888123456000ULL;
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[2];

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);                    /* the maps read from /proc */
	tree_write(&r, 10, PID + 1, A + 4 * P, A + 6 * P, 0);
	leave(&r, "munmap", 11, PID + 1, 0);          /* its entry came before the events */
	tree_write(&r, 20, PID + 2, A + 8 * P, A + 9 * P, 0);
	a[0] = A + 30 * P, a[1] = P;
	enter(&r, "munmap", 21, PID + 2, a, 2);       /* a new call: the write was not one in flight */
	leave(&r, "munmap", 22, PID + 2, 0);
	tree_write(&r, 30, PID + 3, A + 12 * P, A + 16 * P, 0);
	tree_write(&r, 31, PID + 4, A + 13 * P, A + 14 * P, vma);   /* another thread maps there */
	leave(&r, "munmap", 32, PID + 3, 0);
	tree_write(&r, 40, PID + 5, A + 20 * P, A + 21 * P, 0);
	leave(&r, "munmap", 41, PID + 5, -EINVAL);
	tree_write(&r, 50, PID + 6, A + 22 * P, A + 23 * P, 0);   /* a fork's VM_DONTCOPY, in the child's tree */
	put_fork(&r, 51, PID + 6, 99);
	leave(&r, "munmap", 52, PID + 6, 0);
	a[0] = A + 31 * P, a[1] = P;
	enter(&r, "munmap", 60, PID + 7, a, 2);
	leave(&r, "munmap", 61, PID + 7, 0);
	tree_write(&r, 62, PID + 7, A + 24 * P, A + 25 * P, 0);   /* not in flight: its entries are seen */
	leave(&r, "munmap", 63, PID + 7, 0);
	close_rec(&r);

	s = replay(&r, &w);
	assert_false(mapped(s, A + 4 * P));
	assert_false(mapped(s, A + 5 * P));
	assert_true(mapped(s, A + 6 * P));
	assert_true(mapped(s, A + 8 * P));
	assert_false(mapped(s, A + 30 * P));
	assert_false(mapped(s, A + 12 * P));
	assert_true(mapped(s, A + 13 * P));
	assert_false(mapped(s, A + 14 * P));
	assert_false(mapped(s, A + 15 * P));
	assert_true(mapped(s, A + 16 * P));
	assert_true(mapped(s, A + 20 * P));
	assert_true(mapped(s, A + 22 * P));
	assert_false(mapped(s, A + 31 * P));
	assert_true(mapped(s, A + 24 * P));
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.start[0], A + 4 * P);
	assert_int_equal(w.end[0], A + 6 * P);
	ms_session_free(s);
}

/*
 * The kernel's write of NULL takes in the gaps beside what the call
 * removed (the maple tree widens a NULL store over its NULL neighbours;
 * after brk gives pages back, it reaches up to the lowest mmap): the
 * change is what was mapped in it, and over nothing mapped, no change.
 */
static void in_flight_reach(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "ma_write" };
	/* Pages of A after it: munmap(A + 4P, 4P) wrote NULL up to the map at A + 16P. */
	static const struct { uint64_t page; bool mapped; } want[] = {
		{ 3, true }, { 4, false }, { 7, false }, { 8, false }, { 16, true }, { 23, true },
	};
	struct seen w;
	struct rec r;
	struct ms_session *s;
	size_t i;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 8 * P);
	put_map(&r, 2, A + 16 * P, 8 * P);
	tree_write(&r, 10, PID + 1, A + 4 * P, A + 16 * P, 0);
	leave(&r, "munmap", 11, PID + 1, 0);
	tree_write(&r, 20, PID + 2, A + 40 * P, A + 64 * P, 0);   /* over nothing: /proc was read after it */
	leave(&r, "munmap", 21, PID + 2, 0);
	close_rec(&r);

	s = replay(&r, &w);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(mapped(s, A + want[i].page * P), want[i].mapped);
	assert_int_equal(w.n, 1);              /* the unmap of the page range alone */
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.start[0], A + 4 * P);
	assert_int_equal(w.end[0], A + 8 * P);
	ms_session_free(s);
}

struct vmas { uint64_t s[8], e[8]; int n; };

static void collect(const struct ms_vma *v, void *ctx)
{
	struct vmas *out = ctx;

	if (out->n < 8) {
		out->s[out->n] = v->start;
		out->e[out->n++] = v->end;
	}
}

/*
 * munmap refused (-EPERM) at a sealed VMA: nothing is unmapped, but the
 * VMA holding its start, not sealed, was split there by the kernel before
 * it reached the seal, and stays split.
 */
static void refused_at_seal(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "sys_enter_mseal",
					   "sys_exit_mseal" };
	struct vmas v = { .n = 0 };
	struct seen w;
	struct rec r;
	struct ms_session *s;
	uint64_t a[3];

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	a[0] = A + 8 * P, a[1] = 2 * P, a[2] = 0;
	enter(&r, "mseal", 10, PID, a, 3);
	leave(&r, "mseal", 11, PID, 0);
	a[0] = A + 6 * P, a[1] = 4 * P;
	enter(&r, "munmap", 20, PID, a, 2);
	leave(&r, "munmap", 21, PID, -EPERM);
	close_rec(&r);

	s = replay(&r, &w);
	assert_int_equal(w.n, 0);
	assert_true(mapped(s, A + 6 * P));
	assert_true(mapped(s, A + 8 * P));
	assert_int_equal(ms_aspace_for_each_vma(ms_session_aspace(s), PID, collect, &v), 0);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.e[0], A + 6 * P);
	assert_int_equal(v.s[1], A + 6 * P);
	assert_int_equal(v.e[1], A + 8 * P);
	assert_int_equal(v.e[2], A + 10 * P);
	assert_int_equal(v.e[3], A + 32 * P);
	ms_session_free(s);
}

/*
 * execve copies its arguments onto the new program's stack before the
 * exec, and the kernel records that stack's growth as maps of the caller:
 * they belong to the address space to come. Passed over where the execve
 * fails (the caller's maps as they were) and where it execs (the new
 * program's maps, after the exec, taken).
 */
static void exec_stack_of_the_next_program(void **state)
{
	static const char *const tps[] = { "sys_enter_execve", "sys_exit_execve", "sys_enter_munmap",
					   "sys_exit_munmap" };
	const uint64_t top = 0x7ffffffff000ULL, b = 0x20000000ULL, none[1] = { 0 };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "execve", 10, PID, none, 0);
	put_map(&r, 11, top - 2 * P, 2 * P);          /* past a page of arguments: grown */
	put_map(&r, 12, top - 3 * P, 3 * P);
	leave(&r, "execve", 13, PID, -8);               /* ENOEXEC: no program */
	put_map(&r, 14, A + 64 * P, P);                 /* the caller's own, after */
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, top - P));
	assert_false(mapped(s, top - 3 * P));
	assert_true(mapped(s, A));
	assert_true(mapped(s, A + 64 * P));
	ms_session_free(s);

	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "execve", 20, PID, none, 0);
	put_map(&r, 21, top - 2 * P, 2 * P);
	put_exec(&r, 22, PID);
	put_map(&r, 23, b, 4 * P);                      /* the new program's */
	leave(&r, "execve", 24, PID, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, top - P));
	assert_false(mapped(s, A));                     /* the exec took the old maps */
	assert_true(mapped(s, b));
	ms_session_free(s);

	/*
	 * From a thread other than the leader: the exec's record names the
	 * leader (the caller takes its tid), and the caller's own tid, given
	 * again later to a new thread, maps as any.
	 */
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "execve", 20, PID + 1, none, 0);
	put_map_by(&r, 21, PID + 1, top - 2 * P, 2 * P);
	put_exec(&r, 22, PID);
	put_map(&r, 23, b, 4 * P);
	leave(&r, "execve", 24, PID, 0);
	put_map_by(&r, 30, PID + 1, b + 64 * P, 2 * P);   /* a new thread with the tid again: its stack */
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, top - P));
	assert_true(mapped(s, b));
	assert_true(mapped(s, b + 64 * P));
	ms_session_free(s);
}

/*
 * A munmap done before it returns: thread PID + 1's munmap of [A, A + 32
 * pages) lets go of the mmap lock, thread PID + 2 maps 32 pages with no
 * address asked for and the kernel puts them at A, and only then does the
 * munmap return. The unmap is applied before the new map, not at its exit
 * (which unmapped the new map too). A map with MAP_FIXED proves nothing
 * (it may have been made before the unmap took the lock): that unmap
 * waits for its exit.
 */
static void unmap_overtaken(void **state)
{
	static const char *const tps[] = { "sys_enter_munmap", "sys_exit_munmap", "sys_enter_mmap", "sys_exit_mmap" };
	const uint64_t un[2] = { A, 32 * P }, b = A + 64 * P;
	uint64_t mm[5] = { 0, 32 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1 };
	struct ms_session *s;
	struct seen w;
	struct rec r;

	(void)state;
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "munmap", 10, PID + 1, un, 2);
	enter(&r, "mmap", 11, PID + 2, mm, 5);
	put_map_by(&r, 12, PID + 2, A, 32 * P);
	leave(&r, "mmap", 13, PID + 2, (int64_t)A);
	leave(&r, "munmap", 14, PID + 1, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_true(mapped(s, A));
	assert_true(mapped(s, A + 31 * P));
	assert_int_equal(w.n, 1);                       /* once: not again at its exit */
	assert_int_equal(w.op[0], MS_OP_UNMAP);
	assert_int_equal(w.tid[0], PID + 1);
	assert_int_equal(w.start[0], A);
	ms_session_free(s);

	/* MAP_FIXED, over another range the munmap holds: it comes off at the munmap's exit. */
	open_rec(&r, tps, sizeof(tps) / sizeof(tps[0]));
	put_map(&r, 1, A, 32 * P);
	enter(&r, "munmap", 10, PID + 1, un, 2);
	mm[0] = A + 8 * P;
	mm[1] = 4 * P;
	mm[3] |= MAP_FIXED;
	enter(&r, "mmap", 11, PID + 2, mm, 5);
	put_map_by(&r, 12, PID + 2, A + 8 * P, 4 * P);
	leave(&r, "mmap", 13, PID + 2, (int64_t)(A + 8 * P));
	leave(&r, "munmap", 14, PID + 1, 0);
	/* Another process's map at the same address proves nothing of this one's. */
	put_map(&r, 20, b, 32 * P);
	enter(&r, "munmap", 21, PID + 1, (const uint64_t[]){ b, 32 * P }, 2);
	mm[0] = 0;
	mm[1] = 32 * P;
	mm[3] &= ~(uint64_t)MAP_FIXED;
	enter(&r, "mmap", 22, PID + 2, mm, 5);
	leave(&r, "mmap", 23, PID + 2, (int64_t)(b + 64 * P));   /* no MMAP2 there: nothing named */
	leave(&r, "munmap", 24, PID + 1, 0);
	close_rec(&r);
	s = replay(&r, &w);
	assert_false(mapped(s, A + 8 * P));
	assert_false(mapped(s, A));
	assert_false(mapped(s, b));
	ms_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pairs_by_thread),
		cmocka_unit_test(lone_entries),
		cmocka_unit_test(failed_part_way),
		cmocka_unit_test(in_flight),
		cmocka_unit_test(in_flight_reach),
		cmocka_unit_test(refused_at_seal),
		cmocka_unit_test(exec_stack_of_the_next_program),
		cmocka_unit_test(unmap_overtaken),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
