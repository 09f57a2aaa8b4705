/*
 * Internal: the syscalls whose tracepoints record follows, and what each
 * entry's sample carries beyond every event's fields: a kernel filter, a
 * copy of the user stack, a wakeup per sample.
 */
#ifndef MS_KERNEL_SYSEVENTS_H
#define MS_KERNEL_SYSEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Their names; those from MS_SYSEVENTS_FIRST_OPTIONAL on may be missing from a kernel. */
extern const char *const ms_sysevents[];
extern const size_t ms_nr_sysevents;
#define MS_SYSEVENTS_FIRST_OPTIONAL 8

/* The tracepoint filter of syscall sc's entry (enter) or exit, or NULL. */
const char *ms_sysevent_filter(const char *sc, bool enter);

/*
 * Bytes of user stack its samples copy (0: none), with live's flags
 * (MS_LIVE_*; not MS_LIVE_DWARF, whose every event has its own), where
 * regs: the architecture's user registers can go with them.
 */
uint32_t ms_sysevent_stack_bytes(const char *sc, bool enter, unsigned int flags, bool regs);

/* Whether each sample wakes the reader at once (not at the ring's watermark). */
bool ms_sysevent_wakes(const char *sc, bool enter);

#endif
