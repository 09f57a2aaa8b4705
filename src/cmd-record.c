/*
 * mapscope record: the live source plus the perf.data writer.
 *
 * Order matters for a clean failure: everything that can fail for bad input
 * or missing privileges (options, the command's path, the events) is tried
 * before the output file is touched and before the command runs; the
 * command waits on a pipe until the events are armed for its exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mapscope/live.h>
#include <mapscope/record.h>

#include "cli.h"
#include "commands.h"
#include "launch.h"
#include "parse-options.h"
#include "record-damon.h"
#include "record-events.h"
#include "record-prefetch.h"
#include "util/clock.h"


static const struct cli_usage usage = {
	.cmd = "record",
	.column = 24,
	.head =
"usage: mapscope record [-o FILE] [-c PERIOD] [-m PAGES] [-z LEVEL | --no-compress]\n"
"                       [--no-samples] [--no-vma-tree]\n"
"                       [--call-graph fp|dwarf] [--no-alloc-stacks] [--referenced[=MS]]\n"
"                       [-e EVENT]...\n"
"                       [--damon [--damon-intervals S,A,U] [--damon-regions MIN,MAX]]\n"
"                       [--prefetches[=SPEC]]\n"
"                       (-p PID[,PID...] | -- CMD [ARGS...])\n"
"\n"
"Records every change to the address space of CMD (with its threads and\n"
"children) or of running processes, and their page faults, into perf.data.\n"
"\n",
	.tail =
"\n"
"What is recorded: MMAP2 (every mapping, code and data), COMM, FORK and\n"
"EXIT records; syscalls:sys_enter_*/sys_exit_* tracepoints for mmap, munmap,\n"
"mremap, mprotect, brk, madvise, shmat, shmdt, mlock, mlock2, munlock,\n"
"mlockall, munlockall, mseal, mbind and set_mempolicy_home_node (the last\n"
"eight where the kernel has them);\n"
"page-fault samples with the data address. The entries of mmap, mremap,\n"
"brk and shmat carry the user registers and 4 KiB of user stack, unwound\n"
"by report to name the code that made each region. Times are\n"
"CLOCK_MONOTONIC nanoseconds. With --damon, damon:damon_aggregated samples of a kdamond of\n"
"ours, removed at the end however record ends; none is made where another\n"
"kdamond exists (that one is never touched): record then goes on without.\n"
"\n"
"Ctrl-C, SIGTERM or the command dying by a signal still leave a complete\n"
"file. So do SIGKILL of mapscope, a full disk and the file size limit\n"
"(ulimit -f), up to the last flush (a quarter of a second at most): the file\n"
"is a whole perf.data at every flush.\n"
"A summary line goes to stderr at the end: samples (with a data address, and\n"
"the others: syscalls, the VMA tree, stack pointers), records lost, and the\n"
"bytes in the file. On a terminal, a line of the counts so far is shown\n"
"once a second until then.\n"
"\n"
"The data is zstd-compressed as perf record -z writes it (zstd level 1:\n"
"a browser's page load takes 11 times fewer bytes); perf script, perf\n"
"report and every mapscope command read it as they read a plain file.\n"
"--no-compress writes the records as they are, for tools that read\n"
"perf.data without zstd (Debian 12's hotspot) and for perf inject --jit\n"
"(perf 6.1 passes compressed records through unread). A pipe (-o -)\n"
"carries them as they are unless -z is given.\n"
"\n"
"EXIT STATUS\n"
"  0 the recording is complete (the command's own status is in the summary),\n"
"  1 recording failed, 2 bad usage.\n"
"\n"
"--prefetches places a uprobe at each data prefetch instruction of the\n"
"program's binaries, scanned as they are mapped (its libraries, and those\n"
"it dlopens later; JIT code is out of reach). SPEC: binaries by path (only\n"
"those), func=NAME, max=N, hot=N (the N sites whose functions the IP samples\n"
"of the first 250 ms found hottest), window=T/P (record T ms of every P ms).\n"
"Every hit traps into the kernel, about 25 us of CPU and up to 90 us of wall\n"
"time here (bench/prefetch-cost), so a loop that prefetches a million times\n"
"runs 25 to 90 s longer: hot=, func= and max= bound the traps; window=\n"
"bounds what is recorded, not the traps (a placed uprobe stays armed). The\n"
"uprobes are removed however record ends.\n"
"\n"
"--referenced clears the accessed bits that the kernel's reclaim reads, and\n"
"reading and clearing them costs in proportion to the resident memory (20 to\n"
"50 ms each per GiB here): see ACCESSED BITS in mapscope-record(1).\n"
"\n"
"Root records everything. An ordinary user records its own processes in\n"
"user mode (page faults taken in kernel mode and the VMA tree's writes are\n"
"not seen) once tracefs is readable for it: 'mapscope setup' as root does\n"
"that, and 'mapscope doctor' says what this user may do here.\n"
"\n"
"EXAMPLES\n"
"  mapscope record -- ./myprog --size 1G\n"
"  mapscope record -o run.data --call-graph fp -- make -j2\n"
"  mapscope record --referenced=200 -p 1234   (accessed bits, every 200 ms)\n"
"  mapscope record -p 1234,1240        (stop with Ctrl-C)\n"
"  mapscope record -e mem-loads -e mem-stores -- ./myprog\n"
"  mapscope record --damon -- ./myprog\n"
"  mapscope record --prefetches=func=walk -- ./myprog\n"
"  mapscope record --prefetches=hot=4,window=20/200 -- ./myprog\n"
"  mapscope record -o - -- ./myprog | perf script -i -\n"
"  mapscope record --no-compress -o plain.data -- ./myprog   (for hotspot)\n"
"  perf script -i mapscope.data --show-mmap-events --show-task-events\n",
};

