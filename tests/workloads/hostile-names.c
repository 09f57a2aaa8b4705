/*
 * A program whose names attack the reader: its comm and the file it maps
 * hold a newline, an escape sequence (ESC [31m, and CSI as a UTF-8 C1
 * control) and a forged row ("FAKE 99.99%"). It maps that file, touches
 * its pages, unmaps it and exits. Run as hostile-names DIR; it prints:
 *
 *   file pages=16
 *
 * A report of it must show the names escaped, on the lines they belong to.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#define PAGE 4096
#define PAGES 16

/* 15 bytes, the most a comm holds. */
static const char comm[] = "\n\033[31mFAKE 99.9";
static const char file[] = "map\n   9999 99.99%  FAKE \033[31mred\302\2330m\tx";

int main(int argc, char **argv)
{
	char path[4096];
	volatile char *p;
	int fd, i;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile-names DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[1], file);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, PAGES * PAGE)) {
		perror("hostile-names: cannot create the file");
		return 1;
	}
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("hostile-names: mmap");
		return 1;
	}
	for (i = 0; i < PAGES; i++)
		p[i * PAGE] = 1;
	munmap((void *)p, PAGES * PAGE);
	close(fd);
	printf("file pages=%d\n", PAGES);
	return 0;
}
