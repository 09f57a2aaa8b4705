/* The command table; each subcommand lives in src/cmd-<name>.c. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "ms_version.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool reads; /* reads a recording: its heap goes on hugepages */
} commands[] = {
	{ "record", cmd_record, "record address-space changes and page faults into perf.data", false },
	{ "report", cmd_report, "samples per region: where the data accesses landed; also pprof, or one HTML page", true },
	{ "maps", cmd_maps, "a process's mappings at an instant, as /proc/PID/maps showed them", true },
	{ "timeline", cmd_timeline, "every address-space change in time order", true },
	{ "index", cmd_index, "index a recording, so that maps --at and timeline answer at once", true },
	{ "watch", cmd_watch, "print address-space changes live, as they happen", false },
	{ "hugepages", cmd_hugepages, "which regions belong on hugepages, and applying it", true },
	{ "unmapped", cmd_unmapped, "accesses to memory that was not mapped, and the code that made them", true },
	{ "heatmap", cmd_heatmap, "where in each region, and when, the accesses landed: a terminal grid or SVG", true },
	{ "run", cmd_run, "run a command with hugepage advice from an earlier recording applied", false },
	{ "doctor", cmd_doctor, "what this user can record here, and the fix for each missing piece", false },
	{ "setup", cmd_setup, "as root, once: let a group record and watch its own processes", false },
};

static const struct command *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *out)
{
	size_t i;

	fputs("usage: mapscope [--version] [--help] COMMAND [ARGS...]\n"
	      "\n"
	      "mapscope follows every change to a process's address space (mmap, munmap,\n"
	      "mremap, mprotect, brk, stack growth, madvise, shmat/shmdt, fork, exec, exit)\n"
	      "together with its page faults, and writes them as perf.data, so that each\n"
	      "sampled address can be charged to the mapping that held it at that instant.\n"
	      "\n"
	      "Commands:\n", out);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "'mapscope help COMMAND' or 'mapscope COMMAND --help' describes a command;\n"
	      "'man mapscope-COMMAND' gives the same in full.\n"
	      "\n"
	      "EXAMPLES\n"
	      "  mapscope record -- ./myprog arg    record ./myprog into mapscope.data\n"
	      "  mapscope record -p 1234            attach to process 1234 until Ctrl-C\n"
	      "  mapscope report                    samples per region, with the code\n"
	      "  mapscope report --format html -o report.html   all of it on one page\n"
	      "  mapscope maps --pid 1234 --at +1.5 its maps 1.5 s into the recording\n"
	      "  mapscope watch -- ./myprog         changes live\n"
	      "  perf script -i mapscope.data       read the recording with perf\n", out);
}

/*
 * A command's exit status, where what it printed reached stdout: a write
 * that failed (a full disk, /dev/full) makes the run fail, whatever the
 * command returned, so that a script never trusts a cut output.
 */
static int stdout_written(int rc)
{
	if (!fflush(stdout) && !ferror(stdout))
		return rc;
	cli_error("cannot write the output to stdout: %s", strerror(errno ? errno : EIO));
	return rc ? rc : EXIT_RUNTIME;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	char *help_argv[] = { NULL, "--help", NULL };

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("mapscope %s\n", MS_VERSION_STRING);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		cmd = find(argv[2]);
		if (!cmd)
			return cli_usage_error(NULL, "'%s' is not a mapscope command", argv[2]);
		help_argv[0] = argv[2];
		return cmd->fn(2, help_argv);
	}
	cmd = find(argv[1]);
	if (!cmd)
		return cli_usage_error(NULL, "'%s' is not a mapscope command", argv[1]);
	if (cmd->reads) {
		cli_heap_for_reading();
		cli_exit_frees = true;
	}
	return stdout_written(cmd->fn(argc - 1, argv + 1));
}
