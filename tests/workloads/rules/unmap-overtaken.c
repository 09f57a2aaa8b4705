/*
 * Life rule: an unmap is done when the mmap lock is let go, before the
 * call returns (mm/vma.c, vms_complete_munmap_vmas: the lock is dropped,
 * then the VMAs detached are freed and userfaultfd's unmap events waited
 * for). Another thread's mmap can take the range in between: here the
 * main thread's munmap of R waits in userfaultfd_unmap_complete() until
 * the handler reads its UFFD_EVENT_UNMAP, and the handler first maps a
 * region of R's size with no address asked for, which the kernel puts in
 * R's place. That map is there after the munmap returns; taking the
 * unmap at its exit loses it.
 */
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
static char *r, *q;

/* Waits for the unmap event, maps while the munmap waits for it to be read, then reads it. */
static void *handler(void *arg)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct uffd_msg msg;

	(void)arg;
	if (poll(&pfd, 1, 10000) != 1) {
		fprintf(stderr, "unmap-overtaken: no event\n");
		exit(1);
	}
	q = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
	q[0] = 1;
	snapshot_thread("mapped-while-unmap-waits");
	if (read(fd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_UNMAP) {
		fprintf(stderr, "unmap-overtaken: not the UNMAP event\n");
		exit(1);
	}
	return NULL;
}

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_UNMAP };
	struct uffdio_register reg;
	pthread_t t;

	snapshot_init();
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api)) {
		printf("skip: userfaultfd with UFFD_FEATURE_EVENT_UNMAP: %s\n", strerror(errno));
		return 1;
	}
	r = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
	reg.range.start = (unsigned long)r;
	reg.range.len = SIZE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	must(ioctl(fd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER");
	snapshot("before");
	if (pthread_create(&t, NULL, handler, NULL)) {
		fprintf(stderr, "unmap-overtaken: pthread_create failed\n");
		return 1;
	}
	must(munmap(r, SIZE), "munmap");
	pthread_join(t, NULL);
	snapshot(q == r ? "after-in-its-place" : "after-elsewhere");
	must(mprotect(q, PAGE, PROT_READ), "mprotect");
	snapshot("after-protect");
	return 0;
}
