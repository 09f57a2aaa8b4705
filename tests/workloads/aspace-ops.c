/*
 * Performs every kind of address-space change and prints what it did, one
 * line each, so a test can check a recording against it:
 *
 *   OP pid=P tid=T KEY=VALUE...
 *
 * Addresses are hex. "touch start end" means every 4 KiB page of the range
 * was written once and was not resident before: each must show one
 * page-fault sample. The last thing it does is exec ARGV[1] (if given).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

static char stdout_buf[1 << 16];

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

#define say(op, fmt, ...) \
	printf("%s pid=%d tid=%d " fmt "\n", op, getpid(), tid(), __VA_ARGS__)

static void die(const char *what)
{
	fprintf(stderr, "aspace-ops: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *map(size_t len, int prot, int flags, int fd, void *hint)
{
	void *p = mmap(hint, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* Writes one byte per page: one first-touch fault each. */
static void touch(void *start, size_t len)
{
	volatile char *c = start;
	size_t off;

	for (off = 0; off < len; off += PAGE)
		c[off] = 1;
	say("touch", "start=%p end=%p", start, (char *)start + len);
}

static void anon_and_file(void)
{
	char path[] = "/tmp/aspace-ops-XXXXXX";
	size_t len = 8 * PAGE;
	char *a, *f;
	int fd;

	a = map(len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
	say("mmap", "start=%p end=%p kind=anon", a, a + len);
	touch(a, len);

	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)len))
		die("temporary file");
	unlink(path);
	f = map(len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, NULL);
	close(fd);
	say("mmap", "start=%p end=%p kind=file", f, f + len);
	touch(f, len);                 /* write faults: one per page, no fault-around */

	/* MAP_FIXED over the middle of the anonymous mapping. */
	map(2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, a + 3 * PAGE);
	say("mmap", "start=%p end=%p kind=fixed", a + 3 * PAGE, a + 5 * PAGE);
	touch(a + 3 * PAGE, 2 * PAGE);
}

static void unmap_middle_and_protect(void)
{
	char *a = map(16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);

	say("mmap", "start=%p end=%p kind=anon", a, a + 16 * PAGE);
	if (munmap(a + 4 * PAGE, 4 * PAGE))
		die("munmap");
	say("munmap", "start=%p end=%p", a + 4 * PAGE, a + 8 * PAGE);
	if (mprotect(a + 10 * PAGE, 2 * PAGE, PROT_READ))
		die("mprotect");
	say("mprotect", "start=%p end=%p prot=r--", a + 10 * PAGE, a + 12 * PAGE);
}

