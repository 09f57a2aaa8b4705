/*
 * The processes between an exec and the first sample of their own code:
 * the maps of that window are the exec's, made by the kernel's ELF loader
 * (record trims them as the loader did). A COMM record of an exec opens a
 * process's window; a sample of that process at a user-space address
 * closes it. Samples at kernel addresses do not: the loader's own page
 * faults (clearing .bss), the VMA tree's writes, and a clock that ticks
 * while the kernel runs the exec are all the kernel's.
 */
#ifndef MS_EXEC_WINDOW_H
#define MS_EXEC_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>

/* Opens or closes windows by h (records of mapscope record: every sample starts IDENTIFIER, IP, TID). */
void exec_window_track(const struct perf_event_header *h);

/* Whether pid is in its exec's window; whether any process is. */
bool exec_window_open(uint32_t pid);
bool exec_window_any(void);

/* Closes every window. */
void exec_window_reset(void);

#endif
