/*
 * A kdamond of our own through DAMON's sysfs interface (kernel/damon.h
 * says why it is made only where none exists, and how a watchdog tears it
 * down on every exit path). Every path is relative to a root that the
 * tests point at a fake tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/damon.h"
#include "kernel/tracefs.h"
#include "kernel/watchdog.h"
#include "util/log.h"

#define KDAMOND "kdamonds/0"
#define CONTEXT KDAMOND "/contexts/0"

struct ms_damon {
	char *root;
	pid_t kdamond;
	struct ms_watchdog wd;       /* tears down when its pipe closes */
};

const char *ms_damon_root(void)
{
	const char *env = getenv("MAPSCOPE_DAMON_SYSFS");

	return env && *env ? env : MS_DAMON_SYSFS;
}

void ms_damon_opts_fill(struct ms_damon_opts *o)
{
	if (!o->sample_us)
		o->sample_us = 5000;
	if (!o->aggr_us)
		o->aggr_us = 100000;
	if (!o->update_us)
		o->update_us = 1000000;
	if (!o->min_regions)
		o->min_regions = 10;
	if (!o->max_regions)
		o->max_regions = 1000;
}

/* Writes text to root/rel, an attribute file that must exist. 0 or a negative errno. */
static int put(const char *root, const char *rel, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return ms_kernel_write(path, text, O_TRUNC);
}

static int put_u64(const char *root, const char *rel, uint64_t v)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64 "\n", v);
	return put(root, rel, text);
}

/* root/rel's first line, without its newline, into out. 0 or a negative errno. */
static int get(const char *root, const char *rel, char *out, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return ms_kernel_read_line(path, out, len);
}

int ms_damon_available(const char *root)
{
	char text[32];
	int err = get(root, "kdamonds/nr_kdamonds", text, sizeof(text));

	if (err)
		return err;
	return strcmp(text, "0") ? -EBUSY : 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Off, then gone. Turning off fails where the kdamond already stopped (its
 * targets all exited), which is as good; nr_kdamonds 0 fails with EBUSY
 * while it is still stopping, so that is retried for up to 2 seconds.
 */
int ms_damon_teardown(const char *root)
{
	char state[16];
	int err, i;

	if (!get(root, KDAMOND "/state", state, sizeof(state)) && strcmp(state, "off"))
		put(root, KDAMOND "/state", "off\n");
	for (i = 0; i < 100; i++) {
		err = put(root, "kdamonds/nr_kdamonds", "0\n");
		if (err != -EBUSY)
			return err;
		sleep_ms(20);
	}
	return err;
}

/* The watchdog's teardown: arg is the root. */
static int teardown_root(void *arg)
{
	return ms_damon_teardown(arg);
}

/* The context: vaddr operations, the intervals, the region counts, the targets in pids' order. */
static int configure(const char *root, const struct ms_damon_opts *o, const pid_t *pids, size_t n)
{
	char rel[128];
	size_t i;
	int err;

	if ((err = put(root, KDAMOND "/contexts/nr_contexts", "1\n")) ||
	    (err = put(root, CONTEXT "/operations", "vaddr\n")) ||
	    (err = put_u64(root, CONTEXT "/monitoring_attrs/intervals/sample_us", o->sample_us)) ||
	    (err = put_u64(root, CONTEXT "/monitoring_attrs/intervals/aggr_us", o->aggr_us)) ||
	    (err = put_u64(root, CONTEXT "/monitoring_attrs/intervals/update_us", o->update_us)) ||
	    (err = put_u64(root, CONTEXT "/monitoring_attrs/nr_regions/max", o->max_regions)) ||
	    (err = put_u64(root, CONTEXT "/monitoring_attrs/nr_regions/min", o->min_regions)) ||
	    (err = put_u64(root, CONTEXT "/targets/nr_targets", n)))
		return err;
	for (i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), CONTEXT "/targets/%zu/pid_target", i);
		if ((err = put_u64(root, rel, (uint64_t)pids[i])))
			return err;
	}
	return 0;
}

/* On, and the kdamond's thread. 0 or a negative errno. */
static int turn_on(struct ms_damon *d)
{
	char text[32];
	char *end;
	long pid;
	int err;

	if ((err = put(d->root, KDAMOND "/state", "on\n")))
		return err;
	if ((err = get(d->root, KDAMOND "/pid", text, sizeof(text))))
		return err;
	pid = strtol(text, &end, 10);
	if (end == text || *end || pid <= 0)
		return -ESRCH;
	d->kdamond = (pid_t)pid;
	return 0;
}

/* Creates kdamond 0 where none exists: EBUSY where one does, or appears meanwhile. */
static int create(const char *root)
{
	int err = ms_damon_available(root);

	if (err == -EBUSY)
		ms_err("DAMON is in use by a kdamond that mapscope did not start ('%s/kdamonds/nr_kdamonds' "
		       "is not 0), and is left as it is", root);
	else if (err)
		ms_err("cannot read '%s/kdamonds/nr_kdamonds': %s", root, strerror(-err));
	if (!err && (err = put(root, "kdamonds/nr_kdamonds", "1\n")))
		ms_err("cannot create a kdamond in '%s': %s", root, strerror(-err));
	return err;
}

struct ms_damon *ms_damon_start(const char *root, const struct ms_damon_opts *opts, const pid_t *pids, size_t n)
{
	struct ms_damon_opts o = *opts;
	struct ms_damon *d;
	int err;

	ms_damon_opts_fill(&o);
	d = calloc(1, sizeof(*d));
	if (!d || !(d->root = strdup(root))) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->wd.pipe_w = -1;
	if ((err = create(root))) {
		free(d->root);
		free(d);
		errno = -err;
		return NULL;
	}
	/* From here on, what was created goes with the watchdog, whatever happens to us. */
	if ((err = ms_watchdog_start(&d->wd, teardown_root, d->root))) {
		ms_err("cannot start the process that removes our kdamond: %s", strerror(-err));
		ms_damon_teardown(root);
	} else if ((err = configure(root, &o, pids, n)) || (err = turn_on(d))) {
		ms_err("cannot start DAMON monitoring through '%s': %s", root, strerror(-err));
	}
	if (err) {
		ms_damon_stop(d);
		errno = -err;
		return NULL;
	}
	return d;
}

const struct perf_event_header *ms_damon_sample_as_target(const struct perf_event_header *h, const pid_t *pids,
							  size_t n, void *out, size_t outlen)
{
	struct ms_damon_sample *ds = out;
	uint64_t target;

	if (h->size < MS_DAMON_SAMPLE_MIN || h->size > outlen)
		return h;
	memcpy(&target, (const unsigned char *)h + MS_DAMON_SAMPLE_TARGET, 8);
	if (target >= n)
		return h;
	memcpy(out, h, h->size);
	ds->pid = ds->tid = (uint32_t)pids[target];
	return out;
}

pid_t ms_damon_kdamond(const struct ms_damon *d)
{
	return d->kdamond;
}

pid_t ms_damon_watchdog(const struct ms_damon *d)
{
	return d->wd.pid;
}

int ms_damon_stop(struct ms_damon *d)
{
	int err = 0;

	if (!d)
		return 0;
	if (ms_watchdog_stop(&d->wd)) {
		ms_err("our kdamond in '%s' may be left: turn it off with 'echo off > %s/" KDAMOND
		       "/state; echo 0 > %s/kdamonds/nr_kdamonds'", d->root, d->root, d->root);
		err = -EIO;
	}
	free(d->root);
	free(d);
	return err;
}
