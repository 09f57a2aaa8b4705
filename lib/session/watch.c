/*
 * The live channel: a live session (mapscope/session.h) drained on demand,
 * with one analysis that queues each change. Records are flushed as soon
 * as they are drained (no round delay): an unmap's exit record is written
 * before the syscall returns, so the event must be readable at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <mapscope/live.h>
#include <mapscope/session.h>
#include <mapscope/watch.h>

#include "kernel/live.h"
#include "kernel/procsynth.h"
#include "util/log.h"
#include "watch/evring.h"
#include "watch/interpose.h"
#include "watch/uffd.h"

#define WATCH_PAGES 256u              /* 1 MiB per CPU */
#define SELF_SLOTS 4096u              /* changes queued in the self modes before a loss */

struct ms_watch {
	struct ms_live *live;
	struct ms_session *session;
	int epfd;
	int nr_rings;
	const struct perf_event_mmap_page **pages;
	size_t ring_size;
	uint64_t bump;                /* atomic: makes the generation move when rings fill */
	struct ms_watch_event *q;     /* each change.name is the watch's, malloc'd */
	size_t head, len, cap;
	char *handed;                 /* the name the last ms_watch_next handed out */
	int error;
	enum ms_watch_mode mode;
	struct ms_evring ring;        /* the self modes' queue */
	struct ms_uffd *uffd;
	bool interposing;
};

/* Queues a copy of ev: its change's name, the model's until the next event, is copied. */
static int push_event(struct ms_watch *w, const struct ms_watch_event *ev)
{
	struct ms_watch_event *grown;
	char *name = strdup(ev->change.name ? ev->change.name : "");
	size_t i;

	if (!name)
		return -ENOMEM;
	if (w->len == w->cap) {
		grown = malloc((w->cap ? 2 * w->cap : 64) * sizeof(*grown));
		if (!grown) {
			free(name);
			return -ENOMEM;
		}
		for (i = 0; i < w->len; i++)
			grown[i] = w->q[(w->head + i) % w->cap];
		free(w->q);
		w->q = grown;
		w->head = 0;
		w->cap = w->cap ? 2 * w->cap : 64;
	}
	w->q[(w->head + w->len) % w->cap] = *ev;
	w->q[(w->head + w->len++) % w->cap].change.name = name;
	return 0;
}

/* Empties the queue, freeing the names it owns. */
static void drop_queued(struct ms_watch *w)
{
	for (; w->len; w->len--, w->head = (w->head + 1) % w->cap)
		free((char *)w->q[w->head].change.name);
}

/* Lost records: everything may have changed unseen. */
static int on_lost(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct ms_watch_event out = { 0 };

	(void)s;
	if (ev->kind != MS_EV_LOST)
		return 0;
	out.change.time_ns = ev->time;
	out.change.release_all = true;
	out.lost = ev->lost.count;
	return push_event(ctx, &out);
}

static int on_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	struct ms_watch_event out = { .change = *c };

	(void)s;
	(void)ev;
	return push_event(ctx, &out);
}

static const struct ms_analysis queue_changes = { .name = "watch", .event = on_lost, .change = on_change };

static int push_record(const struct perf_event_header *rec, void *ctx)
{
	return ms_session_push(ctx, rec);
}

/* Drains every ring and turns what it held into events. */
static int pump(struct ms_watch *w)
{
	long n = ms_live_drain(w->live, push_record, w->session);

	if (n < 0)
		return (int)n;
	return ms_session_flush(w->session, UINT64_MAX);
}

/* Every thread of pid, threads it makes while they are found included: the walk record -p takes. */
static int add_threads(struct ms_watch *w, pid_t pid)
{
	struct ms_tidset seen;
	int err;

	ms_tidset_init(&seen);
	err = ms_proc_attach(w->live, pid, &seen);
	ms_tidset_release(&seen);
	return err;
}

static int setup(struct ms_watch *w, pid_t pid, unsigned int flags)
{
	struct ms_live_opts lo = {
		.mmap_pages = WATCH_PAGES,
		.flags = (flags & MS_WATCH_WAKEUP ? MS_LIVE_WAKEUP_EACH : 0) |
			 (flags & MS_WATCH_ENABLE_ON_EXEC ? MS_LIVE_ENABLE_ON_EXEC : 0),
	};
	struct epoll_event ee = { .events = EPOLLIN };
	int err, i;

	w->live = ms_live_new(&lo);
	if (!w->live)
		return -errno;
	err = flags & MS_WATCH_ENABLE_ON_EXEC ? ms_live_add_task(w->live, pid) : add_threads(w, pid);
	if (err)
		return err;
	w->session = ms_session_open_live(w->live);
	if (!w->session || ms_session_add(w->session, &queue_changes, w))
		return -ENOMEM;
	w->nr_rings = ms_live_nr_fds(w->live);
	w->ring_size = ms_live_ring_size(w->live);
	w->pages = calloc((size_t)w->nr_rings, sizeof(*w->pages));
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!w->pages || w->epfd < 0)
		return w->pages ? -errno : -ENOMEM;
	for (i = 0; i < w->nr_rings; i++) {
		w->pages[i] = ms_live_ring_page(w->live, i);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, ms_live_fd(w->live, i), &ee))
			return -errno;
	}
	if (flags & MS_WATCH_ENABLE_ON_EXEC)
		return 0;
	if ((err = ms_live_enable(w->live)))
		return err;
	/* What is mapped already, so every later change is known by its region. */
	err = ms_live_synthesize(w->live, pid, ms_evring_now(), push_record, w->session);
	if (!err)
		err = ms_session_flush(w->session, UINT64_MAX);
	drop_queued(w);               /* the synthesised maps are not changes */
	return err;
}

