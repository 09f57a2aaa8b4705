/*
 * Life rule: an unmap is done when the mmap lock is let go, before the
 * call returns (mm/vma.c, vms_complete_munmap_vmas: the lock is dropped,
 * then the VMAs detached are freed and userfaultfd's unmap events waited
 * for; mremap waits for its remap event the same way). Another thread's
 * mmap can take the range in between. Here the main thread's munmap of R,
 * then its move of S (mremap with MREMAP_FIXED), waits in userfaultfd
 * until the handler reads the event, and the handler first maps a region
 * of their size with no address asked for, which the kernel puts in the
 * place just freed. That map is there after the call returns; taking the
 * unmap (or the move) at its exit loses it.
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
			fprintf(stderr, "unmap-overtaken: no event\n");
			exit(1);
		}
		if (!i) {
			q = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
			q[0] = 1;
			snapshot_thread("mapped-while-the-call-waits");
		}
		if (read(fd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != want[i]) {
			fprintf(stderr, "unmap-overtaken: not the event waited for\n");
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

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP };
	char *r, *s, *t, *moved;
	pthread_t th;

	snapshot_init();
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api)) {
		printf("skip: userfaultfd with its unmap and remap events: %s\n", strerror(errno));
		return 1;
	}
	r = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
	watch(r);
	snapshot("before");
	want[0] = UFFD_EVENT_UNMAP;
	if (pthread_create(&th, NULL, handler, NULL)) {
		fprintf(stderr, "unmap-overtaken: pthread_create failed\n");
		return 1;
	}
	must(munmap(r, SIZE), "munmap");
	pthread_join(th, NULL);
	snapshot(q == r ? "unmapped-map-in-its-place" : "unmapped-map-elsewhere");
	must(mprotect(q, PAGE, PROT_READ), "mprotect");

	/* The move: to a place reserved far from S, S's own place freed. */
	t = map_or_die(NULL, 4 * SIZE, PROT_NONE, 0);
	s = map_or_die(NULL, SIZE, PROT_READ | PROT_WRITE, 0);
	watch(s);
	snapshot("before-move");
	want[0] = UFFD_EVENT_REMAP;          /* then the unmap of its old place */
	want[1] = UFFD_EVENT_UNMAP;
	if (pthread_create(&th, NULL, handler, NULL)) {
		fprintf(stderr, "unmap-overtaken: pthread_create failed\n");
		return 1;
	}
	moved = mremap(s, SIZE, SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, t + SIZE);
	if (moved == MAP_FAILED) {
		perror("unmap-overtaken: mremap");
		return 1;
	}
	pthread_join(th, NULL);
	snapshot(q == s ? "moved-map-in-its-place" : "moved-map-elsewhere");
	must(mprotect(q, PAGE, PROT_READ), "mprotect");
	snapshot("after");
	return 0;
}
