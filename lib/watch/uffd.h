/*
 * Internal: the watch's userfaultfd mode. Ranges the caller tracks are
 * registered with a userfaultfd that asks for UNMAP, REMAP and REMOVE
 * events; a thread of the library's own reads them and puts them in the
 * ring. The kernel holds an unmapping thread until its event is read, so
 * the reader never takes a lock and never allocates: it cannot wait on
 * anything the unmapping thread holds (libfabric's hang, #5554, was a
 * monitor calling free() while the unmapping thread held malloc's lock).
 */
#ifndef MS_WATCH_UFFD_H
#define MS_WATCH_UFFD_H

#include <stddef.h>

#include "watch/evring.h"

struct ms_uffd;

/*
 * A userfaultfd for this process (UFFD_USER_MODE_ONLY first: what an
 * ordinary user may have at vm.unprivileged_userfaultfd=0, Linux 5.11+),
 * and its reader thread. 0 with *u the caller's, to ms_uffd_close(); or a
 * negative errno (-EPERM: not allowed here; -ENOSYS: no userfaultfd).
 */
int ms_uffd_open(struct ms_evring *r, struct ms_uffd **u);

/* Registers [addr, addr + len), page-aligned outward: its unmaps by any path are seen. 0 or a negative errno. */
int ms_uffd_track(struct ms_uffd *u, const void *addr, size_t len);

/* Stops the reader and closes the descriptor (ranges are unregistered with it). Accepts NULL. */
void ms_uffd_close(struct ms_uffd *u);

#endif