/* The self modes: interposition, and userfaultfd for tracked ranges unless refused or not wanted. */
static int open_self(struct ms_watch *w, bool uffd)
{
	int err = ms_evring_init(&w->ring, SELF_SLOTS);

	if (err)
		return err;
	if ((err = ms_interpose_start(&w->ring)))
		return err;
	w->interposing = true;
	w->mode = MS_WATCH_INTERPOSE;
	if (uffd && !ms_uffd_open(&w->ring, &w->uffd))
		w->mode = MS_WATCH_UFFD;
	return 0;
}

/* MAPSCOPE_WATCH=kernel|interpose|uffd, for tests: the flags that force that mode. */
static unsigned int env_flags(unsigned int flags)
{
	const char *m = getenv("MAPSCOPE_WATCH");

	if (!m || (flags & (MS_WATCH_NO_KERNEL | MS_WATCH_NO_UFFD)))
		return flags;
	if (!strcmp(m, "interpose"))
		return flags | MS_WATCH_NO_KERNEL | MS_WATCH_NO_UFFD;
	if (!strcmp(m, "uffd"))
		return flags | MS_WATCH_NO_KERNEL;
	if (!strcmp(m, "kernel"))
		return flags | MS_WATCH_KERNEL_ONLY;
	return flags;
}

/* Kernel events first; for this process, where they are refused, the self modes. */
static int open_mode(struct ms_watch *w, pid_t pid, unsigned int flags)
{
	bool self = pid == getpid();
	int err;

	if (flags & MS_WATCH_NO_KERNEL)
		return self ? open_self(w, !(flags & MS_WATCH_NO_UFFD)) : -EINVAL;
	w->mode = MS_WATCH_KERNEL;
	err = setup(w, pid, flags);
	if (!err || !self || (flags & MS_WATCH_KERNEL_ONLY) ||
	    (err != -EACCES && err != -EPERM && err != -ENOENT && err != -ENOSYS))
		return err;
	ms_session_free(w->session);
	ms_live_free(w->live);
	w->session = NULL;
	w->live = NULL;
	ms_debug("watch: kernel events refused (%s): interposing in the process", strerror(-err));
	return open_self(w, !(flags & MS_WATCH_NO_UFFD)) ? err : 0;
}

MS_EXPORT int ms_watch_open(pid_t pid, unsigned int flags, struct ms_watch **out)
{
	struct ms_watch *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->epfd = -1;
	err = open_mode(w, pid ? pid : getpid(), env_flags(flags));
	if (err) {
		ms_watch_close(w);
		return err;
	}
	*out = w;
	return 0;
}

MS_EXPORT enum ms_watch_mode ms_watch_mode(const struct ms_watch *w)
{
	return w->mode;
}

MS_EXPORT int ms_watch_track(struct ms_watch *w, const void *addr, size_t len)
{
	if (w->mode == MS_WATCH_KERNEL)
		return 0;               /* every path is seen already */
	return w->uffd ? ms_uffd_track(w->uffd, addr, len) : -ENOTSUP;
}

/* The self modes' next event: a loss first, as the kernel mode reports one. */
static int next_self(struct ms_watch *w, struct ms_watch_event *ev)
{
	uint64_t lost;
	int got = ms_evring_get(&w->ring, &ev->change, &lost);

	if (lost) {
		*ev = (struct ms_watch_event){ .lost = lost };
		ev->change = (struct ms_change){ .time_ns = ms_evring_now(), .release_all = true, .name = "",
						 .prot = -1, .advice = -1, .lock = -1 };
		return 1;
	}
	ev->lost = 0;
	return got;
}

MS_EXPORT int ms_watch_fd(const struct ms_watch *w)
{
	return w->mode == MS_WATCH_KERNEL ? w->epfd : -1;
}

MS_EXPORT int ms_watch_next(struct ms_watch *w, struct ms_watch_event *ev)
{
	int err;

	if (w->mode != MS_WATCH_KERNEL)
		return next_self(w, ev);
	if (!w->len && (err = pump(w)))
		return err;
	if (!w->len)
		return 0;
	*ev = w->q[w->head];
	free(w->handed);
	w->handed = (char *)ev->change.name;
	w->head = (w->head + 1) % w->cap;
	w->len--;
	return 1;
}

MS_EXPORT uint64_t ms_watch_generation(struct ms_watch *w)
{
	uint64_t sum = 0, head, tail;
	int i;

	if (w->mode != MS_WATCH_KERNEL)
		return ms_evring_gen(&w->ring);
	for (i = 0; i < w->nr_rings; i++) {
		head = __atomic_load_n(&w->pages[i]->data_head, __ATOMIC_ACQUIRE);
		tail = __atomic_load_n(&w->pages[i]->data_tail, __ATOMIC_ACQUIRE);
		sum += head;
		/* Nearly full: the kernel may drop records and stop moving head. */
		if (head - tail > w->ring_size / 4 * 3)
			sum += __atomic_add_fetch(&w->bump, 1, __ATOMIC_RELAXED) << 40;
	}
	return sum + (__atomic_load_n(&w->bump, __ATOMIC_RELAXED) << 40);
}

MS_EXPORT void ms_watch_close(struct ms_watch *w)
{
	if (!w)
		return;
	if (w->interposing)
		ms_interpose_stop();
	ms_uffd_close(w->uffd);      /* after: an unmap of a tracked range waits for its reader */
	ms_evring_release(&w->ring);
	if (w->epfd >= 0)
		close(w->epfd);
	ms_session_free(w->session);
	ms_live_free(w->live);
	free(w->pages);
	drop_queued(w);
	free(w->q);
	free(w->handed);
	free(w);
}
