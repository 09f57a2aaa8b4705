/* record --prefetches[=SPEC]: its option, the binaries it names, and what it says about them. */
#ifndef MS_RECORD_PREFETCH_H
#define MS_RECORD_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_option;
struct ms_record;
struct ms_record_opts;

#define RECORD_PREFETCH_MAX_BINS 16

struct record_prefetch {
	bool on;                     /* --prefetches given */
	char *paths[RECORD_PREFETCH_MAX_BINS];   /* the binaries scanned, made absolute */
	int nr_paths;
	const char *func;            /* func=NAME */
	uint64_t max;                /* max=N; 0: every site */
	uint64_t hot;                /* hot=N; 0: every site */
	uint64_t window_ms, every_ms;    /* window=T/P; 0: always */
	bool named;                  /* SPEC named binaries: only those, none followed as mapped */
};

/*
 * --prefetches[=SPEC] (opt->value: a struct record_prefetch). SPEC: PATH,
 * func=NAME, max=N, hot=N, window=T/P, comma-separated.
 */
int record_prefetch_opt(const struct cli_option *opt, const char *arg);

/*
 * Where SPEC names no binary: the command's own (cmd, resolved through
 * PATH) or each attached process's executable. 0, or an exit status.
 */
int record_prefetch_resolve(struct record_prefetch *p, const char *cmd, const pid_t *pids, int nr_pids);

/*
 * Where uprobe_events cannot be written (a user without root): says so,
 * with what would allow it, and the recording goes on without prefetches.
 */
void record_prefetch_check(struct record_prefetch *p);

/* The library's options for it. */
void record_prefetch_options(const struct record_prefetch *p, struct ms_record_opts *ro);

/* Why ms_record_new() failed, where --prefetches is the cause (tracefs not writable): true where said. */
bool record_prefetch_explain(const struct record_prefetch *p, int err);

/* What was found in each binary and probed; a binary with no prefetch instruction says so. */
void record_prefetch_report(const struct record_prefetch *p, const struct ms_record *rec, int verbose);

void record_prefetch_release(struct record_prefetch *p);

#endif
