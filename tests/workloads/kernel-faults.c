/*
 * Page faults the kernel takes on the program's behalf: read() into 64
 * fresh pages faults each in kernel mode (copy_to_user), which a recording
 * that excludes the kernel (an ordinary user's, page-faults:u) cannot see;
 * then 64 fresh pages touched by the program itself, which every
 * recording sees. Prints both ranges, then unmaps the first:
 *   kernel 0xSTART 0xEND
 *   user 0xSTART 0xEND
 * usage: kernel-faults DIR   (a folder it may write a scratch file in)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 64

static char *fresh(void)
{
	char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	static char block[PAGES * PAGE];
	char path[4096], *k, *u;
	int fd, i;

	snprintf(path, sizeof(path), "%s/kernel-faults.tmp", argc > 1 ? argv[1] : "/tmp");
	memset(block, 'x', sizeof(block));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) || lseek(fd, 0, SEEK_SET)) {
		perror(path);
		return 1;
	}
	k = fresh();
	if (read(fd, k, PAGES * PAGE) != PAGES * PAGE) {
		perror("read");
		return 1;
	}
	close(fd);
	unlink(path);
	u = fresh();
	for (i = 0; i < PAGES; i++)
		u[i * PAGE] = 1;
	printf("kernel %p %p\nuser %p %p\n", (void *)k, (void *)(k + PAGES * PAGE), (void *)u, (void *)(u + PAGES * PAGE));
	i = k[PAGE] == 'x' ? 0 : 1;
	munmap(k, PAGES * PAGE);
	return i;
}
