/*
 * Internal: the processes between an exec and the first sample of their
 * own code. The maps of that window are the exec's, made by the kernel's
 * ELF loader (ms_record trims them as the loader did). A COMM record of an
 * exec opens a process's window; a sample of that process at a user-space
 * address closes it. Samples at kernel addresses do not: the loader's own
 * page faults (clearing .bss), the VMA tree's writes, and a clock that
 * ticks while the kernel runs the exec are all the kernel's.
 *
 * Per recording, and as many windows open at once as there are processes
 * in an exec (a build's hundreds of compilers).
 */
#ifndef MS_SESSION_EXECWIN_H
#define MS_SESSION_EXECWIN_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "util/u32map.h"

struct ms_execwin {
	struct ms_u32map pids;       /* pid -> the window set itself: a set */
};

void ms_execwin_init(struct ms_execwin *w);
/* Closes every window and frees their memory. */
void ms_execwin_release(struct ms_execwin *w);

/*
 * Opens or closes windows by h (records of ms_record's events: every
 * sample starts IDENTIFIER, IP, TID). 0, or -ENOMEM where a window could
 * not be opened (the others stay as they were).
 */
int ms_execwin_track(struct ms_execwin *w, const struct perf_event_header *h);

/* Whether pid is in its exec's window; whether any process is. */
bool ms_execwin_open(const struct ms_execwin *w, uint32_t pid);
bool ms_execwin_any(const struct ms_execwin *w);

#endif
