/*
 * The live source against what this process does to itself: a mapping it
 * makes, touches and unmaps must come out of the rings as an MMAP2 record
 * for its range, a page-fault sample at the touched address, and the
 * munmap's entry and exit tracepoint samples, all with this thread's ids.
 * Needs root or CAP_PERFMON and tracefs: skipped, with the reason, without.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/live.h>
#include <mapscope/log.h>

#include "perfdata/format.h"

struct seen {
	uint64_t start, len;             /* the mapping the test makes */
	uint32_t pid, tid;
	uint64_t enter_ids[256], exit_ids[256];   /* one id per CPU each */
	int nr_enter, nr_exit;
	int mmap2, enter, exit, fault, others;
};

/* The ids of the evsel named name, one per CPU it is open on; their count. */
static int evsel_ids(const struct ms_live *l, const char *name, uint64_t *ids, size_t max)
{
	size_t i, n;

	for (i = 0; i < ms_live_nr_evsels(l); i++)
		if (!strcmp(ms_live_evsel_name(l, i), name)) {
			const uint64_t *v = ms_live_evsel_ids(l, i, &n);

			memcpy(ids, v, (n < max ? n : max) * sizeof(*ids));
			return (int)n;
		}
	return 0;
}

static bool has_id(const uint64_t *ids, int n, uint64_t id)
{
	while (n-- > 0)
		if (ids[n] == id)
			return true;
	return false;
}

static int on_record(const struct perf_event_header *rec, void *ctx)
{
	struct seen *s = ctx;

	if (rec->type == PERF_RECORD_MMAP2) {
		const struct perf_record_mmap2 *m = (const void *)rec;

		/* The record covers the VMA, which may have merged with a neighbour. */
		if (m->pid == s->pid && m->start <= s->start && m->start + m->len >= s->start + s->len)
			s->mmap2++;
	} else if (rec->type == PERF_RECORD_SAMPLE) {
		const struct perf_record_sample_head *h = (const void *)rec;

		if (h->pid != s->pid || h->tid != s->tid)
			return 0;
		if (has_id(s->enter_ids, s->nr_enter, h->identifier))
			s->enter++;
		else if (has_id(s->exit_ids, s->nr_exit, h->identifier))
			s->exit++;
		else
			s->others++;
	}
	return 0;
}

static int count_faults(const struct perf_event_header *rec, void *ctx)
{
	struct seen *s = ctx;
	const struct perf_record_sample_head *h = (const void *)rec;
	uint64_t addr;

	on_record(rec, ctx);
	if (rec->type != PERF_RECORD_SAMPLE || h->tid != s->tid)
		return 0;
	/* A fault sample: IDENTIFIER, IP, TID, TIME, ADDR first, as DESIGN.md lays it out. */
	if (rec->size < sizeof(*h) + 16)
		return 0;
	memcpy(&addr, (const char *)rec + sizeof(*h) + 8, sizeof(addr));
	if (addr >= s->start && addr < s->start + s->len)
		s->fault++;
	return 0;
}

static void sees_what_this_thread_does(void **state)
{
	struct ms_live_opts o = { .fault_period = 1 };
	struct ms_live *l = ms_live_new(&o);
	struct seen s = { 0 };
	char *p;

	(void)state;
	assert_non_null(l);
	s.pid = (uint32_t)getpid();
	s.tid = (uint32_t)syscall(SYS_gettid);
	assert_int_equal(ms_live_add_task(l, (pid_t)s.tid), 0);
	s.nr_enter = evsel_ids(l, "syscalls:sys_enter_munmap", s.enter_ids, 256);
	s.nr_exit = evsel_ids(l, "syscalls:sys_exit_munmap", s.exit_ids, 256);
	assert_true(s.nr_enter > 0 && s.nr_enter <= 256 && s.nr_exit > 0 && s.nr_exit <= 256);
	assert_true(ms_live_nr_fds(l) > 0);
	assert_true(ms_live_fd(l, 0) >= 0);

	assert_int_equal(ms_live_enable(l), 0);
	p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	s.start = (uint64_t)(uintptr_t)p;
	s.len = 3 * 4096;
	p[0] = 1;
	p[2 * 4096] = 1;
	assert_int_equal(munmap(p, 3 * 4096), 0);
	assert_int_equal(ms_live_disable(l), 0);

	assert_true(ms_live_drain(l, count_faults, &s) > 0);
	assert_int_equal(s.mmap2, 1);
	assert_int_equal(s.fault, 2);        /* the two pages touched, once each */
	assert_true(s.enter >= 1);           /* the test's munmap, and perhaps cmocka's */
	assert_int_equal(s.enter, s.exit);
	ms_live_free(l);
}

