/*
 * Internal: tracepoint ids and perf's TRACING_DATA section.
 *
 * Every function takes the tracefs directory, so tests can point them at a
 * fake tree; ms_tracefs_dir() finds the real one.
 */
#ifndef MS_KERNEL_TRACEFS_H
#define MS_KERNEL_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/*
 * The tracefs mount point, mounting tracefs where it is missing and we may.
 * NULL with errno set where there is none; the string is static.
 */
const char *ms_tracefs_dir(void);

/*
 * The first line of a small kernel file (a sysfs attribute, a tracefs
 * id), without its newline, into out (cut to len - 1). 0 or a negative errno.
 */
int ms_kernel_read_line(const char *path, char *out, size_t len);

/*
 * Remounts the tracefs at dir with its files' group gid and its top
 * folder's mode (tracefs's gid= and mode= options), the other mount flags
 * kept: how `mapscope setup` makes the tracepoints readable for a group.
 * 0 or a negative errno.
 */
int ms_tracefs_remount(const char *dir, unsigned int gid, unsigned int mode);

/*
 * Writes text to a kernel file in one write(2), opened with how (O_TRUNC
 * for an attribute; O_APPEND for a list such as uprobe_events, which
 * O_TRUNC would clear). 0 or a negative errno (-EIO: a short write).
 */
int ms_kernel_write(const char *path, const char *text, int how);

/* Reads DIR/events/SYS/NAME/id. 0 or a negative errno. */
int ms_tracefs_event_id(const char *dir, const char *sys, const char *name,
			uint64_t *id);

/*
 * Appends to out the TRACING_DATA blob (perf's trace-event-info layout,
 * version 0.6) describing the events names[0..n), each "sys/name", grouped
 * by system in the order they first appear. 0 or a negative errno; out may
 * hold a partial blob after a failure and stays the caller's.
 */
int ms_tracefs_tracing_data(const char *dir, const char *const *names, size_t n,
			    struct ms_buf *out);

/*
 * Copies the TRACING_DATA blob td[0, len) into out with one more system,
 * sys, of one event whose format text is fmt[0, fmt_len): for events
 * that no tracefs has (mapscope's own), so that perf prints them too.
 * 0, -EBADMSG where td does not parse up to its systems, or -ENOMEM.
 */
int ms_tracefs_add_system(const void *td, size_t len, const char *sys, const void *fmt, size_t fmt_len,
			  struct ms_buf *out);

#endif
