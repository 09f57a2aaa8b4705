/*
 * Not a rule of the model's but of the syscall-stop tracer's: a task
 * asleep in a userfaultfd event wait (here madvise(MADV_DONTNEED) with
 * UFFD_FEATURE_EVENT_REMOVE: userfaultfd_remove waits, TASK_KILLABLE,
 * until the handler reads the event) cannot be stopped by
 * PTRACE_INTERRUPT. The handler thread then makes a call the tracer stops
 * at: the tracer must take its snapshot without the sleeper, and not wait
 * for it forever (the handler, stopped, would never wake it).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../snapshot.h"

static int fd;
static char *extra;

/* Waits for the REMOVE event, maps a page while the caller sleeps in it, then reads it (which wakes it). */
static void *handler(void *arg)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct uffd_msg msg;

	(void)arg;
	if (poll(&pfd, 1, 10000) != 1) {
		fprintf(stderr, "uffd-wait: no event\n");
		exit(1);
	}
	extra = map_or_die(NULL, 2 * PAGE, PROT_READ, 0);
	snapshot_thread("handler-while-remove-waits");
	if (read(fd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_REMOVE) {
		fprintf(stderr, "uffd-wait: not the REMOVE event\n");
		exit(1);
	}
	return NULL;
}

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_REMOVE };
	struct uffdio_register reg;
	pthread_t t;
	char *a;

	snapshot_init();
	a = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	a[0] = 1;
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api)) {
		printf("skip: userfaultfd with UFFD_FEATURE_EVENT_REMOVE: %s\n", strerror(errno));
		return 1;
	}
	reg.range.start = (unsigned long)a;
	reg.range.len = 8 * PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	must(ioctl(fd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER");
	snapshot("registered");
	must(pthread_create(&t, NULL, handler, NULL), "pthread_create");
	must(madvise(a, 8 * PAGE, MADV_DONTNEED), "madvise");   /* sleeps until the handler reads */
	must(pthread_join(t, NULL), "pthread_join");
	snapshot("remove-done");
	must(munmap(extra, 2 * PAGE), "munmap");
	/* Unregistered first: the flags a close clears (userfaultfd_release) no recorded call shows. */
	must(ioctl(fd, UFFDIO_UNREGISTER, &reg.range), "UFFDIO_UNREGISTER");
	close(fd);
	snapshot("end");
	return 0;
}
