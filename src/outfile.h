/*
 * An output file named by -o, written whole or not at all, and never
 * through a link: a temporary file beside it, opened O_CREAT|O_EXCL|
 * O_NOFOLLOW, renamed over it when the writing succeeded. A symbolic link
 * planted at the path (in a sticky /tmp, say) is refused, so that no one
 * can make a report truncate a file its writer may write and they may not.
 * A device or a FIFO at the path (/dev/null, a pipe a reader waits on) is
 * written in place, as a shell's redirection does: renamed over, it would
 * be replaced by a regular file.
 */
#ifndef MS_OUTFILE_H
#define MS_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile {
	const char *path;       /* the target, borrowed */
	char *tmp;              /* the temporary file beside it, owned; NULL: written in place */
	int fd;                 /* open on tmp; -1 once handed on or closed */
};

/*
 * Creates the temporary file for path (mode 0644 less the umask) in out,
 * or opens the device or FIFO at path. 0, or EXIT_RUNTIME after the
 * message: "cannot write 'PATH': it is a symbolic link" where path is
 * one, "cannot write 'PATH': ..." where a device or FIFO cannot be opened,
 * "cannot create 'PATH': ..." otherwise.
 */
int outfile_open(struct outfile *out, const char *path);

/* outfile_open, and the file as a stream (out->fd passes to it); NULL after the message, nothing left. */
FILE *outfile_fopen(struct outfile *out, const char *path);

/* Closes f, the stream of outfile_fopen, and ends the output as outfile_close does: 0 or EXIT_RUNTIME. */
int outfile_fclose(struct outfile *out, FILE *f);

/* Points stdout at the file (out->fd passes to it): 0, or EXIT_RUNTIME after the message. */
int outfile_stdout(struct outfile *out);

/*
 * Ends the output: where ok, renames the temporary file over the target
 * (0, or EXIT_RUNTIME after the message); else removes it and returns
 * EXIT_RUNTIME. Closes out->fd if still open; the caller closes any stream
 * first. Frees what out holds.
 */
int outfile_close(struct outfile *out, bool ok);

#endif
