/*
 * ms-synth: writes a synthetic recording of what this machine cannot record
 * (see synth_rec.h), and prints its ground truth.
 *
 *   ms-synth damon|pebs|ibs|spe|pebs-prefetch|spe-prefetch|nullpage[-MIN_ADDR] FILE
 */
#include <fcntl.h>

#include "synth_rec.h"

int main(int argc, char **argv)
{
	static const char *const styles[] = { "pebs", "ibs", "spe" };
	int fd, err = -EINVAL, i;

	if (argc != 3) {
		fprintf(stderr, "usage: ms-synth damon|pebs|ibs|spe|pebs-prefetch|spe-prefetch|nullpage[-MIN_ADDR] FILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "damon"))
		err = sr_write_damon(fd, stdout);
	if (!strcmp(argv[1], "nullpage"))
		err = sr_write_nullpage(fd, UINT64_MAX, stdout);
	if (!strncmp(argv[1], "nullpage-", 9))
		err = sr_write_nullpage(fd, strtoull(argv[1] + 9, NULL, 0), stdout);
	for (i = 0; i < 3; i++) {
		if (!strcmp(argv[1], styles[i]))
			err = sr_write_hw(fd, (enum sr_style)i, stdout);
		if (!strncmp(argv[1], styles[i], strlen(styles[i])) && !strcmp(argv[1] + strlen(styles[i]), "-prefetch"))
			err = sr_write_hw_prefetch(fd, (enum sr_style)i, stdout);
	}
	close(fd);
	if (err)
		fprintf(stderr, "ms-synth: cannot write '%s': %s\n", argv[2], strerror(-err));
	return err ? 1 : 0;
}
