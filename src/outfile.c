/* The output files -o names: a temporary file renamed into place (a device or FIFO written in place), never written through a link. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "outfile.h"

/*
 * Where path is a link or a directory, says so (and returns EXIT_RUNTIME).
 * *special: it is there and is no regular file (a device, /dev/null say,
 * or a FIFO), to be written in place.
 */
static int check_target(const char *path, bool *special)
{
	struct stat st;

	*special = false;
	if (lstat(path, &st))
		return 0;
	if (S_ISLNK(st.st_mode)) {
		cli_error("cannot write '%s': it is a symbolic link", path);
		return EXIT_RUNTIME;
	}
	if (S_ISDIR(st.st_mode)) {
		cli_error("cannot create '%s': %s", path, strerror(EISDIR));
		return EXIT_RUNTIME;
	}
	*special = !S_ISREG(st.st_mode);
	return 0;
}

/*
 * A device or a FIFO written in place, as a shell's redirection writes
 * it: a temporary file renamed over it would put a regular file where it
 * was (as root, over /dev/null itself). 0 with out->fd open; 1 where a
 * regular file has taken its place since (the caller goes the usual way);
 * EXIT_RUNTIME after the message.
 */
static int open_in_place(struct outfile *out, const char *path)
{
	struct stat st;

	out->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (out->fd < 0) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (!fstat(out->fd, &st) && !S_ISREG(st.st_mode))
		return 0;
	close(out->fd);
	out->fd = -1;
	return 1;
}

int outfile_open(struct outfile *out, const char *path)
{
	unsigned int i;
	bool special;
	int ret;

	out->path = path;
	out->tmp = NULL;
	out->fd = -1;
	if ((ret = check_target(path, &special)))
		return ret;
	if (special && (ret = open_in_place(out, path)) != 1)
		return ret;
	/* Beside the target, so that the rename stays in one filesystem; O_EXCL: a name taken is tried again. */
	for (i = 0; i < 100 && out->fd < 0; i++) {
		free(out->tmp);
		if (asprintf(&out->tmp, "%s.%ld-%u.tmp", path, (long)getpid(), i) < 0) {
			out->tmp = NULL;
			errno = ENOMEM;
			break;
		}
		out->fd = open(out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (out->fd < 0 && errno != EEXIST)
			break;
	}
	if (out->fd < 0) {
		cli_error("cannot create '%s': %s", path, strerror(errno));
		free(out->tmp);
		out->tmp = NULL;
		return EXIT_RUNTIME;
	}
	return 0;
}

FILE *outfile_fopen(struct outfile *out, const char *path)
{
	FILE *f;

	if (outfile_open(out, path))
		return NULL;
	f = fdopen(out->fd, "w");
	if (!f) {
		cli_error("cannot create '%s': %s", out->path, strerror(errno));
		outfile_close(out, false);
		return NULL;
	}
	out->fd = -1;
	return f;
}

int outfile_fclose(struct outfile *out, FILE *f)
{
	bool ok = !fclose(f);

	if (!ok)
		cli_error("cannot write '%s': %s", out->path, strerror(errno));
	return outfile_close(out, ok);
}

int outfile_stdout(struct outfile *out)
{
	fflush(stdout);
	if (dup2(out->fd, STDOUT_FILENO) < 0) {
		cli_error("cannot create '%s': %s", out->path, strerror(errno));
		return EXIT_RUNTIME;
	}
	close(out->fd);
	out->fd = -1;
	return 0;
}

int outfile_close(struct outfile *out, bool ok)
{
	int ret = ok ? 0 : EXIT_RUNTIME;

	if (out->fd >= 0 && close(out->fd) && ok) {
		cli_error("cannot write '%s': %s", out->path, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	out->fd = -1;
	if (!out->tmp)
		return ret;
	if (!ret && rename(out->tmp, out->path)) {
		cli_error("cannot create '%s': %s", out->path, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	if (ret)
		unlink(out->tmp);
	free(out->tmp);
	out->tmp = NULL;
	return ret;
}
