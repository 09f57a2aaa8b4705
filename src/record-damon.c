/*
 * record --damon in the CLI: the options, and the fallback where DAMON
 * cannot be ours. The library (ms_record_damon_*) makes, records and
 * removes the kdamond; this file decides what to say.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mapscope/record.h>

#include "cli.h"
#include "parse-options.h"
#include "record-damon.h"

/* "a,b[,c]" into v[0, n): each in [lo, hi]; all n needed. 0 or -EINVAL. */
static int parse_list(const char *arg, uint64_t *v, int n, uint64_t lo, uint64_t hi)
{
	char buf[96], *p, *save = NULL;
	int i = 0;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (i >= n || cli_parse_u64(p, lo, hi, &v[i++]))
			return -EINVAL;
	return i == n ? 0 : -EINVAL;
}

int record_damon_opt_intervals(const struct cli_option *opt, const char *arg)
{
	struct record_damon *d = opt->value;
	uint64_t v[3];

	if (parse_list(arg, v, 3, 1, 3600000000ULL) || v[1] < v[0])
		return cli_usage_error("record", "invalid DAMON intervals '%s': expected SAMPLE,AGGR,UPDATE in "
				       "microseconds, AGGR at least SAMPLE, such as 5000,100000,1000000", arg);
	d->sample_us = v[0], d->aggr_us = v[1], d->update_us = v[2];
	return 0;
}

int record_damon_opt_regions(const struct cli_option *opt, const char *arg)
{
	struct record_damon *d = opt->value;
	uint64_t v[2];

	if (parse_list(arg, v, 2, 3, 1000000) || v[1] < v[0])
		return cli_usage_error("record", "invalid DAMON region counts '%s': expected MIN,MAX, "
				       "at least 3 and MIN at most MAX, such as 10,1000", arg);
	d->min_regions = v[0], d->max_regions = v[1];
	return 0;
}

void record_damon_fallback(struct record_damon *d, int err, bool referenced)
{
	const char *instead = referenced ? "recording ongoing access with --referenced instead (accessed bits "
					   "per VMA, every interval)" :
					   "recording without DAMON's access figures (use --referenced for ongoing access)";

	d->usable = false;
	if (err == -EBUSY)
		cli_error("not using DAMON: a kdamond that mapscope did not start exists (kdamonds/nr_kdamonds "
			  "under /sys/kernel/mm/damon/admin is not 0), and mapscope never stops or changes one; %s",
			  instead);
	else if (err == -ENOENT)
		cli_error("not using DAMON: the kernel has no DAMON sysfs interface or no damon tracepoints "
			  "(CONFIG_DAMON_SYSFS, CONFIG_DAMON_VADDR); %s", instead);
	else
		cli_error("not using DAMON: %s%s; %s", strerror(-err),
			  err == -EACCES || err == -EPERM ? " (DAMON's sysfs interface needs root)" : "", instead);
}

void record_damon_check(struct record_damon *d, uint64_t *referenced_ms)
{
	int err;

	d->usable = false;
	if (!d->on)
		return;
	err = ms_record_damon_available();
	if (!err) {
		d->usable = true;
		return;
	}
	/* The accessed bits work wherever DAMON does not: they take its place. */
	if (!*referenced_ms)
		*referenced_ms = MS_RECORD_REFERENCED_MS;
	record_damon_fallback(d, err, true);
}

void record_damon_options(const struct record_damon *d, struct ms_record_opts *ro)
{
	ro->damon = d->usable;
	ro->damon_sample_us = d->sample_us;
	ro->damon_aggr_us = d->aggr_us;
	ro->damon_update_us = d->update_us;
	ro->damon_min_regions = (uint32_t)d->min_regions;
	ro->damon_max_regions = (uint32_t)d->max_regions;
}

void record_damon_start(struct record_damon *d, struct ms_record *rec, const pid_t *pids, size_t n)
{
	int err;

	if (!d->usable)
		return;
	err = ms_record_damon_start(rec, pids, n);
	if (err)
		record_damon_fallback(d, err, false);
}
