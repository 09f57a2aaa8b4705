/*
 * record --prefetches in the CLI: which binaries to scan, and what to say
 * about them. The library (ms_record_new) scans them, places the uprobes
 * and removes them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mapscope/record.h>

#include "cli.h"
#include "kernel/tracefs.h"
#include "launch.h"
#include "parse-options.h"
#include "record-prefetch.h"

static int add_path(struct record_prefetch *p, const char *path)
{
	char full[PATH_MAX];

	if (p->nr_paths >= RECORD_PREFETCH_MAX_BINS)
		return cli_usage_error("record", "too many binaries for --prefetches: at most %d",
				       RECORD_PREFETCH_MAX_BINS);
	if (!realpath(path, full)) {
		cli_error("cannot scan '%s' for prefetches: %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (!(p->paths[p->nr_paths] = strdup(full)))
		return EXIT_RUNTIME;
	p->nr_paths++;
	return 0;
}

/* window=T/P: armed for T ms of every P ms, 1 <= T < P <= 60000. */
static int window_item(struct record_prefetch *p, char *arg)
{
	char *slash = strchr(arg, '/');

	if (slash)
		*slash = '\0';
	if (!slash || cli_parse_u64(arg, 1, 60000, &p->window_ms) ||
	    cli_parse_u64(slash + 1, 2, 60000, &p->every_ms) || p->window_ms >= p->every_ms)
		return cli_usage_error("record", "invalid window for --prefetches: expected window=T/P, T and P "
				       "in ms, 1 <= T < P <= 60000 (e.g. window=10/100)");
	return 0;
}

static int spec_item(struct record_prefetch *p, char *item)
{
	if (!strncmp(item, "func=", 5) && item[5]) {
		p->func = strdup(item + 5);
		return p->func ? 0 : EXIT_RUNTIME;
	}
	if (!strncmp(item, "hot=", 4)) {
		if (cli_parse_u64(item + 4, 1, 100000, &p->hot))
			return cli_usage_error("record", "invalid site count '%s' for --prefetches: expected hot=N, "
					       "N from 1 to 100000", item + 4);
		return 0;
	}
	if (!strncmp(item, "window=", 7))
		return window_item(p, item + 7);
	if (!strncmp(item, "max=", 4)) {
		if (cli_parse_u64(item + 4, 1, 100000, &p->max))
			return cli_usage_error("record", "invalid site count '%s' for --prefetches: expected max=N, "
					       "N from 1 to 100000", item + 4);
		return 0;
	}
	if (strchr(item, '/')) {
		p->named = true;
		return add_path(p, item);
	}
	return cli_usage_error("record", "invalid --prefetches item '%s': expected a binary's path (with a '/'), "
			       "func=NAME, max=N, hot=N or window=T/P, comma-separated", item);
}

int record_prefetch_opt(const struct cli_option *opt, const char *arg)
{
	struct record_prefetch *p = opt->value;
	char *copy, *item, *save = NULL;
	int err = 0;

	p->on = true;
	if (!arg)
		return 0;
	if (!(copy = strdup(arg)))
		return EXIT_RUNTIME;
	for (item = strtok_r(copy, ",", &save); item && !err; item = strtok_r(NULL, ",", &save))
		err = spec_item(p, item);
	free(copy);
	return err;
}

int record_prefetch_resolve(struct record_prefetch *p, const char *cmd, const pid_t *pids, int nr_pids)
{
	char full[PATH_MAX];
	int i, err = 0;

	if (!p->on || p->nr_paths)
		return 0;
	if (cmd) {
		if (launch_resolve_command(cmd, full, sizeof(full)))
			return 0;                /* check_targets says why */
		return add_path(p, full);
	}
	for (i = 0; i < nr_pids && !err; i++) {
		snprintf(full, sizeof(full), "/proc/%d/exe", (int)pids[i]);
		err = add_path(p, full);
	}
	return err;
}

void record_prefetch_options(const struct record_prefetch *p, struct ms_record_opts *ro)
{
	ro->prefetch_paths = (const char *const *)p->paths;
	ro->nr_prefetch_paths = (size_t)p->nr_paths;
	ro->prefetch_func = p->func;
	ro->prefetch_max = (uint32_t)p->max;
	ro->prefetch_follow = p->on && !p->named;
	ro->prefetch_hot = (uint32_t)p->hot;
	ro->prefetch_window_ms = (uint32_t)p->window_ms;
	ro->prefetch_every_ms = (uint32_t)p->every_ms;
}

void record_prefetch_check(struct record_prefetch *p)
{
	const char *dir;
	char path[512];
	int i;

	if (!p->on || !p->nr_paths)
		return;
	dir = ms_tracefs_dir();
	snprintf(path, sizeof(path), "%s/uprobe_events", dir ? dir : "/sys/kernel/tracing");
	if (!access(path, W_OK))
		return;
	cli_error("not recording prefetches: cannot write '%s': %s; %s", path, strerror(errno),
		  errno == ENOENT ? "the kernel needs CONFIG_UPROBE_EVENTS" :
		  "placing uprobes needs root (or CAP_SYS_ADMIN with tracefs writable for this user; "
		  "'mapscope doctor' says what this user may record)");
	for (i = 0; i < p->nr_paths; i++)
		free(p->paths[i]);
	p->nr_paths = 0;
	p->on = false;
}

bool record_prefetch_explain(const struct record_prefetch *p, int err)
{
	if (!p->on || (err != EACCES && err != EPERM && err != ENOENT))
		return false;
	if (err == ENOENT)
		cli_hint("--prefetches needs uprobe_events in tracefs (a kernel with CONFIG_UPROBE_EVENTS)");
	else
		cli_hint("--prefetches places uprobes through tracefs's uprobe_events, which only root (or "
			 "CAP_SYS_ADMIN with tracefs writable) may write: run as root, or record without it");
	return true;
}

void record_prefetch_report(const struct record_prefetch *p, const struct ms_record *rec, int verbose)
{
	size_t found, probed, unsupported;
	int i, err;

	for (i = 0; p->on && i < p->nr_paths; i++) {
		err = ms_record_prefetch_sites(rec, (size_t)i, &found, &probed, &unsupported);
		if (err)
			continue;                /* ms_record_new() failed and said why */
		if (!found)
			fprintf(stderr, "mapscope: no prefetch instruction%s in '%s'%s: --prefetches records "
				"nothing extra for it\n", p->func ? " in that function" : "", p->paths[i],
				unsupported ? " that a uprobe can fetch" : "");
		else if (verbose || (probed < found && !p->hot))
			fprintf(stderr, "mapscope: %zu prefetch instruction%s in '%s', %zu with a uprobe%s\n", found,
				found == 1 ? "" : "s", p->paths[i], probed, p->hot ? " (hot=: the hottest get theirs "
				"after a counting phase)" : probed < found ? " (max=)" : "");
	}
}

void record_prefetch_release(struct record_prefetch *p)
{
	int i;

	for (i = 0; i < p->nr_paths; i++)
		free(p->paths[i]);
	free((char *)p->func);
	p->nr_paths = 0;
}
