/*
 * Makes every kind of address-space change and, after each, snapshots its
 * own /proc/self/maps (snapshot.h). With "--after-exec" it is the exec'd
 * image and takes one snapshot. The kernel's rules for changes it writes
 * no record of have a reproducer each, under rules/.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/wait.h>

#include "snapshot.h"

static void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void map_at(void *at, size_t len)
{
	if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != at) {
		perror("mmap");
		exit(1);
	}
}

static void __attribute__((noinline)) deep(int n)
{
	volatile char buf[4096];

	buf[0] = (char)n;
	buf[4095] = (char)n;
	__asm__ volatile("" : : "r"(buf) : "memory");
	if (n > 0)
		deep(n - 1);
	if (n == 0)
		snapshot("stack-deep");
}

static pthread_barrier_t barrier;

static char clone_stack[64 * 1024] __attribute__((aligned(16)));

/* Runs in the parent's address space: maps 2 pages and unmaps one of a's (arg). No stdio: its buffers are shared. */
static int clone_vm_child(void *arg)
{
	char *a = arg;

	if (mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return 1;
	return munmap(a + 15 * PAGE, PAGE) ? 1 : 0;
}

static void *worker(void *arg)
{
	volatile char buf[16 * 4096];

	buf[0] = buf[sizeof(buf) - 1] = 1;
	(void)arg;
	pthread_barrier_wait(&barrier);   /* main snapshots while we wait */
	pthread_barrier_wait(&barrier);
	return NULL;
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/maps-oracle-XXXXXX", *a, *b, *d, *f, *g, *h, *brk0;
	pthread_t t[2];
	pid_t child;
	int fd, id, i;

	snapshot_init();
	if (argc > 1 && !strcmp(argv[1], "--after-exec")) {
		snapshot("after-exec");
		return 0;
	}
	snapshot("start");

	a = map(16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	a[0] = 1;
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 8 * PAGE))
		return 1;
	unlink(path);
	f = map(8 * PAGE, PROT_READ, MAP_SHARED, fd);
	close(fd);
	snapshot("mmap");

	mmap(a + 4 * PAGE, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	snapshot("map-fixed");
	munmap(a + 8 * PAGE, 2 * PAGE);
	snapshot("munmap-middle");
	mprotect(a + 12 * PAGE, PAGE, PROT_NONE);
	snapshot("mprotect-split");
	/* To the protection it has: the kernel splits nothing (V8 does this on its code range). */
	g = map(16 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	mprotect(g + 4 * PAGE, PAGE, PROT_NONE);
	mprotect(a + 13 * PAGE, PAGE, PROT_READ | PROT_WRITE);
	snapshot("mprotect-same");
	munmap(g, 16 * PAGE);
	munmap(f + 2 * PAGE, PAGE);
	snapshot("munmap-file-middle");

	b = map(16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	munmap(b + 4 * PAGE, 12 * PAGE);
	b = mremap(b, 4 * PAGE, 10 * PAGE, 0);
	snapshot("mremap-in-place");
	b[0] = 1;
	b = mremap(b, 10 * PAGE, 40 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, a + 64 * PAGE * 16);
	snapshot("mremap-move");
	b = mremap(b, 40 * PAGE, 20 * PAGE, 0);
	snapshot("mremap-shrink");
	/* Grown in place up to the next VMA: the kernel merges the two, with no record. */
	g = map(16 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	munmap(g, 16 * PAGE);
	map_at(g, 4 * PAGE);
	map_at(g + 8 * PAGE, 4 * PAGE);
	if (mremap(g, 4 * PAGE, 8 * PAGE, 0) != g)
		return 1;
	snapshot("mremap-grow-merge");
	munmap(g, 12 * PAGE);
	/* An old length of 0 maps a shared mapping's pages again, past its end too; the old VMA as it was. */
	g = map(8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	d = mremap(g + 2 * PAGE, 0, 3 * PAGE, MREMAP_MAYMOVE);
	if (d == MAP_FAILED || mremap(f + 4 * PAGE, 0, 6 * PAGE, MREMAP_MAYMOVE) == MAP_FAILED)
		return 1;
	d[PAGE] = 1;
	snapshot("mremap-dup");
	munmap(g, 8 * PAGE);

	brk0 = sbrk(0);
	if (brk(brk0 + 40 * PAGE))
		return 1;
	brk0[0] = 1;
	snapshot("brk-grow");
	if (brk(brk0 + 8 * PAGE))
		return 1;
	snapshot("brk-shrink");

	deep(300);
	snapshot("stack-after");

	pthread_barrier_init(&barrier, NULL, 3);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_barrier_wait(&barrier);
	snapshot("threads");
	pthread_barrier_wait(&barrier);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	snapshot("threads-joined");

	madvise(a, 4 * PAGE, MADV_DONTNEED);
	snapshot("madvise");

	/*
	 * Advice that changes VMA flags splits VMAs and merges them again, with
	 * no record: HUGEPAGE on a middle part, then NOHUGEPAGE over all of it
	 * (merging progressively); DONTDUMP over all, DODUMP on a part and
	 * DONTDUMP back (chromium's pattern). Nothing here was faulted in, so
	 * anon_vma never keeps pieces apart.
	 */
	g = map(8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	madvise(g + 2 * PAGE, 2 * PAGE, MADV_HUGEPAGE);
	snapshot("madvise-hugepage-split");
	madvise(g, 8 * PAGE, MADV_NOHUGEPAGE);
	snapshot("madvise-nohugepage-merge");
	munmap(g, 8 * PAGE);
	g = map(8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	madvise(g, 8 * PAGE, MADV_DONTDUMP);
	madvise(g + 4 * PAGE, 2 * PAGE, MADV_DODUMP);
	snapshot("madvise-dodump-split");
	madvise(g + 4 * PAGE, 2 * PAGE, MADV_DONTDUMP);
	snapshot("madvise-dontdump-merge");
	madvise(g + 6 * PAGE, 2 * PAGE, MADV_DONTFORK);   /* the child below has no such part */

	id = shmget(IPC_PRIVATE, 8 * PAGE, IPC_CREAT | 0600);
	b = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	snapshot("shmat");
	/* A part moved away and one mapped again stay at shmdt: it detaches the attach where it put them. */
	d = mremap(b + 6 * PAGE, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE);
	h = mremap(b + PAGE, 0, 2 * PAGE, MREMAP_MAYMOVE);
	if (d == MAP_FAILED || h == MAP_FAILED)
		return 1;
	munmap(b, PAGE);
	shmdt(b);
	snapshot("shmdt");
	munmap(d, 3 * PAGE);
	munmap(h, 2 * PAGE);

	/*
	 * A child in this address space (clone(CLONE_VM), as a launcher's
	 * helper runs): what it maps and unmaps is the parent's. Then a vfork
	 * child that execs, as chromium's launcher starts its processes.
	 */
	child = clone(clone_vm_child, clone_stack + sizeof(clone_stack), CLONE_VM | SIGCHLD, a);
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 1;
	snapshot("clone-vm");
	child = vfork();
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 1;
	snapshot("vfork-exec");

	child = fork();
	if (child == 0) {
		munmap(a, 4 * PAGE);
		map(3 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
		snapshot("child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	snapshot("after-fork");

	execl("/proc/self/exe", argv[0], "--after-exec", (char *)NULL);
	return 1;
}
