/*
 * For the overtaken rules (unmap-overtaken, remap-picked): a userfaultfd
 * whose handler thread, at the first event the call waits on, maps a
 * region of SIZE with no address asked for (the kernel puts it where the
 * call freed, if that is the highest place that fits), snapshots, and only
 * then reads the events, so that the call returns after the map.
 */
#ifndef RULES_OVERTAKE_H
#define RULES_OVERTAKE_H

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../snapshot.h"

#define SIZE (256 * PAGE)

static int fd;
static unsigned int want[2];     /* the events the call waits on, in turn (0: none) */
static char *q;

/* Waits for the first event, maps while the call waits for it to be read, then reads them all. */
static void *handler(void *arg)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct uffd_msg msg;
	int i;

	(void)arg;
	for (i = 0; i < 2 && want[i]; i++) {
		if (poll(&pfd, 1, 10000) != 1) {
			fprintf(stderr, "overtaken: no event\n");
			exit(1);
		}
		if (!i) {
			q = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
			q[0] = 1;
			snapshot_thread("mapped-while-the-call-waits");
		}
		if (read(fd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != want[i]) {
			fprintf(stderr, "overtaken: not the event waited for\n");
			exit(1);
		}
	}
	return NULL;
}

/* Registers [p, p + SIZE) with the userfaultfd. */
static void watch(char *p)
{
	struct uffdio_register reg = { .range = { (unsigned long)p, SIZE }, .mode = UFFDIO_REGISTER_MODE_MISSING };

	must(ioctl(fd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER");
}

/* The userfaultfd, with its unmap and remap events: false (a line saying why printed) where there is none. */
static bool open_uffd(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP };

	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api)) {
		printf("skip: userfaultfd with its unmap and remap events: %s\n", strerror(errno));
		return false;
	}
	return true;
}

/*
 * The move that waits: s (SIZE, registered) moved by mremap(new_len,
 * flags, to) while the handler maps; snapshots after it and after an
 * mprotect of the map. 0, or 1 with why printed.
 */
static int move_overtaken(char *s, size_t new_len, int flags, char *to)
{
	pthread_t th;

	want[0] = UFFD_EVENT_REMAP;          /* then the unmap of its old place */
	want[1] = UFFD_EVENT_UNMAP;
	if (pthread_create(&th, NULL, handler, NULL)) {
		fprintf(stderr, "overtaken: pthread_create failed\n");
		return 1;
	}
	if (mremap(s, SIZE, new_len, flags, to) == MAP_FAILED) {
		perror("overtaken: mremap");
		return 1;
	}
	pthread_join(th, NULL);
	snapshot(q == s ? "moved-map-in-its-place" : "moved-map-elsewhere");
	must(mprotect(q, PAGE, PROT_READ), "mprotect");
	snapshot("after");
	return 0;
}

#endif
