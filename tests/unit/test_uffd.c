/*
 * The userfaultfd reader: unmaps of a tracked range by raw syscalls (which
 * interposition cannot see) come out of the ring: munmap, a moving mremap
 * and madvise(DONTNEED); a page touched again after DONTNEED reads zero
 * and does not hang; a file mapping cannot be tracked; the reader thread
 * blocks every signal (a handler of the program's on it could wait for a
 * lock an unmapping thread holds). Skipped where this process may not
 * have a userfaultfd.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>

#include "watch/uffd.h"

#define PAGE 4096UL

/* The next change, waiting for the reader thread (it runs just after the unmapper is let go). */
static struct ms_change next(struct ms_evring *r)
{
	struct ms_change c;
	uint64_t lost;
	int i;

	for (i = 0; i < 5000; i++) {
		if (ms_evring_get(r, &c, &lost) == 1)
			return c;
		usleep(1000);
	}
	fail_msg("no change from the userfaultfd reader in 5 s");
	return c;
}

/* Whether every thread but this one blocks SIGUSR1 and SIGTERM (SigBlk in /proc). */
static int others_block_signals(void)
{
	char path[300], line[256];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int others = 0, blocking = 0;
	FILE *f;

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.' || atoi(d->d_name) == gettid())
			continue;
		others++;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", d->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigBlk:", 7)) {
				unsigned long long m = strtoull(line + 7, NULL, 16);

				blocking += (m & (1ULL << (SIGUSR1 - 1))) && (m & (1ULL << (SIGTERM - 1)));
			}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return others > 0 && others == blocking;
}

static void raw_syscalls_seen(void **state)
{
	struct ms_evring r;
	struct ms_uffd *u;
	struct ms_change c;
	char *p, *q, *hole;
	int err, fd;

	(void)state;
	assert_int_equal(ms_evring_init(&r, 64), 0);
	err = ms_uffd_open(&r, &u);
	if (err == -EPERM || err == -ENOSYS || err == -EACCES) {
		printf("SKIP: no userfaultfd here: %s\n", strerror(-err));
		ms_evring_release(&r);
		skip();
	}
	assert_int_equal(err, 0);
	assert_true(others_block_signals());
	p = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 1, 8 * PAGE);
	assert_int_equal(ms_uffd_track(u, p, 8 * PAGE), 0);

	assert_int_equal(syscall(SYS_madvise, p, PAGE, MADV_DONTNEED), 0);
	c = next(&r);
	assert_int_equal(c.op, MS_OP_MADVISE);
	assert_int_equal(c.release_start, (uint64_t)p);
	assert_int_equal(c.release_end, (uint64_t)p + PAGE);
	assert_int_equal(p[0], 0);              /* the fault after it is answered, not left hanging */

	assert_int_equal(syscall(SYS_munmap, p + 6 * PAGE, 2 * PAGE), 0);
	c = next(&r);
	assert_int_equal(c.op, MS_OP_UNMAP);
	assert_int_equal(c.release_start, (uint64_t)p + 6 * PAGE);
	assert_int_equal(c.release_end, (uint64_t)p + 8 * PAGE);

	hole = mmap(NULL, 4 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = (char *)syscall(SYS_mremap, p, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	assert_true(q == hole);
	c = next(&r);
	assert_int_equal(c.op, MS_OP_REMAP);
	assert_int_equal(c.release_start, (uint64_t)p);
	assert_int_equal(c.new_start, (uint64_t)hole);

	fd = open("/proc/self/exe", O_RDONLY);
	q = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(q != MAP_FAILED);
	assert_true(ms_uffd_track(u, q, PAGE) < 0);  /* a file mapping */
	munmap(q, PAGE);
	close(fd);
	ms_uffd_close(u);
	munmap(hole, 4 * PAGE);
	munmap(p, 6 * PAGE);
	ms_evring_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(raw_syscalls_seen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
