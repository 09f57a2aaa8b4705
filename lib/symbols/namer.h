/*
 * Internal: pinned chains' sites, and code addresses' frames and symbols,
 * named on a thread of their own while the replay goes on (namer.c), each
 * as the caller's symbols would name it through its pin later.
 */
#ifndef MS_SYMBOLS_NAMER_H
#define MS_SYMBOLS_NAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/symbols.h>

#include "symbols/pin.h"

struct ms_namer;
struct ms_name_job;

/*
 * A namer of sites into buffers of site_len bytes, and where text_len is
 * not 0 of their chains as text into buffers of text_len bytes, as the
 * caller's symbols s would name them; its thread starts here. NULL where
 * it would not pay or cannot be: one CPU to run on, fewer than 4096
 * descriptors allowed (RLIMIT_NOFILE), MAPSCOPE_NAMER=off, no memory or
 * thread (the caller then names through its pins).
 */
struct ms_namer *ms_namer_new(const struct ms_symbols *s, size_t site_len, size_t text_len);

/*
 * Queues the naming of the site of chain (len code addresses, innermost
 * first) of process pid, pinned just now by s into pin. NULL where it
 * cannot be queued (no memory; a binary of the chain not read as a pin
 * leaves it): the caller names it through the pin. Queued chains go to
 * the thread some at a time; ms_namer_wait() sends any left.
 */
struct ms_name_job *ms_namer_submit(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
				    uint32_t pid, const uint64_t *chain, uint32_t len);

/* The most frames a code address's job names (ms_namer_submit_frames()). */
#define MS_NAMER_FRAMES 16

/*
 * Queues the naming of code address ip of process pid, pinned just now by
 * s into pin (a chain of ip alone), as ms_symbols_code_frames() names it
 * now. NULL where it cannot be queued: the caller names it through the pin
 * (ms_symbols_code_frames_pinned()).
 */
struct ms_name_job *ms_namer_submit_frames(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
					   uint32_t pid, uint64_t ip);

/*
 * A frames job's frames, at most max into out (their strings the namer's
 * own, until ms_namer_free()), waited for as ms_namer_wait() waits: how
 * many (0: no binary held the address), or -1 where the thread could not
 * name it as the pin would: the caller names it through the pin. Asked once.
 */
int ms_namer_wait_frames(struct ms_namer *n, struct ms_name_job *j, struct ms_frame *out, int max);

/*
 * Queues the naming of code address ip of process pid's symbol, pinned
 * just now by s into pin (a chain of ip alone), as
 * ms_symbols_code_symbol() names it now. NULL where it cannot be queued:
 * the caller names it through the pin (ms_symbols_code_symbol_pinned()).
 */
struct ms_name_job *ms_namer_submit_symbol(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
					   uint32_t pid, uint64_t ip);

/*
 * A symbol job's answer into *out (its strings the namer's own, until
 * ms_namer_free()), waited for as ms_namer_wait() waits: 1 where a binary
 * holds the address, 0 where none does, or -1 where the thread could not
 * name it as the pin would: the caller names it through the pin. Asked once.
 */
int ms_namer_wait_symbol(struct ms_namer *n, struct ms_name_job *j, struct ms_code_sym *out);

/*
 * The job's site and chain as text (malloc'd, the caller's now; the site
 * "" where the chain has none, the text NULL where the namer names none),
 * waited for, the thread told to name it next where it has not begun:
 * true. false where the thread could not name it as the pin would (a
 * binary it could not read as the caller did): the caller names it
 * through the pin. The job is the namer's still, and asked once.
 */
bool ms_namer_wait(struct ms_namer *n, struct ms_name_job *j, char **site, char **text);

/* The job will not be asked for: the thread passes over it where it has not begun. */
void ms_namer_drop(struct ms_namer *n, struct ms_name_job *j);

/*
 * Of the jobs named so far: how many the cache of earlier runs' answers
 * gave (namecache.h), and how many were named and put in it for the next.
 */
void ms_namer_cache_counts(struct ms_namer *n, size_t *hits, size_t *put);

/*
 * Stops the thread taking jobs, once the one it is naming is named, and
 * does not wait for it to end: for a process about to exit, whose exit
 * ends it (waking it to end costs a sleeping CPU's wake-up, milliseconds
 * on a virtual machine). The answers it named for the cache are saved
 * here (namecache.h). Only ms_namer_free() may follow.
 */
void ms_namer_stop(struct ms_namer *n);

/*
 * Stops the thread (a job it is naming is finished first), saves its
 * answers not saved yet, and frees the namer and every job.
 */
void ms_namer_free(struct ms_namer *n);

#endif