struct record_opts {
	const char *output;
	uint64_t period;
	bool period_set;             /* -c given */
	uint64_t pages;
	bool pages_set;              /* -m given */
	bool no_samples;
	bool no_vma_tree;
	bool no_alloc_stacks;
	uint64_t zlevel;             /* -z: zstd level; 0: not given */
	bool no_compress;
	bool callchain;
	bool dwarf;
	uint64_t referenced_ms;      /* --referenced: its interval; 0: not given */
	int verbose;
	pid_t pids[MAX_PIDS];
	int nr_pids;
	char **cmd;
	bool pipe;
	struct record_damon damon;
	struct record_events events;
	struct record_prefetch prefetch;
};

static int opt_pages(const struct cli_option *opt, const char *arg)
{
	struct record_opts *o = opt->value;

	o->pages_set = true;
	if (cli_parse_u64(arg, 1, 1u << 20, &o->pages) || (o->pages & (o->pages - 1)))
		return cli_usage_error("record", "invalid ring buffer size '%s': expected "
				       "a power of two number of pages, such as 1024", arg);
	return 0;
}

/* fp and dwarf add up, as they did: the last one does not replace the first. */
static int opt_call_graph(const struct cli_option *opt, const char *arg)
{
	struct record_opts *o = opt->value;

	if (!strcmp(arg, "fp"))
		o->callchain = true;
	else if (!strcmp(arg, "dwarf"))
		o->dwarf = true;
	else
		return cli_usage_error("record", "unsupported call-graph mode '%s': "
				       "use fp (frame pointers) or dwarf (copied stacks)", arg);
	return 0;
}

