/*
 * Synthetic recordings of syscalls for the unit tests of the stream's
 * syscall handling (unit/syscalls, unit/unmaps): a fake tracefs tree with
 * the formats of the syscalls' tracepoints and of the VMA tree's write
 * (setup, teardown), records written by hand (an MMAP2 by a thread, an
 * entry, an exit, a tree write, a FORK, an exec's COMM), and their replay
 * with the changes seen.
 */
#ifndef TESTS_UNIT_SYSCALL_RECS_H
#define TESTS_UNIT_SYSCALL_RECS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <mapscope/pdwriter.h>
#include <mapscope/session.h>

#include "kernel/tracefs.h"
#include "fake_tracefs.h"
#include "records.h"

#define P 4096ULL
#define A 0x10000000ULL
#define PID 7
#define FAULT_ID 100

static char root[] __attribute__((unused)) = "/tmp/ms-syscalls-XXXXXX";

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
	{ "io_destroy", 780, { "ctx" } },
	{ "prctl", 790, { "option", "arg2", "arg3", "arg4", "arg5" } },
	{ "pkey_mprotect", 800, { "start", "len", "prot", "pkey" } },
};

static inline void put(const char *rel, const char *text)
{
	fake_put(root, rel, text);
}

/* A syscall tracepoint's format as the kernel prints it: common fields, __syscall_nr, then 8-byte fields. */
static inline void put_format(const char *name, int id, const char *const *fields, int n)
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

static inline int setup(void **state)
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

static inline int teardown(void **state)
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
static inline void open_rec(struct rec *r, const char *const *tps, size_t n)
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

static inline void close_rec(struct rec *r)
{
	assert_int_equal(ms_pdwriter_close(r->w), 0);
	ms_pdwriter_free(r->w);
	ms_buf_release(&r->td);
}

/* An MMAP2 of anonymous memory by thread tid of PID, named name (7 bytes at most), with prot and flags. */
static inline void put_flagged_map(struct rec *r, uint64_t t, uint32_t tid, uint64_t addr, uint64_t len, uint32_t prot,
				   uint32_t flags, const char *name)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, PID, tid, addr, len, 0,
			       0, 0, 0, 0, prot, flags, "", PID, tid, t, FAULT_ID, 0, 0, FAULT_ID };

	memcpy(m.name, name, strnlen(name, sizeof(m.name) - 1));
	assert_int_equal(ms_pdwriter_write(r->w, &m.h), 0);
}

static inline void put_named_map(struct rec *r, uint64_t t, uint32_t tid, uint64_t addr, uint64_t len, uint32_t prot,
				 const char *name)
{
	put_flagged_map(r, t, tid, addr, len, prot, MAP_PRIVATE, name);
}

/* An MMAP2 of anonymous memory by thread tid of PID. */
static inline void put_map_by(struct rec *r, uint64_t t, uint32_t tid, uint64_t addr, uint64_t len)
{
	put_named_map(r, t, tid, addr, len, PROT_READ | PROT_WRITE, "//anon");
}

static inline void put_map(struct rec *r, uint64_t t, uint64_t addr, uint64_t len)
{
	put_map_by(r, t, PID, addr, len);
}

/*
 * A tracepoint sample of tid: the syscall's entry (its arguments) or exit
 * (args[0]: its return value); or ma_write's fields from min on.
 */
static inline void put_tp(struct rec *r, const char *tp, uint64_t t, uint32_t tid, const uint64_t *args, int n)
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

static inline void enter(struct rec *r, const char *call, uint64_t t, uint32_t tid, const uint64_t *args, int n)
{
	char tp[64];

	snprintf(tp, sizeof(tp), "sys_enter_%s", call);
	put_tp(r, tp, t, tid, args, n);
}

static inline void leave(struct rec *r, const char *call, uint64_t t, uint32_t tid, int64_t ret)
{
	char tp[64];
	uint64_t v = (uint64_t)ret;

	snprintf(tp, sizeof(tp), "sys_exit_%s", call);
	put_tp(r, tp, t, tid, &v, 1);
}

/* The VMA tree's write by tid over [start, end): val, a VMA (a kernel pointer), or NULL (a hole). */
static inline void tree_write(struct rec *r, uint64_t t, uint32_t tid, uint64_t start, uint64_t end, uint64_t val)
{
	uint64_t f[7] = { 0, UINT64_MAX, start, end - 1, 0, val, 0xffff888100000000ULL };

	put_tp(r, "ma_write", t, tid, f, 7);     /* fn's 8 bytes take __syscall_nr's place */
}

/* A FORK record: tid of PID made a new process. */
static inline void put_fork(struct rec *r, uint64_t t, uint32_t tid, uint32_t child)
{
	struct fork_rec f = { { PERF_RECORD_FORK, 0, sizeof(f) }, child, PID, child, tid, t, child, child, t,
			      FAULT_ID, 0, 0, FAULT_ID };

	assert_int_equal(ms_pdwriter_write(r->w, &f.h), 0);
}

/* An exec's COMM record: tid of PID runs a new program from t on. */
static inline void put_exec(struct rec *r, uint64_t t, uint32_t tid)
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
	int advice[32];
	int n;
	bool populate[32];       /* each map's, in turn */
	uint32_t map_flags[32];
	int maps;
};

static inline int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct seen *w = ctx;

	(void)s;
	if (c->op == MS_OP_MAP && ev->kind == MS_EV_MAP && w->maps < 32) {
		w->map_flags[w->maps] = ev->map.flags;
		w->populate[w->maps++] = ev->map.populate;
	}
	if (c->op != MS_OP_MAP && w->n < 32) {
		w->op[w->n] = c->op;
		w->start[w->n] = c->start;
		w->end[w->n] = c->end;
		w->advice[w->n] = c->advice;
		w->tid[w->n++] = c->tid;
	}
	return 0;
}

static inline struct ms_session *replay(struct rec *r, struct seen *w)
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

static inline bool mapped(struct ms_session *s, uint64_t addr)
{
	return ms_aspace_lookup(ms_session_aspace(s), PID, addr) != NULL;
}

#endif
