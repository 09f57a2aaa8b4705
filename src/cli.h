/* Helpers every subcommand shares: messages, strict number parsing, logging. */
#ifndef MS_CLI_H
#define MS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* The recording a command writes or reads when no file is named. */
#define CLI_DEFAULT_DATA "mapscope.data"
/* The highest PID the kernel hands out (PID_MAX_LIMIT on 64-bit): a larger one is a typing error. */
#define CLI_PID_MAX 4194304

/* "mapscope: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hint: <message>" on stderr: the fix for the error just printed. */
void cli_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the error and where to read the usage of cmd; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a decimal integer in [min, max] with nothing after it. 0 or -EINVAL/-ERANGE. */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A time as text output gives it: seconds from t0 (the recording's start)
 * with six decimals, or with abs the nanoseconds on the recording's clock.
 * Returns buf.
 */
const char *cli_time_text(char buf[32], uint64_t t, uint64_t t0, bool abs);

/* Installs the library's log callback: errors and warnings, debug with verbose. */
void cli_log_init(int verbose);

/* Silences the library's messages (quiet) or lets them through again at the level cli_log_init set. */
void cli_log_quiet(bool quiet);

/* --format's values, in the order their names have in parse-options' choice lists. */
enum cli_format { CLI_FORMAT_TEXT, CLI_FORMAT_JSON, CLI_FORMAT_CSV };

/*
 * Puts the heap of a command that reads a recording on 2 MiB pages, where
 * the kernel allows them: its first 14-16 MiB are then touched in a
 * fault a 2 MiB page, not thousands. Every thread allocates from it (one
 * malloc arena). Called once, before the command runs.
 */
void cli_heap_for_reading(void);
/*
 * stdout written 256 KiB a call where no one reads it as it comes: not to
 * a terminal, and only from a recording in a regular file (not stdin,
 * "-", nor a pipe, which may be read as it is written). Before anything
 * is written to stdout.
 */
void cli_stdout_for_reading(const char *input);

/*
 * Set by main for a command that reads a recording and then exits: its
 * session is left to the exit to free (replay_close()), except in a build
 * with AddressSanitizer or ThreadSanitizer, whose checks at exit must see
 * it freed and its threads joined.
 */
extern bool cli_exit_frees;

/* Prints the common hint for a failure to open perf events (errno err > 0). */
void cli_hint_privileges(int err);

#endif