static int opt_referenced(const struct cli_option *opt, const char *arg)
{
	struct record_opts *o = opt->value;

	o->referenced_ms = MS_RECORD_REFERENCED_MS;
	if (arg && cli_parse_u64(arg, 1, 3600000, &o->referenced_ms))
		return cli_usage_error("record", "invalid interval '%s' for --referenced: expected "
				       "milliseconds from 1 to 3600000, such as 100", arg);
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	struct launch_pids pids = { .cmd = "record", .pids = o->pids, .n = &o->nr_pids };
	const struct cli_option options[] = {
		OPT_STRING('o', "output", &o->output, "FILE", "write to FILE (default " CLI_DEFAULT_DATA "); an existing\n"
			   "FILE becomes FILE.old (a device or FIFO is refused);\n"
			   "'-' writes pipe mode to stdout"),
		OPT_CALLBACK('p', "pid", &pids, "PID[,...]", "attach to running processes and all their threads\n"
			     "until Ctrl-C or until they exit; their current maps\nare read from /proc first",
			     launch_opt_pids),
		/* 0 until given: -c 1 with --no-samples is a mistake, the default is not. */
		OPT_U64('c', "count", &o->period, "PERIOD", "one page-fault sample every PERIOD faults (default 1)",
			1, UINT32_MAX, "invalid sample period", ": expected a whole number from 1 to 4294967295"),
		OPT_CALLBACK('m', "mmap-pages", o, "N", "ring buffer pages per CPU, a power of two (default\n"
			     "1024; attaching to more than 4 processes, 1024 per 4\n"
			     "of them, up to 8192, within 1/16 of the memory)", opt_pages),
		OPT_U64('z', "compression-level", &o->zlevel, "LEVEL", "zstd level of the data, 1 (default, fast) to 22\n"
			"(smallest)", 1, 22, "invalid compression level", ": expected a whole number from 1 to 22"),
		OPT_BOOL(0, "no-compress", &o->no_compress, "write the records as they are, not compressed"),
		OPT_BOOL(0, "no-samples", &o->no_samples, "record address-space changes only, no page faults"),
		OPT_BOOL(0, "no-vma-tree", &o->no_vma_tree, "leave out the kernel's VMA tree writes\n"
			 "(maple_tree:ma_write, and mmap_lock:* for whose tree,\n"
			 "recorded where the kernel has them): VMA splits and\n"
			 "merges are then modelled from the kernel's rules alone"),
		OPT_CALLBACK(0, "call-graph", o, "fp", "add user call chains (frame pointers) to page-fault\n"
			     "and syscall samples: who faulted, who mapped", opt_call_graph),
		OPT_MORE_HELP("call-graph", "dwarf", "copy the user registers and 8 KiB of user stack\n"
			      "instead, unwound at report time with the binaries'\n"
			      "CFI: for code built without frame pointers"),
		OPT_BOOL(0, "no-alloc-stacks", &o->no_alloc_stacks, "no stack copies on the mapping syscalls\n"
			 "(mmap, mremap, brk, shmat): smaller files, and\n"
			 "allocation sites only from --call-graph"),
		OPT_CALLBACK_OPTARG("referenced", o, "[=MS]", "every MS milliseconds (default 100), each\n"
				    "process's accessed bits per VMA: smaps Referenced:,\n"
				    "then cleared (clear_refs); the pages touched in each\n"
				    "interval, with no PMU and no DAMON", opt_referenced),
		OPT_CALLBACK('e', "event", &o->events, "EVENT", "also sample data addresses with a hardware event:\n"
			     "mem-loads, mem-stores, dTLB-load-misses,\n"
			     "cpu/mem-loads,ldlat=30/P, ibs_op//, arm_spe//", record_events_opt),
		OPT_BOOL(0, "damon", &o->damon.on, "DAMON's access counts per region of the processes\n"
			 "(a kdamond of ours; none is made where another runs)"),
		OPT_CALLBACK(0, "damon-intervals", &o->damon, "S,A,U", "DAMON's sampling, aggregation and update\n"
			     "intervals in us (default 5000,100000,1000000)", record_damon_opt_intervals),
		OPT_CALLBACK(0, "damon-regions", &o->damon, "MIN,MAX", "DAMON's region counts (default 10,1000)",
			     record_damon_opt_regions),
		OPT_CALLBACK_OPTARG("prefetches", &o->prefetch, "[=SPEC]", "a uprobe at each data prefetch\n"
				    "instruction of the program's binaries (libraries,\n"
				    "dlopen too), its address registers recorded: bad\n"
				    "prefetches in unmapped (SPEC: PATH, func=NAME,\n"
				    "max=N, hot=N, window=T/P; 25-90 us a hit)", record_prefetch_opt),
		OPT_COUNT('v', "verbose", &o->verbose, "say more"),
		OPT_END(),
	};
	int n;

	o->output = CLI_DEFAULT_DATA;
	o->pages = MS_LIVE_DEFAULT_PAGES;
	if ((n = parse_options(argc, argv, options, &usage, PARSE_OPT_STOP_AT_NON_OPTION)) < 0)
		return parse_options_failed(n);
	if (n < argc)
		o->cmd = argv + n;
	o->period_set = o->period != 0;
	if (!o->period_set)
		o->period = 1;
	if (!o->cmd && !o->nr_pids)
		return cli_usage_error("record", "nothing to record: give a command after '--' "
				       "or processes with -p");
	if (o->cmd && o->nr_pids)
		return cli_usage_error("record", "give either a command or -p, not both");
	if (o->no_samples && o->period_set)
		return cli_usage_error("record", "-c sets the fault sampling period, and --no-samples "
				       "records no faults: give one of them");
	if (o->no_compress && o->zlevel)
		return cli_usage_error("record", "-z sets the compression level, and --no-compress "
				       "writes no compressed data: give one of them");
	o->pipe = !strcmp(o->output, "-");
	return 0;
}

