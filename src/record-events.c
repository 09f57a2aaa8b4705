/*
 * record -e EVENT: names resolved by the library (ms_record_event_resolve)
 * before anything starts, so that a machine without the PMU is told so at
 * once, with what it can use instead.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mapscope/record.h>

#include "cli.h"
#include "parse-options.h"
#include "record-events.h"

int record_events_opt(const struct cli_option *opt, const char *arg)
{
	struct record_events *ev = opt->value;

	if (ev->n == RECORD_MAX_EVENTS)
		return cli_usage_error("record", "too many events: -e takes at most %d", RECORD_MAX_EVENTS);
	ev->names[ev->n++] = arg;
	return 0;
}

int record_events_resolve(struct record_events *ev)
{
	char why[512];
	size_t i;
	int err;

	for (i = 0; i < ev->n; i++) {
		err = ms_record_event_resolve(ev->names[i], &ev->attrs[i], why, sizeof(why));
		if (err == -EINVAL)
			return cli_usage_error("record", "invalid event '%s': %s", ev->names[i], why);
		if (err == -ENODEV) {
			cli_error("cannot record event '%s': %s; hardware memory samples need a PMU that "
				  "samples data addresses (PEBS, IBS, SPE): without one, use --referenced for "
				  "ongoing access", ev->names[i], why);
			return EXIT_RUNTIME;
		}
		if (err) {
			cli_error("cannot record event '%s': %s", ev->names[i], why);
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

void record_events_options(const struct record_events *ev, struct ms_record_opts *ro)
{
	ro->hw_events = ev->attrs;
	ro->hw_names = ev->names;
	ro->nr_hw_events = ev->n;
}

void record_events_hint(const struct record_events *ev, int err)
{
	if (!ev->n || (err != ENOENT && err != EOPNOTSUPP && err != ENODEV && err != EINVAL))
		return;
	cli_hint("the PMU would not take the hardware event%s given with -e (no such event on this CPU, or "
		 "no precise sampling of data addresses: PEBS, IBS or SPE); without them, use --referenced "
		 "for ongoing access", ev->n > 1 ? "s" : "");
}
