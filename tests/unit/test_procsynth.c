/*
 * /proc/PID/maps parsing and the MMAP2/COMM records built from it; the
 * walk of a process's threads, on a fake /proc that gains threads while
 * it is walked.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "kernel/procsynth.h"
#include "perfdata/format.h"

static void parses_file_mapping(void **state)
{
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line("55a01bcb1000-55a01bcb5000 r-xp 00002000 fe:00 248139"
					    "                    /usr/bin/true\n", &e), 0);
	assert_int_equal(e.start, 0x55a01bcb1000ULL);
	assert_int_equal(e.end, 0x55a01bcb5000ULL);
	assert_int_equal(e.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(e.flags, MAP_PRIVATE);
	assert_int_equal(e.pgoff, 0x2000);
	assert_int_equal(e.maj, 0xfe);
	assert_int_equal(e.min, 0);
	assert_int_equal(e.ino, 248139);
	assert_string_equal(e.name, "/usr/bin/true");
}

static void parses_anon_shared_and_odd_names(void **state)
{
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line("7f00-8000 ---p 00000000 00:00 0 \n", &e), 0);
	assert_int_equal(e.prot, 0);
	assert_string_equal(e.name, "");
	assert_int_equal(ms_maps_parse_line("7f000-80000 rw-s 00000000 00:01 7 /SYSV00000000 (deleted)\n", &e), 0);
	assert_int_equal(e.flags, MAP_SHARED);
	assert_int_equal(e.prot, PROT_READ | PROT_WRITE);
	assert_string_equal(e.name, "/SYSV00000000 (deleted)");
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p 0 08:01 12 /a dir/with spaces", &e), 0);
	assert_string_equal(e.name, "/a dir/with spaces");
}

static void rejects_garbage(void **state)
{
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line("", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("zz-1000 r--p 0 0:0 0", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("2000-1000 r--p 0 0:0 0", &e), -EINVAL);  /* end < start */
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p 0 08 12 x", &e), -EINVAL);
	assert_int_equal(ms_maps_parse_line("1000-2000 r--p 0 08:01 x", &e), -EINVAL);
}

/* TID, TIME, ID, CPU, IDENTIFIER: the trailer where no sample_type is given. */
#define FULL_TRAILER 40

static void builds_mmap2_record(void **state)
{
	struct ms_sample_id sid = { .pid = 10, .tid = 11, .time = 123, .id = 7, .identifier = 7 };
	struct ms_maps_entry e;
	struct perf_event_header *h;
	struct ms_buf b;
	const uint64_t *u;
	const uint32_t *w;

	ms_buf_init(&b);
	assert_int_equal(ms_maps_parse_line("7f0000001000-7f0000003000 rw-p 00000000 00:00 0", &e), 0);
	ms_synth_mmap2(&b, &e, &sid);
	assert_int_equal(ms_buf_error(&b), 0);
	h = (struct perf_event_header *)b.data;
	assert_int_equal(h->type, PERF_RECORD_MMAP2);
	assert_int_equal(h->size, b.len);
	assert_int_equal(h->size % 8, 0);
	assert_true(h->misc & PERF_RECORD_MISC_MMAP_DATA);    /* not executable */
	w = (const uint32_t *)(h + 1);
	assert_int_equal(w[0], 10);
	assert_int_equal(w[1], 10);                             /* the process's, as perf writes it */
	u = (const uint64_t *)(w + 2);
	assert_int_equal(u[0], 0x7f0000001000ULL);             /* addr */
	assert_int_equal(u[1], 0x2000);                         /* len */
	assert_string_equal((const char *)(b.data + 72), "//anon");  /* after prot, flags */
	/* The sample_id trailer ends the record: all five fields where no sample_type is given. */
	assert_memory_equal(b.data + b.len - FULL_TRAILER, &sid, FULL_TRAILER);
	ms_buf_release(&b);
}

/*
 * The trailer as the event's sample_type lays it out: with TID, TIME and
 * IDENTIFIER alone (a page-fault event of record's), 24 bytes, and the
 * time where a reader takes it, 16 bytes from the end.
 */
static void trailer_follows_sample_type(void **state)
{
	struct ms_sample_id sid = { .pid = 10, .tid = 11, .time = 123, .id = 7, .cpu = 1, .identifier = 9,
				    .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						   PERF_SAMPLE_ADDR | PERF_SAMPLE_IDENTIFIER };
	struct ms_maps_entry e;
	struct ms_buf b;
	const unsigned char *end;
	uint32_t w[2];
	uint64_t u[2];

	(void)state;
	ms_buf_init(&b);
	assert_int_equal(ms_maps_parse_line("7f0000001000-7f0000003000 rw-p 00000000 00:00 0", &e), 0);
	ms_synth_mmap2(&b, &e, &sid);
	assert_int_equal(ms_buf_error(&b), 0);
	assert_int_equal(b.len, 72 + 8 + 24);                   /* "//anon" padded to 8, then 24 */
	end = b.data + b.len;
	memcpy(w, end - 24, 8);
	memcpy(u, end - 16, 16);
	assert_int_equal(w[0], 10);
	assert_int_equal(w[1], 11);
	assert_int_equal(u[0], 123);
	assert_int_equal(u[1], 9);
	ms_buf_release(&b);
}

