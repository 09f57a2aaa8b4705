/* The program aspace-ops execs last: it maps and touches memory of its own. */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	size_t len = 4 * 4096, off;
	volatile char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (a == MAP_FAILED)
		return 1;
	printf("mmap pid=%d tid=%d start=%p end=%p kind=anon\n", getpid(),
	       (int)syscall(SYS_gettid), (void *)a, (void *)(a + len));
	for (off = 0; off < len; off += 4096)
		a[off] = 1;
	printf("touch pid=%d tid=%d start=%p end=%p\n", getpid(), (int)syscall(SYS_gettid),
	       (void *)a, (void *)(a + len));
	return 0;
}
