/*
 * mapscope setup: run once as root, so that an ordinary user can record and
 * watch its own processes. It remounts tracefs with its files in a group and
 * its top folder readable by that group (the tracepoints' ids and formats are
 * all such a user lacks at kernel.perf_event_paranoid=2), says exactly what
 * it changed, and keeps what was there in a state file that --undo restores.
 * Like the mount itself, it lasts until the next boot.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "parse-options.h"
#include "kernel/tracefs.h"

#define STATE_DIR "/run/mapscope"
#define STATE_FILE STATE_DIR "/setup"

static const struct cli_usage usage = {
	.cmd = "setup",
	.column = 22,
	.head =
"usage: mapscope setup [--group NAME]\n"
"       mapscope setup --undo\n"
"\n"
"Run once as root, so that the members of a group can record and watch\n"
"their own processes (user mode: see mapscope doctor). It remounts tracefs\n"
"with its files in group NAME and its top folder mode 0750, so that the\n"
"group can read the tracepoints' ids and formats, prints exactly what it\n"
"changed, and saves what was there in " STATE_FILE ", which --undo\n"
"restores. Like the mount, it lasts until the next boot. It changes nothing\n"
"else: not kernel.perf_event_paranoid (2 is enough for user mode), nor any\n"
"file's capabilities.\n"
"\n",
	.tail =
"\n"
"For every event (the kernel's side too) a user needs CAP_PERFMON: as root,\n"
"'setcap cap_perfmon+ep' on the mapscope binary, which only that group\n"
"should be able to run (perf-security's perf_users convention).\n"
"\n"
"EXIT STATUS\n"
"  0 done (or nothing to undo), 1 it failed (not root, no such group, the\n"
"  remount refused), 2 bad usage.\n"
"\n"
"EXAMPLES\n"
"  groupadd perf_users && usermod -aG perf_users alice\n"
"  mapscope setup --group perf_users\n"
"  mapscope setup --undo\n",
};

static const char *group_name(unsigned int gid, char *buf, size_t len)
{
	struct group *g = getgrgid(gid);

	if (g)
		snprintf(buf, len, "%s", g->gr_name);
	else
		snprintf(buf, len, "%u", gid);
	return buf;
}

/* Remounts dir with gid and mode, and says what changed from st. 0 or EXIT_RUNTIME after the message. */
static int remount(const char *dir, const struct stat *st, unsigned int gid, unsigned int mode, const char *why)
{
	char from[64], to[64];
	int err = ms_tracefs_remount(dir, gid, mode);

	if (err) {
		cli_error("cannot remount tracefs at '%s' with gid=%u,mode=%04o: %s", dir, gid, mode, strerror(-err));
		return EXIT_RUNTIME;
	}
	printf("mapscope setup: tracefs at %s: group %s -> %s, mode %04o -> %04o (%s)\n", dir,
	       group_name(st->st_gid, from, sizeof(from)), group_name(gid, to, sizeof(to)),
	       (unsigned int)(st->st_mode & 07777), mode, why);
	return 0;
}

static int undo(const char *dir, const struct stat *st)
{
	unsigned int gid, mode;
	char saved[4096];
	FILE *f = fopen(STATE_FILE, "re");
	int ok, ret;

	if (!f && errno == ENOENT) {
		printf("mapscope setup: nothing to undo: no %s (setup has not run since boot)\n", STATE_FILE);
		return 0;
	}
	ok = f && fscanf(f, "tracefs %4095s gid %u mode %o", saved, &gid, &mode) == 3;
	if (f)
		fclose(f);
	if (!ok) {
		cli_error("cannot read '%s': %s", STATE_FILE, f ? "not what setup writes" : strerror(errno));
		cli_hint("remount tracefs as it was by hand: mount -o remount,gid=0,mode=0700 %s", dir);
		return EXIT_RUNTIME;
	}
	if (strcmp(saved, dir))
		fprintf(stderr, "mapscope: tracefs was set up at '%s'; it is now at '%s': restoring it there\n", saved,
			dir);
	if ((ret = remount(dir, st, gid, mode, "restored")))
		return ret;
	if (unlink(STATE_FILE))
		fprintf(stderr, "mapscope: warning: cannot remove '%s': %s\n", STATE_FILE, strerror(errno));
	return 0;
}

static int setup(const char *dir, const struct stat *st, const char *name)
{
	struct group *g = getgrnam(name);
	FILE *f;
	int ret;

	if (!g) {
		cli_error("no group '%s' on this machine", name);
		cli_hint("create it and add the users who may record: groupadd %s && usermod -aG %s USER", name, name);
		return EXIT_RUNTIME;
	}
	/* A second setup keeps the state the first one saved: --undo restores the machine's own. */
	if (access(STATE_FILE, F_OK)) {
		if ((mkdir(STATE_DIR, 0755) && errno != EEXIST) || !(f = fopen(STATE_FILE, "wxe"))) {
			cli_error("cannot save the present state in '%s': %s", STATE_FILE, strerror(errno));
			return EXIT_RUNTIME;
		}
		fprintf(f, "tracefs %s gid %u mode %04o\n", dir, (unsigned int)st->st_gid,
			(unsigned int)(st->st_mode & 07777));
		if (fclose(f)) {
			cli_error("cannot save the present state in '%s': %s", STATE_FILE, strerror(errno));
			unlink(STATE_FILE);
			return EXIT_RUNTIME;
		}
	}
	if ((ret = remount(dir, st, (unsigned int)g->gr_gid, 0750, "saved in " STATE_FILE
			   "; 'mapscope setup --undo' restores it")))
		return ret;
	printf("mapscope setup: members of %s may now record and watch their own processes in user mode "
	       "(a user who just joined %s must log in again); 'mapscope doctor' shows it\n", name, name);
	return 0;
}

int cmd_setup(int argc, char **argv)
{
	const char *group = "perf_users";
	bool undo_it = false;
	const struct cli_option options[] = {
		OPT_STRING(0, "group", &group, "NAME", "the group whose members may record (default perf_users)"),
		OPT_BOOL(0, "undo", &undo_it, "restore tracefs as it was before setup"),
		OPT_END(),
	};
	const char *dir;
	struct stat st;
	int n;

	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return (n = parse_options_failed(n)) < 0 ? 0 : n;
	if (n < argc)
		return cli_usage_error("setup", "unexpected argument '%s'", argv[n]);
	if (geteuid() != 0) {
		cli_error("setup changes how tracefs is mounted: run it as root");
		cli_hint("sudo mapscope setup%s%s", undo_it ? " --undo" : " --group ", undo_it ? "" : group);
		return EXIT_RUNTIME;
	}
	if (!(dir = ms_tracefs_dir()) || stat(dir, &st)) {
		cli_error("cannot find tracefs: %s", strerror(errno));
		cli_hint("mount it: mount -t tracefs nodev /sys/kernel/tracing");
		return EXIT_RUNTIME;
	}
	return undo_it ? undo(dir, &st) : setup(dir, &st, group);
}
