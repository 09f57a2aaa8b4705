/*
 * Internal: uprobes of our own at prefetch instructions, through tracefs's
 * uprobe_events, each fetching the registers of its instruction's
 * addressing mode (record --prefetches). A uprobe traps on every hit, in
 * every process that maps its binary, for as long as it exists: one left
 * behind slows its program for ever. So every uprobe placed here is in a
 * group of this process's own, mapscope_PID, and a watchdog process
 * (kernel/watchdog.h) removes that group's events, and nothing else, when
 * the recorder ends, however it ends. uprobe_events is only ever appended
 * to: opening it with O_TRUNC would remove every uprobe on the machine.
 *
 * Each event's fields: base and idx (the registers, x64; an immediate 0
 * where the mode has none), disp (s64) and scale (u8), both immediates:
 * a sample carries all that its effective address needs, and perf script
 * prints it.
 */
#ifndef MS_KERNEL_UPROBE_H
#define MS_KERNEL_UPROBE_H

#include <stddef.h>
#include <sys/types.h>

#include "symbols/prefetch.h"

/* The prefix of our groups: mapscope_PID. */
#define MS_UPROBE_GROUP_PREFIX "mapscope_"
/* Our one event in it: every prefetch site is a probe of mapscope_PID/pf. */
#define MS_UPROBE_EVENT "pf"

struct ms_uprobes;

/*
 * Checks that dir/uprobe_events can be written and starts the watchdog of
 * the group mapscope_PID (this process's pid). NULL with errno: EACCES or
 * EPERM (no write access to tracefs), ENOENT (no uprobe_events: a kernel
 * without CONFIG_UPROBE_EVENTS), others from fork.
 */
struct ms_uprobes *ms_uprobes_new(const char *dir);

const char *ms_uprobes_group(const struct ms_uprobes *u);

/*
 * The uprobe_events line of event `name` at site s of binary path, into
 * out (len bytes). 0, or -EINVAL where path holds a space or a control
 * character (uprobe_events cannot take it) or the line does not fit.
 */
int ms_uprobe_line(const char *group, const char *name, const char *path, const struct ms_prefetch_site *s,
		   char *out, size_t len);

/*
 * Places a uprobe at site s of path, as one more probe of the group's one
 * event, MS_UPROBE_EVENT: the kernel appends a probe whose fields have
 * the names and types of the event's first to that event (5.5 on), and
 * arms it at once where the event is open, so that a binary mapped in
 * the middle of a recording (dlopen) is probed without a new perf event.
 * 0 or a negative errno (from the kernel: -ENOENT where the binary is
 * gone, -EINVAL where the kernel refuses the place or the fetch
 * arguments).
 */
int ms_uprobes_add(struct ms_uprobes *u, const char *path, const struct ms_prefetch_site *s);

/*
 * The event's first probe, which makes it exist before any binary is
 * scanned: at a function of mapscope's own that nothing calls, so it
 * never fires, with immediates of the fields' types. 0 or a negative
 * errno.
 */
int ms_uprobes_anchor(struct ms_uprobes *u);

size_t ms_uprobes_count(const struct ms_uprobes *u);
pid_t ms_uprobes_watchdog(const struct ms_uprobes *u);

/*
 * Removes every event of group from dir/uprobe_events, and no other; an
 * event still open (EBUSY: the recorder's perf events are closing) is
 * retried for up to wait_ms. 0 or the last error.
 */
int ms_uprobes_teardown(const char *dir, const char *group, int wait_ms);

/* Has the watchdog remove the group and waits for it, then frees u. 0, or -EIO: some are left. Accepts NULL. */
int ms_uprobes_free(struct ms_uprobes *u);

#endif
