/*
 * The CLI's side of a session (mapscope/session.h): opening one with the
 * errors and hints a user needs, running it, and the warnings a reader of
 * the output must see. The pipeline itself is the library's.
 */
#ifndef MS_REPLAY_H
#define MS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mapscope/session.h>

struct ms_pdreader;

/* Opens path (opts may be NULL); prints the error and returns EXIT_RUNTIME on failure. */
int replay_open(struct ms_session **s, const char *path, const struct ms_session_opts *opts);

/*
 * Runs to the end (or until an analysis stops it). 0, also for data that
 * ends in a damaged record (ms_session_corrupt says so), or EXIT_RUNTIME
 * with the error printed.
 */
int replay_run(struct ms_session *s, const char *path);

/*
 * Done with s (NULL: nothing to do): freed, or where the process exits
 * next (cli_exit_frees) left to the exit, what it runs on threads of its
 * own stopped first: freeing a chromium recording's model and symbols
 * piece by piece, and waking a sleeping thread to end, took 2-15 ms of a
 * 45 ms report.
 */
void replay_close(struct ms_session *s);

/* Prints the warnings a reader of the output must see (uncertain attribution, lost records, corruption). */
void replay_warnings(struct ms_session *s, const char *path);

/*
 * The recording at path opened to look at its header, without a word
 * (replay_open says what is wrong with a file): NULL for a pipe, which
 * cannot be read twice, and for a file that cannot be opened. The caller
 * frees it (ms_pdreader_free).
 */
struct ms_pdreader *replay_peek(const char *path);

/*
 * Whether r's events have call chains or copied stacks, from which the
 * call that made each region is named (true where r is NULL: a pipe, or
 * a file the replay will say is unreadable).
 */
bool replay_has_call_chains(const struct ms_pdreader *r);

/*
 * What the recording lost (ms_format_losses), carried in every output so
 * that a file read later says it is incomplete: a line "PREFIXlosses:
 * ...\n" on f (a comment in text and CSV: prefix "# "), or the "losses"
 * key of a JSON object. Nothing where nothing was lost.
 */
void replay_loss_line(const struct ms_session *s, FILE *f, const char *prefix);
/*
 * Where the recording's page faults exclude the kernel (user mode): a
 * line saying what that leaves out, or a "user_mode_faults" key.
 */
void replay_mode_line(const struct ms_session *s, FILE *f, const char *prefix);
struct ms_json;
void replay_mode_json(const struct ms_session *s, struct ms_json *w);
/*
 * What the samples are: for each event with data addresses, a line
 * "PREFIXsamples of event 'page-faults': page faults, each the first touch
 * of a page ..." (hardware events: ongoing access). In JSON:
 * "sample_events": [{"name", "measures": "first_touch" or "access"}].
 */
void replay_event_line(const struct ms_session *s, FILE *f, const char *prefix);
void replay_event_json(const struct ms_session *s, struct ms_json *w);
void replay_loss_json(const struct ms_session *s, struct ms_json *w);

/*
 * The exit status of a command that read the session: EXIT_RUNTIME where
 * records were lost to damage (a damaged record or sample, one of an
 * unknown type, a name cut short), else 0. What the kernel reported lost is said, not
 * failed on: the recording is as the kernel wrote it.
 */
int replay_status(const struct ms_session *s);

/*
 * Parses a time: integer nanoseconds on the recording's clock, seconds on
 * it with a decimal point as perf prints and takes them ("1110.52"),
 * "+SECONDS" from the start (*relative set, the offset in ns returned),
 * or "end". 0 or -EINVAL.
 */
int parse_time(const char *s, uint64_t *ns, bool *relative);

/*
 * Parses a window "START,END", each end as parse_time() takes it or empty
 * (leaving *from or *to as they were). 0, -EINVAL, or -ERANGE where it
 * ends before it starts.
 */
int replay_parse_window(const char *s, uint64_t *from, bool *from_rel, uint64_t *to, bool *to_rel);

#endif
