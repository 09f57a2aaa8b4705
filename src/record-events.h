/* record -e EVENT: hardware data-address events, by the names users know. */
#ifndef MS_RECORD_EVENTS_H
#define MS_RECORD_EVENTS_H

#include <stddef.h>
#include <linux/perf_event.h>

struct cli_option;
struct ms_record_opts;

#define RECORD_MAX_EVENTS 8

struct record_events {
	const char *names[RECORD_MAX_EVENTS];
	struct perf_event_attr attrs[RECORD_MAX_EVENTS];
	size_t n;
};

/* -e EVENT, repeatable (opt->value: a struct record_events). */
int record_events_opt(const struct cli_option *opt, const char *arg);

/*
 * Resolves every event (before anything starts). 0, or the exit status
 * after the message: 1 where this machine cannot take one (it says so and
 * names --referenced), 2 where a name does not parse.
 */
int record_events_resolve(struct record_events *ev);

/* The library's options for them. */
void record_events_options(const struct record_events *ev, struct ms_record_opts *ro);

/* After the events failed to open (err > 0): why, where they are ours, and what to use instead. */
void record_events_hint(const struct record_events *ev, int err);

#endif