static void builds_comm_record(void **state)
{
	struct ms_sample_id sid = { .pid = 3, .tid = 4 };
	struct perf_event_header *h;
	struct ms_buf b;

	ms_buf_init(&b);
	ms_synth_comm(&b, "worker", &sid);
	h = (struct perf_event_header *)b.data;
	assert_int_equal(h->type, PERF_RECORD_COMM);
	assert_int_equal(h->size, 8 + 8 + 8 + FULL_TRAILER);    /* "worker\0" padded to 8 */
	assert_string_equal((const char *)(b.data + 16), "worker");
	ms_buf_release(&b);
}


/* A fake /proc under a temporary directory. */
static char root[64];

static int make_root(void **state)
{
	snprintf(root, sizeof(root), "/tmp/ms-proc-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void put_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void add_thread(pid_t tgid, pid_t tid)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d", root, (int)tgid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task", root, (int)tgid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, (int)tgid, (int)tid);
	assert_int_equal(mkdir(path, 0700), 0);
}

/* What fn saw, and the threads it makes as it sees others: spawn[i] is made when spawner[i] is seen. */
struct walk_log {
	pid_t tgid;
	pid_t seen[64];
	int n;
	pid_t spawner[8], spawn[8];
	int nr_spawn;
	bool endless;                /* every thread seen makes another */
	pid_t fail_at;               /* fn fails with -EPERM there */
};

static int log_task(pid_t tid, void *ctx)
{
	struct walk_log *l = ctx;
	int i;

	if (tid == l->fail_at)
		return -EPERM;
	assert_true(l->n < 64);
	l->seen[l->n++] = tid;
	for (i = 0; i < l->nr_spawn; i++)
		if (l->spawner[i] == tid)
			add_thread(l->tgid, l->spawn[i]);
	if (l->endless)
		add_thread(l->tgid, tid + 1);
	return tid == 301 ? -ESRCH : 0;      /* 301 "exits" as its events open */
}

static int count_of(const struct walk_log *l, pid_t tid)
{
	int i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->seen[i] == tid;
	return n;
}

/*
 * A thread made while the walk opens events for the others (103 by 100,
 * then 104 by 103, as a thread pool starting up) is found by a later
 * pass; each thread is handed out once, over passes and processes.
 */
static void walk_finds_threads_made_meanwhile(void **state)
{
	struct walk_log l = { .tgid = 100, .spawner = { 100, 103 }, .spawn = { 103, 104 }, .nr_spawn = 2 };
	struct ms_tidset seen;

	add_thread(100, 100);
	add_thread(100, 101);
	add_thread(100, 102);
	ms_tidset_init(&seen);
	assert_int_equal(ms_proc_walk_tasks(root, 100, &seen, log_task, &l), 0);
	assert_int_equal(l.n, 5);
	assert_int_equal(count_of(&l, 100), 1);
	assert_int_equal(count_of(&l, 101), 1);
	assert_int_equal(count_of(&l, 102), 1);
	assert_int_equal(count_of(&l, 103), 1);
	assert_int_equal(count_of(&l, 104), 1);
	assert_true(ms_tidset_has(&seen, 104));
	/* Walked again (a second -p of the same process): nothing new. */
	assert_int_equal(ms_proc_walk_tasks(root, 100, &seen, log_task, &l), 0);
	assert_int_equal(l.n, 5);
	ms_tidset_release(&seen);
}

/* A process that makes threads without end does not hold the walk forever; a gone thread is no error. */
static void walk_is_bounded_and_passes_over_gone_threads(void **state)
{
	struct walk_log l = { .tgid = 300, .endless = true };
	struct ms_tidset seen;

	add_thread(300, 300);
	ms_tidset_init(&seen);
	assert_int_equal(ms_proc_walk_tasks(root, 300, &seen, log_task, &l), 0);
	assert_int_equal(l.n, MS_PROC_WALK_PASSES);
	assert_int_equal(count_of(&l, 301), 1);
	ms_tidset_release(&seen);
}

static void walk_reports_a_gone_process_and_fn_errors(void **state)
{
	struct walk_log l = { .tgid = 400, .fail_at = 401 };
	struct ms_tidset seen;

	ms_tidset_init(&seen);
	assert_int_equal(ms_proc_walk_tasks(root, 999, &seen, log_task, &l), -ENOENT);
	add_thread(400, 401);
	assert_int_equal(ms_proc_walk_tasks(root, 400, &seen, log_task, &l), -EPERM);
	assert_false(ms_tidset_has(&seen, 401));
	ms_tidset_release(&seen);
}

struct collected {
	unsigned char recs[4096];
	size_t len;
	int nr;
	pid_t each_tid[4];           /* the threads the per-thread hook was called for, */
	int each_after[4];           /* and how many records had come by then */
	int nr_each;
};

/* The per-thread hook: called once per thread, right after its COMM. */
static int each_thread(pid_t tid, void *ctx)
{
	struct collected *c = ctx;

	assert_true(c->nr_each < 4);
	c->each_tid[c->nr_each] = tid;
	c->each_after[c->nr_each++] = c->nr;
	return 0;
}

static int collect(const struct perf_event_header *h, void *ctx)
{
	struct collected *c = ctx;

	assert_true(c->len + h->size <= sizeof(c->recs));
	memcpy(c->recs + c->len, h, h->size);
	c->len += h->size;
	c->nr++;
	return 0;
}

static const struct perf_event_header *nth(const struct collected *c, int n)
{
	size_t off = 0;

	while (n--)
		off += ((const struct perf_event_header *)(c->recs + off))->size;
	return (const void *)(c->recs + off);
}

/* A COMM per thread (the per-thread hook after each), then the leader's maps, each with the trailer given. */
static void synthesizes_a_process_from_proc(void **state)
{
	struct ms_sample_id sid = { .time = 5000, .id = 9, .identifier = 9 };
	const struct perf_record_comm *c0, *c1, *lo, *hi;
	const struct perf_record_mmap2 *m;
	struct collected c = { .nr = 0 };

	add_thread(500, 500);
	add_thread(500, 501);
	put_file("500/task/500/comm", "server\n");
	put_file("500/task/501/comm", "worker-1\n");
	put_file("500/task/500/maps",
		 "55a0000000-55a0002000 r-xp 00001000 fe:00 77 /usr/bin/server\n"
		 "7ffd0000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n");
	assert_int_equal(ms_proc_synthesize(root, 500, &sid, each_thread, &c, collect, &c), 0);
	assert_int_equal(c.nr, 4);
	c0 = (const void *)nth(&c, 0);
	c1 = (const void *)nth(&c, 1);
	assert_int_equal(c0->header.type, PERF_RECORD_COMM);
	assert_int_equal(c1->header.type, PERF_RECORD_COMM);
	lo = c0->tid < c1->tid ? c0 : c1;    /* in the directory's order */
	hi = lo == c0 ? c1 : c0;
	assert_int_equal(lo->pid, 500);
	assert_int_equal(lo->tid, 500);
	assert_string_equal(lo->comm, "server");
	assert_int_equal(hi->pid, 500);
	assert_int_equal(hi->tid, 501);
	assert_string_equal(hi->comm, "worker-1");
	assert_int_equal(c.nr_each, 2);            /* each thread, after its own COMM, before the maps */
	assert_int_equal(c.each_tid[0], (pid_t)c0->tid);
	assert_int_equal(c.each_after[0], 1);
	assert_int_equal(c.each_tid[1], (pid_t)c1->tid);
	assert_int_equal(c.each_after[1], 2);
	m = (const void *)nth(&c, 2);
	assert_int_equal(m->header.type, PERF_RECORD_MMAP2);
	assert_int_equal(m->pid, 500);
	assert_int_equal(m->tid, 500);
	assert_int_equal(m->start, 0x55a0000000ULL);
	assert_int_equal(m->len, 0x2000);
	assert_int_equal(m->pgoff, 0x1000);
	assert_int_equal(m->ino, 77);
	assert_int_equal(m->prot, PROT_READ | PROT_EXEC);
	assert_string_equal(m->filename, "/usr/bin/server");
	sid.pid = 500;
	sid.tid = 0;                         /* no thread's: not one inside a call of its own */
	assert_memory_equal((const char *)m + m->header.size - FULL_TRAILER, &sid, FULL_TRAILER);
	m = (const void *)nth(&c, 3);
	assert_string_equal(m->filename, "[stack]");
	assert_int_equal(ms_proc_synthesize(root, 501, &sid, NULL, NULL, collect, &c), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_file_mapping),
		cmocka_unit_test(parses_anon_shared_and_odd_names),
		cmocka_unit_test(rejects_garbage),
		cmocka_unit_test(builds_mmap2_record),
		cmocka_unit_test(trailer_follows_sample_type),
		cmocka_unit_test(builds_comm_record),
		cmocka_unit_test_setup_teardown(walk_finds_threads_made_meanwhile, make_root, remove_root),
		cmocka_unit_test_setup_teardown(walk_is_bounded_and_passes_over_gone_threads, make_root, remove_root),
		cmocka_unit_test_setup_teardown(walk_reports_a_gone_process_and_fn_errors, make_root, remove_root),
		cmocka_unit_test_setup_teardown(synthesizes_a_process_from_proc, make_root, remove_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
