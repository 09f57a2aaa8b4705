/* The CPUs online (kernel/cpus.h): a ring buffer each, in kernel/live.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernel/cpus.h"

int ms_cpus_parse(const char *s, int *cpus, int max)
{
	int n = 0;
	char *end;
	long a, b;

	while (*s && *s != '\n') {
		a = strtol(s, &end, 10);
		if (end == s)
			return -EINVAL;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		for (; a <= b; a++)
			if (n < max)
				cpus[n++] = (int)a;
		if (*s == ',')
			s++;
	}
	return n;
}

int ms_cpus_online(int *cpus, int max)
{
	char text[4096];
	ssize_t len;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	len = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	text[len] = '\0';
	return ms_cpus_parse(text, cpus, max);
}