/*
 * The recording's file, made anew: one there becomes PATH.old. -1 with
 * errno set; -2 where PATH is a device or a FIFO (/dev/null, say), or a
 * link to one (/dev/stdout), which renamed would leave a regular file in
 * its place.
 */
static int open_output(const char *path)
{
	struct stat st, to;
	char old[4096];

	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if ((!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) ||
		    (S_ISLNK(st.st_mode) && !stat(path, &to) && !S_ISREG(to.st_mode)))
			return -2;
		snprintf(old, sizeof(old), "%s.old", path);
		if (rename(path, old))
			return -1;
	}
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

struct session {
	struct record_opts *o;
	struct ms_record *rec;
	int out_fd;
	struct launch_child child;  /* the command, when there is one */
	int pidfds[MAX_PIDS];       /* one per followed process; [0] is the child's */
	bool tty;                   /* stderr is a terminal: live counts once a second */
	bool counts_shown;
	bool exited[MAX_PIDS];
	int nr_pidfds;
};

/*
 * Once a second on a terminal: the samples, bytes and lost records so far,
 * on one line that the next overwrites (and the summary clears).
 */
static void live_counts(struct session *s, uint64_t *next)
{
	struct ms_record_stats st;
	uint64_t now = ms_monotonic_ns();

	if (!s->tty || now < *next)
		return;
	*next = now + 1000000000ULL;
	ms_record_stats(s->rec, &st);
	fprintf(stderr, "\rmapscope: %llu samples (%llu data addresses), %.1f MiB, %llu records lost\033[K",
		(unsigned long long)st.samples, (unsigned long long)st.data_samples,
		(double)st.bytes / (1024.0 * 1024.0), (unsigned long long)st.lost);
	s->counts_shown = true;
}

/* Polls the rings and the followed processes until all have exited or a signal stops us. */
static int main_loop(struct session *s)
{
	uint64_t next = ms_monotonic_ns() + 1000000000ULL;
	int nr_rings = ms_record_nr_fds(s->rec), i, live_procs, err = 0;
	/* One slot per ring (a ring per CPU) and per followed process, however many there are. */
	struct pollfd *fds = calloc((size_t)nr_rings + (size_t)s->nr_pidfds + 1, sizeof(*fds));

	if (!fds)
		return -ENOMEM;
	for (i = 0; i < nr_rings; i++)
		fds[i] = (struct pollfd){ .fd = ms_record_fd(s->rec, i), .events = POLLIN };
	for (i = 0; i < s->nr_pidfds; i++)
		fds[nr_rings + i] = (struct pollfd){ .fd = s->pidfds[i], .events = POLLIN };
	while (!launch_stop) {
		if (poll(fds, (nfds_t)(nr_rings + s->nr_pidfds), ms_record_wait_ms(s->rec, 250)) < 0 &&
		    errno != EINTR) {
			err = -errno;
			break;
		}
		if ((err = ms_record_drain(s->rec)))
			break;
		live_counts(s, &next);
		live_procs = 0;
		for (i = 0; i < s->nr_pidfds; i++) {
			if (fds[nr_rings + i].revents & POLLIN) {
				s->exited[i] = true;
				fds[nr_rings + i].fd = -1;
			}
			live_procs += !s->exited[i];
		}
		if (!live_procs)
			break;
	}
	free(fds);
	return err;
}