/* A drain frees what it handed out: the second drain finds nothing. */
static void drain_frees_the_rings(void **state)
{
	struct ms_live_opts o = { .fault_period = 1 };
	struct ms_live *l = ms_live_new(&o);
	struct seen s = { 0 };
	volatile char *p;

	(void)state;
	assert_non_null(l);
	s.pid = (uint32_t)getpid();
	s.tid = (uint32_t)syscall(SYS_gettid);
	assert_int_equal(ms_live_add_task(l, (pid_t)s.tid), 0);
	assert_int_equal(ms_live_enable(l), 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	p[0] = 1;
	munmap((void *)p, 4096);
	assert_int_equal(ms_live_disable(l), 0);
	assert_true(ms_live_drain(l, on_record, &s) > 0);
	assert_int_equal(ms_live_drain(l, on_record, &s), 0);
	ms_live_free(l);
}

/* The stack bytes event name's samples copy: 0 where they copy none. */
static uint32_t stack_bytes(const struct ms_live *l, const char *name)
{
	const struct perf_event_attr *a;
	size_t i;

	for (i = 0; i < ms_live_nr_evsels(l); i++) {
		a = ms_live_evsel_attr(l, i);
		if (!strcmp(ms_live_evsel_name(l, i), name))
			return (a->sample_type & PERF_SAMPLE_STACK_USER) ? a->sample_stack_user : 0;
	}
	fail_msg("no event '%s'", name);
	return 0;
}

/*
 * Stacks on the entries of the calls that make memory only: a stack per
 * page fault is what loses records (a fault storm fills the rings).
 */
static void alloc_stacks_on_mapping_entries_only(void **state)
{
	static const char *const makers[] = { "mmap", "mremap", "brk", "shmat" };
	struct ms_live_opts o = { .fault_period = 1, .flags = MS_LIVE_ALLOC_STACKS };
	struct ms_live *l = ms_live_new(&o), *plain;
	const struct perf_event_attr *a;
	char name[64];
	size_t i, k, with = 0;

	(void)state;
	assert_non_null(l);
	for (k = 0; k < 4; k++) {
		snprintf(name, sizeof(name), "syscalls:sys_enter_%s", makers[k]);
		assert_int_equal(stack_bytes(l, name), MS_LIVE_ALLOC_STACK_BYTES);
		snprintf(name, sizeof(name), "syscalls:sys_exit_%s", makers[k]);
		assert_int_equal(stack_bytes(l, name), 0);
	}
	for (i = 0; i < ms_live_nr_evsels(l); i++) {
		a = ms_live_evsel_attr(l, i);
		if (!(a->sample_type & PERF_SAMPLE_STACK_USER))
			continue;
		with++;
		/* An unwinder starts from every register: IP, SP and BP among them. */
		assert_true(a->sample_type & PERF_SAMPLE_REGS_USER);
		assert_true(__builtin_popcountll(a->sample_regs_user) >= 17);
	}
	/* And the entries whose arguments point at what record reads: uffd's range, names, paths. */
	assert_int_equal(stack_bytes(l, "syscalls:sys_enter_ioctl"), 2048);
	assert_int_equal(stack_bytes(l, "syscalls:sys_enter_rename"), MS_LIVE_ALLOC_STACK_BYTES);
	assert_int_equal(with, 4 + 5);            /* page faults, munmap, the tree: none */
	assert_int_equal(stack_bytes(l, "page-faults"), 0);
	assert_int_equal(stack_bytes(l, "syscalls:sys_enter_munmap"), 0);
	o.flags = 0;
	plain = ms_live_new(&o);
	assert_non_null(plain);
	assert_int_equal(stack_bytes(plain, "syscalls:sys_enter_mmap"), 0);
	ms_live_free(plain);
	ms_live_free(l);
}

static int errors;

static void count_errors(enum ms_log_level level, const char *msg, void *ctx)
{
	(void)msg;
	(void)ctx;
	errors += level == MS_LOG_ERROR;
}

static void *quit(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

/* A thread that ended before its events were opened: -ESRCH, which the walk passes over, and no error logged. */
static void gone_thread_is_no_error(void **state)
{
	struct ms_live_opts o = { .fault_period = 1 };
	struct ms_live *l = ms_live_new(&o);
	pthread_t t;
	pid_t tid = 0;

	(void)state;
	assert_non_null(l);
	assert_int_equal(pthread_create(&t, NULL, quit, &tid), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	errors = 0;
	ms_log_set(count_errors, NULL);
	assert_int_equal(ms_live_add_task(l, tid), -ESRCH);
	ms_log_set(NULL, NULL);
	assert_int_equal(errors, 0);
	ms_live_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sees_what_this_thread_does),
		cmocka_unit_test(gone_thread_is_no_error),
		cmocka_unit_test(drain_frees_the_rings),
		cmocka_unit_test(alloc_stacks_on_mapping_entries_only),
	};
	struct ms_live_opts o = { .fault_period = 1 };
	struct ms_live *probe;

	ms_log_set(NULL, NULL);
	probe = ms_live_new(&o);
	if (!probe || ms_live_add_task(probe, (pid_t)syscall(SYS_gettid))) {
		printf("SKIP: cannot open the live events here (%s): needs root or CAP_PERFMON, and tracefs\n",
		       strerror(errno));
		ms_live_free(probe);
		return 77;
	}
	ms_live_free(probe);
	ms_live_free(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
