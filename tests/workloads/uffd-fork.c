/*
 * uffd-fork: a VMA tree written by a task of another process. The first
 * half of an 8 MiB mapping is registered with a userfaultfd that asks for
 * fork events, which splits the mapping's VMA in two. At the fork the
 * child gets the same two VMAs, registered with a new context, whose fd
 * comes to the parent in the UFFD_EVENT_FORK message (the fork is made on
 * a thread, which waits in fork() until the message is read). The main
 * thread reads it and closes that fd: userfaultfd's release then merges
 * the child's two VMAs back into one, run by the parent's thread. With
 * "grow", the main thread first grows its stack by a megabyte (a write
 * lock the kernel downgrades, whose release is a read lock's). The
 * child madvises its mapping (MADV_NORMAL, which changes nothing) before
 * and after, so that a tracer stopped there sees both layouts; the parent
 * keeps its own split until it exits.
 *
 * Exit status 77: no userfaultfd here (the kernel or its settings).
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int uffd, released[2];
static char *p;
static const size_t half = 4 << 20;
static pid_t pid;

/* The fork, on a thread: it waits in fork() until the main thread has read the fork event. */
static void *forker(void *arg)
{
	char c;

	(void)arg;
	if ((pid = fork()) < 0)
		exit(1);
	if (!pid) {
		close(uffd);             /* the parent's context: its copy here */
		madvise(p + 2 * half - 4096, 4096, MADV_NORMAL);      /* split */
		if (read(released[0], &c, 1) != 1)
			_exit(1);
		madvise(p + 2 * half - 4096, 4096, MADV_NORMAL);      /* merged again */
		_exit(0);
	}
	return NULL;
}

/* A megabyte of the main thread's stack touched top down: the kernel grows it under the mm's write lock. */
static __attribute__((noinline)) void grow_stack(void)
{
	volatile char buf[1 << 20];
	long i;

	for (i = (long)sizeof(buf) - 1; i >= 0; i -= 4096)
		buf[i] = 1;
	buf[0] = 1;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_FORK };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffd_msg msg;
	pthread_t t;
	char c = 'x';
	int st;

	p = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	uffd = (int)syscall(SYS_userfaultfd, 0);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		fprintf(stderr, "uffd-fork: no userfaultfd with fork events here: %s\n", strerror(errno));
		return 77;
	}
	reg.range.start = (unsigned long)p;
	reg.range.len = half;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) || pipe(released) || pthread_create(&t, NULL, forker, NULL))
		return 1;
	if (read(uffd, &msg, sizeof(msg)) != (ssize_t)sizeof(msg) || msg.event != UFFD_EVENT_FORK) {
		perror("uffd-fork: reading the fork event");
		return 1;
	}
	usleep(100000);              /* the child's madvise first, on its split layout */
	if (argc > 1 && !strcmp(argv[1], "grow"))
		grow_stack();            /* its write lock is downgraded: no release of it is traced */
	close((int)msg.arg.fork.ufd);
	if (write(released[1], &c, 1) != 1 || pthread_join(t, NULL))
		return 1;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	madvise(p, 4096, MADV_NORMAL);   /* the parent's: still split */
	printf("%p-%p\n", (void *)p, (void *)(p + 2 * half));
	return 0;
}