static void print_summary(struct session *s)
{
	struct ms_record_stats st;
	char status[160] = "";

	ms_record_stats(s->rec, &st);
	if (s->counts_shown)
		fputs("\r\033[K", stderr);        /* the live counts' line gives way to the summary */
	if (s->o->cmd) {
		status[0] = ';';
		status[1] = ' ';
		launch_describe(&s->child, s->o->cmd[0], status + 2, sizeof(status) - 2);
	}
	fprintf(stderr, "mapscope: %llu samples (%llu data addresses, %llu others), %llu records lost, "
		"%.1f MiB written to '%s'%s%s\n", (unsigned long long)st.samples,
		(unsigned long long)st.data_samples, (unsigned long long)(st.samples - st.data_samples),
		(unsigned long long)st.lost,
		(double)st.bytes / (1024.0 * 1024.0), s->o->pipe ? "stdout" : s->o->output,
		status[2] ? status : "", launch_stop ? " (stopped by signal)" : "");
	if (st.lost)
		cli_hint("records were lost: raise the ring buffer size with -m (now %llu pages) "
			 "or sample fewer faults with -c%s", (unsigned long long)s->o->pages,
			 s->o->no_alloc_stacks ? "" : "; a program that maps memory very often: "
			 "--no-alloc-stacks (allocation sites are then not named)");
}

/* The maps each attached process had before we came, read from /proc while the events already run. */
static int synthesize_all(struct session *s)
{
	uint64_t t0, t1;
	int i, err;

	for (i = 0; i < s->o->nr_pids; i++) {
		t0 = ms_monotonic_ns();
		err = ms_record_synthesize(s->rec, s->o->pids[i]);
		t1 = ms_monotonic_ns();
		if (err == -ENOSPC || err == -EIO || err == -EPIPE || err == -EFBIG)
			return err;                /* the output, not /proc */
		if (err)
			cli_error("cannot read the maps of process %d: %s", (int)s->o->pids[i],
				  strerror(-err));
		if (s->o->verbose)
			fprintf(stderr, "mapscope: process %d: maps read in %.1f ms\n", (int)s->o->pids[i],
				(double)(t1 - t0) / 1e6);
	}
	return ms_record_drain(s->rec);
}

static int setup_targets(struct session *s)
{
	struct record_opts *o = s->o;
	int i, err = 0;

	if (o->cmd) {
		if ((err = launch_fork(&s->child, o->cmd, o->pipe)))
			return err;
		s->pidfds[0] = s->child.pidfd;
		s->nr_pidfds = 1;
		return ms_record_add_task(s->rec, s->child.pid);
	}
	for (i = 0; i < o->nr_pids && !err; i++) {
		s->pidfds[i] = launch_pidfd(o->pids[i]);
		s->nr_pidfds = i + 1;
		if (s->pidfds[i] < 0)
			return -errno;
		err = ms_record_attach(s->rec, o->pids[i]);
	}
	return err;
}

/*
 * The ring buffer's size per CPU where -m is not given. A tree of processes
 * attached to at once fills the rings faster while the events start and
 * their maps are read (a browser's dozens of processes), so it grows with
 * their number: 1024 pages per 4 processes, up to 8192 (32 MiB), and never
 * past a sixteenth of the memory over all CPUs.
 */
static uint64_t default_pages(int nr_pids)
{
	uint64_t pages = MS_LIVE_DEFAULT_PAGES, mem = (uint64_t)sysconf(_SC_PHYS_PAGES);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	while (pages < 8 * MS_LIVE_DEFAULT_PAGES && (uint64_t)nr_pids > pages / MS_LIVE_DEFAULT_PAGES * 4)
		pages *= 2;
	while (pages > MS_LIVE_DEFAULT_PAGES && cpus > 0 && pages * (uint64_t)cpus > mem / 16)
		pages /= 2;
	return pages;
}

/*
 * Closing the events costs the kernel an RCU grace period per tracepoint
 * it unregisters: about 40 ms each here, a second for the 27 tracepoints,
 * after the recording is complete. A child holds the events' last
 * references and drops them as it exits, on its own, so that record
 * returns at once; it keeps nothing else open (a pipe reader sees its end
 * of file now). Where the child cannot be made, the close happens here.
 */
