/*
 * mapscope doctor: what this user can record here and why, each missing
 * piece with its fix, one line each; the exit status says whether record
 * will work.
 */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "parse-options.h"
#include "kernel/doctor.h"

static const struct cli_usage usage = {
	.cmd = "doctor",
	.column = 20,
	.head =
"usage: mapscope doctor\n"
"\n"
"Says what this user can record here, and why: privileges (root,\n"
"CAP_PERFMON, kernel.perf_event_paranoid), tracefs, the syscall and\n"
"page-fault events (each opened and closed on itself), ptrace scope,\n"
"the hardware PMU, DAMON, userfaultfd and uprobes (record --prefetches).\n"
"Each line is 'ok', 'less'\n"
"(works, with less than root gets), 'no' (missing, with its fix) or\n"
"'info'. The last line names the mode record and watch will run in:\n"
"  full  every event: the syscalls, the VMA tree, every page fault\n"
"  user  an ordinary user's own processes, excluding the kernel: page\n"
"        faults taken in kernel mode and the VMA tree's writes are lost\n"
"  perf  no tracefs: maps and faults only, as perf record -d, no unmaps\n"
"  none  nothing can be recorded\n"
"\n",
	.tail =
"\n"
"EXIT STATUS\n"
"  0 record will work (full or user mode), 1 it will not or only as perf\n"
"  does (no unmaps), 2 bad usage.\n"
"\n"
"EXAMPLES\n"
"  mapscope doctor\n"
"  sudo mapscope setup --group perf_users && mapscope doctor\n",
};

static const char *state_word(enum ms_check_state s)
{
	static const char *const words[] = { "ok", "less", "no", "info" };

	return words[s];
}

int cmd_doctor(int argc, char **argv)
{
	const struct cli_option options[] = { OPT_END() };
	struct ms_doctor d;
	size_t i;
	int n;

	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return (n = parse_options_failed(n)) < 0 ? 0 : n;
	if (n < argc)
		return cli_usage_error("doctor", "unexpected argument '%s'", argv[n]);
	ms_doctor_probe(&d);
	printf("mapscope doctor: uid %d on this machine\n", (int)geteuid());
	for (i = 0; i < d.n; i++) {
		printf("  %-5s %-15s %s\n", state_word(d.checks[i].state), d.checks[i].what, d.checks[i].detail);
		if (d.checks[i].fix[0])
			printf("        %-15s fix: %s\n", "", d.checks[i].fix);
	}
	printf("record and watch: %s mode; lost: %s\n", ms_record_mode_name(d.mode), ms_record_mode_loses(d.mode));
	return d.mode == MS_MODE_FULL || d.mode == MS_MODE_USER ? 0 : EXIT_RUNTIME;
}
