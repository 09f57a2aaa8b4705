/*
 * The CLI's side of a session (mapscope/session.h): opening one with the
 * errors and hints a user needs, running it, and the warnings a reader of
 * the output must see. The pipeline itself is the library's.
 */
#ifndef MS_REPLAY_H
#define MS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <mapscope/session.h>

/* Opens path (opts may be NULL); prints the error and returns EXIT_RUNTIME on failure. */
int replay_open(struct ms_session **s, const char *path, const struct ms_session_opts *opts);

/*
 * Runs to the end (or until an analysis stops it). 0, also for data that
 * ends in a damaged record (ms_session_corrupt says so), or EXIT_RUNTIME
 * with the error printed.
 */
int replay_run(struct ms_session *s, const char *path);

/* Prints the warnings a reader of the output must see (uncertain attribution, lost records, corruption). */
void replay_warnings(struct ms_session *s, const char *path);

/*
 * Parses a time: integer nanoseconds on the recording's clock, "+SECONDS"
 * from the start (*relative set, the offset in ns returned), or "end".
 * 0 or -EINVAL.
 */
int parse_time(const char *s, uint64_t *ns, bool *relative);

#endif