static void release_events_later(void)
{
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	_exit(0);                        /* the events' fds close with the process */
}

/* The library's options, from the command line's. */
static void record_options(const struct record_opts *o, int argc, char **argv, struct ms_record_opts *ro)
{
	*ro = (struct ms_record_opts){
		.fault_period = o->no_samples ? 0 : o->period, .mmap_pages = (unsigned int)o->pages,
		.callchain = o->callchain, .dwarf = o->dwarf, .no_vma_tree = o->no_vma_tree,
		.no_alloc_stacks = o->no_alloc_stacks,
		.no_compress = o->no_compress, .compress_level = (uint32_t)o->zlevel,
		.enable_on_exec = o->cmd != NULL, .pipe = o->pipe, .argc = argc, .argv = argv,
		.referenced_ms = (uint32_t)o->referenced_ms,
	};
}

/* Why the recording could not be set up, with the fix where there is one. */
static void explain_new_failure(int err)
{
	if (err == EACCES || err == EPERM)
		cli_hint_privileges(err);
	else if (err == ENOENT || err == ENODEV)
		cli_hint("tracefs must be mounted, with syscall tracepoints "
			 "(CONFIG_FTRACE_SYSCALLS): as root, mount -t tracefs nodev /sys/kernel/tracing");
}

/* What the user gave, checked where it can be before anything starts: the command, the processes. */
static int check_targets(struct record_opts *o)
{
	pid_t tgid;
	int i, err;

	if (o->cmd && (err = launch_check_command(o->cmd[0]))) {
		cli_error("cannot execute '%s': %s", o->cmd[0], strerror(-err));
		return err;
	}
	for (i = 0; i < o->nr_pids; i++) {
		if (launch_tgid(o->pids[i], &tgid)) {
			cli_error("cannot attach to process %d: No such process", (int)o->pids[i]);
			return -ESRCH;
		}
		o->pids[i] = tgid;
	}
	return 0;
}

/* Lets the command run, or enables the attached processes' events and reads their maps. */
static int start_targets(struct session *s)
{
	struct record_opts *o = s->o;
	int err;

	if (o->cmd)
		return launch_release(&s->child, o->cmd[0]);
	if ((err = ms_record_enable(s->rec))) {
		cli_error("cannot enable events: %s", strerror(-err));
		return err;
	}
	if ((err = synthesize_all(s))) {
		cli_error("recording stopped: cannot write '%s': %s", o->pipe ? "stdout" : o->output,
			  strerror(-err));
		return err;
	}
	fprintf(stderr, "mapscope: recording %d process%s into '%s'; Ctrl-C to stop\n", o->nr_pids,
		o->nr_pids > 1 ? "es" : "", o->pipe ? "stdout" : o->output);
	return 0;
}

/* Runs until the processes end or a signal stops us, then ends the file. */
static int run_and_finish(struct session *s)
{
	struct record_opts *o = s->o;
	int err;

	s->tty = isatty(STDERR_FILENO);
	err = main_loop(s);
	launch_finish(&s->child, s->exited[0]);
	ms_record_stop(s->rec);
	if (!err)
		err = ms_record_drain(s->rec);
	if (err)
		cli_error("recording stopped: cannot write '%s': %s", o->pipe ? "stdout" : o->output,
			  strerror(-err));
	return err;
}

/* A file grown past what it may hold: past RLIMIT_FSIZE where one is set, else the file system's largest file. */
static void hint_too_large(const char *path)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		cli_hint("'%s' holds what was written before it reached the largest file its file system "
			 "holds, and reads as it is (mapscope report, perf script); record elsewhere with -o, "
			 "or for less time", path);
	else
		cli_hint("'%s' holds what was written before it reached the file size limit (%llu bytes), "
			 "and reads as it is (mapscope report, perf script); raise the limit (ulimit -f), or "
			 "record for less time", path, (unsigned long long)rl.rlim_cur);
}

