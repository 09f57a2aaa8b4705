/*
 * Ranges are registered in write-protect mode where the kernel allows it,
 * and no page is ever write-protected: the registration then never traps
 * a fault, and only the UNMAP/REMAP/REMOVE events come. Where WP mode is
 * refused, MISSING mode is used and the reader answers each missing-page
 * fault with a zero page (what the fault would have found).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "watch/uffd.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

struct ms_uffd {
	int fd, stop_fd;
	pthread_t reader;
	struct ms_evring *ring;
	pid_t pid;
};

/* One message as a change; 0 when it is not one (a fault answered here). */
static int to_change(struct ms_uffd *u, const struct uffd_msg *m, struct ms_change *c)
{
	*c = (struct ms_change){ .time_ns = ms_evring_now(), .pid = (uint32_t)u->pid, .name = "",
				 .prot = -1, .advice = -1, .lock = -1 };
	switch (m->event) {
	case UFFD_EVENT_UNMAP:
		c->op = MS_OP_UNMAP;
		c->start = c->release_start = m->arg.remove.start;
		c->end = c->release_end = m->arg.remove.end;
		return 1;
	case UFFD_EVENT_REMOVE:          /* madvise(DONTNEED or REMOVE) */
		c->op = MS_OP_MADVISE;
		c->start = c->release_start = m->arg.remove.start;
		c->end = c->release_end = m->arg.remove.end;
		return 1;
	case UFFD_EVENT_REMAP:
		c->op = MS_OP_REMAP;
		c->start = c->release_start = m->arg.remap.from;
		c->end = c->release_end = m->arg.remap.from + m->arg.remap.len;
		c->new_start = m->arg.remap.to;
		c->new_end = m->arg.remap.to + m->arg.remap.len;
		return 1;
	case UFFD_EVENT_PAGEFAULT: {
		struct uffdio_zeropage z = { .range = { m->arg.pagefault.address & ~4095ULL, 4096 } };

		if (ioctl(u->fd, UFFDIO_ZEROPAGE, &z)) {
			struct uffdio_range w = z.range;

			ioctl(u->fd, UFFDIO_WAKE, &w);  /* raced with another fill: let the thread retry */
		}
		return 0;
	}
	}
	return 0;
}

static void *read_events(void *arg)
{
	struct ms_uffd *u = arg;
	struct pollfd p[2] = { { .fd = u->fd, .events = POLLIN }, { .fd = u->stop_fd, .events = POLLIN } };
	struct uffd_msg msg[16];
	struct ms_change c;
	ssize_t n, i;

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		n = read(u->fd, msg, sizeof(msg));
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		for (i = 0; i < n / (ssize_t)sizeof(msg[0]); i++)
			if (to_change(u, &msg[i], &c))
				ms_evring_put(u->ring, &c);
	}
	return NULL;
}

/*
 * The reader runs with every signal blocked: a handler of the program's
 * running on it could take a lock an unmapping thread holds while it
 * waits for this very reader.
 */
static int start_reader(struct ms_uffd *u)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&u->reader, NULL, read_events, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

static int open_fd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)       /* before 5.11: no such flag */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

int ms_uffd_open(struct ms_evring *r, struct ms_uffd **out)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP |
					      UFFD_FEATURE_EVENT_REMOVE };
	struct ms_uffd *u = calloc(1, sizeof(*u));
	int err;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->ring = r;
	u->pid = getpid();
	u->stop_fd = -1;
	u->fd = open_fd();
	if (u->fd < 0) {
		err = u->fd;
		free(u);
		return err;
	}
	if (ioctl(u->fd, UFFDIO_API, &api) || (u->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0) {
		err = -errno;
		goto fail;
	}
	if ((err = start_reader(u)))
		goto fail;
	*out = u;
	return 0;
fail:
	if (u->stop_fd >= 0)
		close(u->stop_fd);
	close(u->fd);
	free(u);
	return err;
}

int ms_uffd_track(struct ms_uffd *u, const void *addr, size_t len)
{
	uint64_t start = (uint64_t)addr & ~4095ULL, end = ((uint64_t)addr + len + 4095) & ~4095ULL;
	struct uffdio_register reg = { .range = { start, end - start }, .mode = UFFDIO_REGISTER_MODE_WP };

	if (!ioctl(u->fd, UFFDIO_REGISTER, &reg))
		return 0;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	return ioctl(u->fd, UFFDIO_REGISTER, &reg) ? -errno : 0;
}

void ms_uffd_close(struct ms_uffd *u)
{
	uint64_t one = 1;

	if (!u)
		return;
	if (write(u->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(u->reader, NULL);
	close(u->stop_fd);
	close(u->fd);
	free(u);
}
