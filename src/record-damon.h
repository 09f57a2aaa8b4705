/* record --damon: its options, the check that DAMON is ours to use, the start, and the fallback. */
#ifndef MS_RECORD_DAMON_H
#define MS_RECORD_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_option;
struct ms_record;
struct ms_record_opts;

struct record_damon {
	bool on;                     /* --damon given */
	bool usable;                 /* and no kdamond but ours would run */
	uint64_t sample_us, aggr_us, update_us;   /* --damon-intervals; 0: DAMON's defaults */
	uint64_t min_regions, max_regions;        /* --damon-regions; 0: DAMON's defaults */
};

/* --damon-intervals SAMPLE,AGGR,UPDATE and --damon-regions MIN,MAX (opt->value: a struct record_damon). */
int record_damon_opt_intervals(const struct cli_option *opt, const char *arg);
int record_damon_opt_regions(const struct cli_option *opt, const char *arg);

/*
 * Before the recording is set up: whether DAMON can be ours (d->usable);
 * where not, the fallback: --referenced at its default interval, unless
 * *referenced_ms already asks for it.
 */
void record_damon_check(struct record_damon *d, uint64_t *referenced_ms);

/* The library's options for it. */
void record_damon_options(const struct record_damon *d, struct ms_record_opts *ro);

/* After the targets are set up, before the file starts: our kdamond on pids[0, n); the fallback on failure. */
void record_damon_start(struct record_damon *d, struct ms_record *rec, const pid_t *pids, size_t n);

/*
 * Where DAMON cannot be ours (err: -EBUSY, someone else's kdamond runs;
 * -ENOENT, no DAMON; others), one line says what, why and the fix, and
 * the recording goes on: with the accessed bits (--referenced) where
 * referenced says they took DAMON's place, else without access figures.
 */
void record_damon_fallback(struct record_damon *d, int err, bool referenced);

#endif