static int finish(struct session *s, int err)
{
	struct record_opts *o = s->o;
	int cerr = ms_record_close(s->rec);

	if (cerr && !err) {
		cli_error("cannot write '%s': %s", o->pipe ? "stdout" : o->output, strerror(-cerr));
		err = cerr;
	}
	if (err == -ENOSPC && !o->pipe)
		cli_hint("'%s' holds what was written before the disk filled up, and reads as it is "
			 "(mapscope report, perf script); free some space, or record elsewhere with -o",
			 o->output);
	if (err == -EFBIG && !o->pipe)
		hint_too_large(o->output);
	if (!o->cmd || s->child.reaped)
		print_summary(s);
	return err;
}

/* The headers did not go out whole: what is there is no recording, and the file is ours (O_EXCL). */
static void start_failed(const struct record_opts *o, int err)
{
	if (!o->pipe && !unlink(o->output))
		cli_error("cannot write '%s': %s; nothing was recorded, and the file is removed", o->output,
			  strerror(-err));
	else
		cli_error("cannot write '%s': %s", o->pipe ? "stdout" : o->output, strerror(-err));
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct session s = { .o = &o, .out_fd = -1, .child = { .go_fd = -1, .err_fd = -1, .pidfd = -1 } };
	struct ms_record_opts ro;
	int ret = EXIT_RUNTIME, err, i;

	err = parse_args(argc, argv, &o);
	if (err)
		return err < 0 ? 0 : err;
	cli_log_init(o.verbose);
	if (check_targets(&o))
		return EXIT_RUNTIME;
	if ((ret = record_events_resolve(&o.events)) ||
	    (ret = record_prefetch_resolve(&o.prefetch, o.cmd ? o.cmd[0] : NULL, o.pids, o.nr_pids))) {
		record_prefetch_release(&o.prefetch);
		return ret;
	}
	ret = EXIT_RUNTIME;
	launch_raise_fd_limit();
	launch_signals();

	if (!o.pages_set)
		o.pages = default_pages(o.nr_pids);
	if (o.verbose)
		fprintf(stderr, "mapscope: ring buffers of %llu pages per CPU\n", (unsigned long long)o.pages);
	record_damon_check(&o.damon, &o.referenced_ms);
	record_options(&o, argc, argv, &ro);
	record_damon_options(&o.damon, &ro);
	record_events_options(&o.events, &ro);
	record_prefetch_check(&o.prefetch);
	record_prefetch_options(&o.prefetch, &ro);
	s.rec = ms_record_new(&ro);
	if (!s.rec) {
		err = errno;
		explain_new_failure(err);
		record_prefetch_explain(&o.prefetch, err);
		goto cleanup;
	}
	record_prefetch_report(&o.prefetch, s.rec, o.verbose);
	err = setup_targets(&s);
	if (err) {
		if (err == -ESRCH)
			cli_error("cannot attach: the process exited");
		cli_hint_privileges(-err);
		record_events_hint(&o.events, -err);
		goto cleanup;
	}
	record_damon_start(&o.damon, s.rec, o.cmd ? &s.child.pid : o.pids, o.cmd ? 1 : (size_t)o.nr_pids);

	s.out_fd = o.pipe ? STDOUT_FILENO : open_output(o.output);
	if (s.out_fd == -2)
		cli_error("cannot write '%s': it is not a regular file, and a recording's file is written out of order "
			  "(for a pipe or a device: -o - writes pipe mode to stdout, to be redirected)", o.output);
	else if (s.out_fd < 0)
		cli_error("cannot create '%s': %s", o.output, strerror(errno));
	if (s.out_fd < 0)
		goto cleanup;
	if ((err = ms_record_start(s.rec, s.out_fd))) {
		start_failed(&o, err);
		goto cleanup;
	}
	err = start_targets(&s);
	if (!err)
		err = run_and_finish(&s);
	ret = finish(&s, err) ? EXIT_RUNTIME : 0;
cleanup:
	launch_cleanup(&s.child);
	for (i = o.cmd ? 1 : 0; i < s.nr_pidfds; i++)
		if (s.pidfds[i] >= 0)
			close(s.pidfds[i]);
	if (s.out_fd >= 0 && s.out_fd != STDOUT_FILENO)
		close(s.out_fd);
	if (s.rec && ret == 0)
		release_events_later();
	ms_record_free(s.rec);
	record_prefetch_release(&o.prefetch);
	return ret;
}
