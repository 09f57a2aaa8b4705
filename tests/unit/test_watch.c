/*
 * The watch channel on this very process: an unmap in a thread that ran
 * before the channel opened (found by the walk of /proc/self/task) and in
 * one made after (inheriting the events) comes out as an unmap of exactly
 * that range, by that thread. Needs perf events with tracepoints: skipped,
 * with the reason, without them.
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
#include <unistd.h>
#include <cmocka.h>

#include <mapscope/log.h>
#include <mapscope/watch.h>

#define LEN (2 * 4096)

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go;
	pid_t tid;
	uint64_t addr;
};

/* Maps and unmaps LEN bytes once told to, and says where and as which thread. */
static void *work(void *arg)
{
	struct worker *w = arg;
	void *p;

	pthread_mutex_lock(&w->lock);
	while (!w->go)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	w->tid = gettid();
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		w->addr = (uint64_t)(uintptr_t)p;
		munmap(p, LEN);
	}
	return NULL;
}

static void start(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	assert_int_equal(pthread_create(&w->thread, NULL, work, w), 0);
}

static void release_and_join(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->go = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	assert_int_equal(pthread_join(w->thread, NULL), 0);
	assert_true(w->addr != 0);
}

/* Whether the channel has the worker's unmap; it was written before munmap returned. */
static bool saw_unmap(struct ms_watch *mw, const struct worker *w)
{
	struct ms_watch_event ev;
	bool seen = false;
	int n;

	while ((n = ms_watch_next(mw, &ev)) == 1)
		seen |= ev.change.op == MS_OP_UNMAP && ev.change.tid == (uint32_t)w->tid &&
			ev.change.start == w->addr && ev.change.end == w->addr + LEN;
	assert_int_equal(n, 0);
	return seen;
}

static void sees_a_thread_that_ran_before(void **state)
{
	struct ms_watch *mw;
	struct worker w;

	start(&w);
	assert_int_equal(ms_watch_open(0, 0, &mw), 0);
	release_and_join(&w);
	assert_true(saw_unmap(mw, &w));
	ms_watch_close(mw);
}

static void sees_a_thread_made_after(void **state)
{
	struct ms_watch *mw;
	struct worker w;

	assert_int_equal(ms_watch_open(0, 0, &mw), 0);
	start(&w);
	release_and_join(&w);
	assert_true(saw_unmap(mw, &w));
	ms_watch_close(mw);
}

/* Without kernel events: interposition, then userfaultfd where allowed; each says so, and what it can track. */
static void self_modes(void **state)
{
	struct ms_watch *mw;
	struct worker w;
	char *p;
	int err;

	(void)state;
	assert_int_equal(ms_watch_open(1, MS_WATCH_NO_KERNEL, &mw), -EINVAL);  /* another process */
	assert_int_equal(ms_watch_open(0, MS_WATCH_NO_KERNEL | MS_WATCH_NO_UFFD, &mw), 0);
	assert_int_equal(ms_watch_mode(mw), MS_WATCH_INTERPOSE);
	assert_int_equal(ms_watch_fd(mw), -1);
	assert_int_equal(ms_watch_track(mw, &w, sizeof(w)), -ENOTSUP);
	start(&w);
	release_and_join(&w);
	assert_true(saw_unmap(mw, &w));
	ms_watch_close(mw);

	err = ms_watch_open(0, MS_WATCH_NO_KERNEL, &mw);
	assert_int_equal(err, 0);
	if (ms_watch_mode(mw) == MS_WATCH_UFFD) {
		p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_int_equal(ms_watch_track(mw, p, LEN), 0);
		munmap(p, LEN);
	} else {
		printf("note: no userfaultfd here: the fallback is interposition alone\n");
		assert_int_equal(ms_watch_mode(mw), MS_WATCH_INTERPOSE);
	}
	ms_watch_close(mw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sees_a_thread_that_ran_before),
		cmocka_unit_test(sees_a_thread_made_after),
	};
	const struct CMUnitTest self[] = {
		cmocka_unit_test(self_modes),
	};
	struct ms_watch *probe;
	int err;

	ms_log_set(NULL, NULL);
	if ((err = cmocka_run_group_tests(self, NULL, NULL)))
		return err;
	if ((err = ms_watch_open(0, MS_WATCH_KERNEL_ONLY, &probe))) {
		printf("SKIP: cannot open the watch channel's events here (%s): needs root or "
		       "CAP_PERFMON, and tracefs\n", strerror(-err));
		return 77;
	}
	assert_int_equal(ms_watch_mode(probe), MS_WATCH_KERNEL);
	ms_watch_close(probe);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