static void remaps(void)
{
	char *a, *b, *guard;

	/* In place: reserve room, give back the top, grow into it. */
	a = map(16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
	say("mmap", "start=%p end=%p kind=anon", a, a + 16 * PAGE);
	if (munmap(a + 4 * PAGE, 12 * PAGE))
		die("munmap");
	say("munmap", "start=%p end=%p", a + 4 * PAGE, a + 16 * PAGE);
	b = mremap(a, 4 * PAGE, 12 * PAGE, 0);
	if (b == MAP_FAILED)
		die("mremap in place");
	say("mremap", "old_start=%p old_end=%p new_start=%p new_end=%p", a, a + 4 * PAGE, b, b + 12 * PAGE);
	touch(b, 12 * PAGE);

	/* With a move: a guard right after forbids growing in place. */
	a = map(9 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
	say("mmap", "start=%p end=%p kind=anon", a, a + 9 * PAGE);
	guard = a + 8 * PAGE;
	if (mprotect(guard, PAGE, PROT_NONE))
		die("mprotect");
	say("mprotect", "start=%p end=%p prot=---", guard, guard + PAGE);
	b = mremap(a, 8 * PAGE, 64 * PAGE, MREMAP_MAYMOVE);
	if (b == MAP_FAILED || b == a)
		die("mremap with move");
	say("mremap", "old_start=%p old_end=%p new_start=%p new_end=%p", a, a + 8 * PAGE, b, b + 64 * PAGE);
	touch(b, 64 * PAGE);
}

static void heap(void)
{
	char *old = (char *)syscall(SYS_brk, 0), *grown, *shrunk;

	grown = (char *)syscall(SYS_brk, old + 64 * PAGE);
	if (grown != old + 64 * PAGE)
		die("brk growth");
	say("brk", "old=%p new=%p", old, grown);
	touch(old, 64 * PAGE);
	shrunk = (char *)syscall(SYS_brk, old + 16 * PAGE);
	if (shrunk != old + 16 * PAGE)
		die("brk shrink");
	say("brk", "old=%p new=%p", grown, shrunk);
}

static char *deepest;

static void __attribute__((noinline)) recurse(int depth)
{
	char buf[4096];

	memset(buf, depth, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
	if ((char *)buf < deepest)
		deepest = buf;
	if (depth > 0)
		recurse(depth - 1);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* Grows the main stack by at least 1 MiB (300 frames of 4 KiB). */
static void stack_growth(void)
{
	char here;
	uintptr_t top = ((uintptr_t)&here & ~(PAGE - 1)) - 16 * PAGE; /* surely fresh below */

	deepest = &here;
	recurse(300);
	say("stack", "lo=%p hi=%p", (void *)((uintptr_t)deepest & ~(PAGE - 1)), (void *)top);
	say("touch", "start=%p end=%p", (void *)(((uintptr_t)deepest + PAGE - 1) & ~(PAGE - 1)), (void *)top);
}

static pthread_mutex_t say_lock = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
	char buf[16 * PAGE];
	uintptr_t lo = ((uintptr_t)buf + PAGE - 1) & ~(PAGE - 1);
	uintptr_t hi = (((uintptr_t)buf + sizeof(buf)) & ~(PAGE - 1)) - PAGE;
	volatile char *c;

	(void)arg;
	for (c = (volatile char *)lo; (uintptr_t)c < hi; c += PAGE)
		*c = 1;
	__asm__ volatile("" : : "r"(buf) : "memory");
	pthread_mutex_lock(&say_lock);
	say("thread-stack", "start=%p end=%p", (void *)lo, (void *)hi);
	say("touch", "start=%p end=%p", (void *)lo, (void *)hi);
	pthread_mutex_unlock(&say_lock);
	return NULL;
}

static void threads(void)
{
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			die("pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void dontneed(void)
{
	char *a = map(8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);

	say("mmap", "start=%p end=%p kind=anon", a, a + 8 * PAGE);
	touch(a, 8 * PAGE);
	if (madvise(a, 8 * PAGE, MADV_DONTNEED))
		die("madvise");
	say("madvise", "start=%p end=%p advice=dontneed", a, a + 8 * PAGE);
	touch(a, 8 * PAGE);            /* released pages fault again */
}

static void sysv_shm(void)
{
	int id = shmget(IPC_PRIVATE, 16 * PAGE, IPC_CREAT | 0600);
	char *a;

	if (id < 0)
		die("shmget");
	a = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (a == (void *)-1)
		die("shmat");
	say("shmat", "start=%p end=%p", a, a + 16 * PAGE);
	touch(a, 16 * PAGE);
	if (shmdt(a))
		die("shmdt");
	say("shmdt", "start=%p end=%p", a, a + 16 * PAGE);
}

static void child_process(void)
{
	pid_t child;
	int status;
	char *a;

	fflush(stdout);
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		a = map(8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
		say("mmap", "start=%p end=%p kind=anon", a, a + 8 * PAGE);
		touch(a, 8 * PAGE);
		if (munmap(a, 8 * PAGE))
			die("munmap");
		say("munmap", "start=%p end=%p", a, a + 8 * PAGE);
		fflush(stdout);
		_exit(0);
	}
	waitpid(child, &status, 0);
	say("fork", "child=%d", (int)child);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, stdout_buf, _IOLBF, sizeof(stdout_buf));
	anon_and_file();
	unmap_middle_and_protect();
	remaps();
	heap();
	stack_growth();
	threads();
	dontneed();
	sysv_shm();
	child_process();
	if (argc > 1) {
		say("exec", "path=%s", argv[1]);
		fflush(stdout);
		execv(argv[1], argv + 1);
		die("exec");
	}
	return 0;
}
