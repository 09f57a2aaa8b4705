/*
 * mapscope hugepages: which regions belong on transparent hugepages, why,
 * and (--apply) collapsing the advised ranges of a live process now with
 * process_madvise(MADV_COLLAPSE).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <mapscope/hugepages.h>
#include <mapscope/symbols.h>

#include "advice-file.h"
#include "cli.h"
#include "output/format.h"
#include "commands.h"
#include "parse-options.h"
#include "hugepages-do.h"
#include "launch.h"
#include "output/json.h"
#include "replay.h"
#include "session/source.h"
#include "output/text.h"
#include "textout.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static const struct cli_usage usage = {
	.cmd = "hugepages",
	.column = 24,
	.head =
"usage: mapscope hugepages [-i FILE] [--min-benefit N] [--budget SIZE] [--format text|json]\n"
"                          [--save FILE]\n"
"       mapscope hugepages [-i FILE] --apply -p PID [--dry-run]\n"
"\n"
"Says which private anonymous and shmem regions belong on 2 MiB\n"
"transparent hugepages. For every 2 MiB-aligned span of each region it\n"
"counts the distinct 4 KiB pages touched, the page faults, the data samples\n"
"and the TLB-miss samples (hardware memory samples, where recorded). A span\n"
"lying whole inside the region with at least half its pages touched is\n"
"dense; a region with dense spans is advised, ranked by benefit: the faults\n"
"hugepages would save in the advised spans (pages touched minus one per\n"
"hugepage) plus the TLB misses there. A sampled recording (record -c N,\n"
"perf's -F) is scaled: a sampled fault stands for N pages first touched,\n"
"and the figures are said to be estimates. Each region comes with the\n"
"reason it is or is not advised: too sparse, cannot tell (sampled too\n"
"coarsely), too short-lived (under 10 ms), VM_NOHUGEPAGE, already huge, or\n"
"not 2 MiB-alignable, and with the action to take: glibc's tunable for\n"
"malloc's memory, a JVM's option, madvise after the mmap in the function\n"
"that made it, --apply for a live process. Where the recording has ongoing\n"
"access (record --referenced, --damon), the advised regions are ranked by\n"
"it instead, and the reason says so. With --budget, only the best-ranked\n"
"regions whose spans fit in SIZE are advised; the rest are left out for\n"
"lack of room, and where one left out ranks level with one kept (within a\n"
"tenth, as two equal tables touched once do by first touches alone), both\n"
"say that the evidence cannot tell them apart.\n"
"\n",
	.tail =
"\n"
"EXIT STATUS\n"
"  0 done (with --apply: every range collapsed, or on hugepages already),\n"
"  1 an error or a range that could not be collapsed, 2 bad usage.\n"
"\n"
"EXAMPLES\n"
"  mapscope record -p 1234   (Ctrl-C after the program's working phase)\n"
"  mapscope hugepages\n"
"  mapscope hugepages --format json --min-benefit 1000\n"
"  mapscope hugepages --budget 1G   (room for 512 hugepages)\n"
"  mapscope hugepages --apply -p 1234 --dry-run\n"
"  mapscope hugepages -i run1.data --save advice.json\n",
};

struct hp_opts {
	const char *input, *save;
	uint64_t min_benefit, budget;
	bool json, apply, dry_run;
	pid_t pid;
};

struct hp_run {
	struct ms_hugepages *hp;
	struct ms_session *s;         /* the regions' allocation sites */
	uint64_t budget;              /* --budget's bytes, 0 without */
};

/* What the budget took and left: bytes advised, and regions and bytes left out for lack of room. */
struct budget_use {
	uint64_t advised, left_out, left_out_bytes;
};

/* The advised regions and those left out come first: the first that is neither ends them. */
static struct budget_use budget_use(struct ms_hugepages *hp, size_t n)
{
	struct budget_use u = { 0 };
	const struct ms_huge_advice *a;
	size_t i;

	for (i = 0; i < n && (a = ms_hugepages_advice_at(hp, i)) && (a->advised || a->no_room); i++) {
		if (a->advised)
			u.advised += a->spans * MS_HUGE_SPAN;
		if (a->no_room) {
			u.left_out++;
			u.left_out_bytes += a->spans * MS_HUGE_SPAN;
		}
	}
	return u;
}

/*
 * An entry's line, written by hand (500,000 of them): "%-7s %7u %-12s
 * %-29s %-29s %3u/%-3u %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 "  %s\n".
 */
static void text_advice(const struct ms_huge_advice *a, enum hugepages_how how)
{
	const struct ms_region *r = a->region;
	const uint64_t figures[4] = { a->pages, a->faults, a->samples, a->benefit };
	const int widths[4] = { 8, 8, 8, 9 };
	int k;

	text_s(a->advised ? "yes" : "no", -7);
	fputc_unlocked(' ', stdout);
	text_u64(r->pid, 7);
	fputc_unlocked(' ', stdout);
	text_s(ms_region_kind_name(r->kind), -12);
	fputc_unlocked(' ', stdout);
	text_range(r->start, r->end, -29);
	fputc_unlocked(' ', stdout);
	if (a->advised && a->end)
		text_range(a->start, a->end, -29);
	else
		text_s(hugepages_how_short(how), -29);
	fputc_unlocked(' ', stdout);
	text_u64(a->spans, 3);
	fputc_unlocked('/', stdout);
	text_u64(a->aligned_spans, -3);
	for (k = 0; k < 4; k++) {
		fputc_unlocked(' ', stdout);
		text_u64(figures[k], widths[k]);
	}
	text_s("  ", 0);
	text_s(r->name[0] ? MS_TEXT(r->name) : "[anon]", 0);
	fputc_unlocked('\n', stdout);
}

static void print_text(size_t n, const struct hp_run *run, bool tlb)
{
	enum hugepages_how how;
	char act[1024];
	size_t i;

	printf("# 2 MiB spans: dense when at least half their pages were touched%s\n",
	       tlb ? "" : "; no TLB-miss samples in this recording (no hardware memory events)");
	if (n && ms_hugepages_advice_at(run->hp, 0)->estimated)
		printf("# sampled, 1 event in %" PRIu64 " recorded (on average): pages, faults and benefit are "
		       "estimates\n", ms_hugepages_advice_at(run->hp, 0)->period);
	replay_loss_line(run->s, stdout, "# ");
	if (run->budget) {
		struct budget_use u = budget_use(run->hp, n);

		printf("# budget: room for %" PRIu64 " MiB of hugepages: %" PRIu64 " MiB advised; left out for lack "
		       "of room: %" PRIu64 " region%s (%" PRIu64 " MiB)\n", run->budget >> 20, u.advised >> 20,
		       u.left_out, u.left_out == 1 ? "" : "s", u.left_out_bytes >> 20);
	}
	printf("%-7s %7s %-12s %-29s %-29s %6s %8s %8s %8s %9s  %s\n", "advised", "pid", "kind", "region",
	       "advise", "spans", "pages", "faults", "samples", "benefit", "name");
	for (i = 0; i < n; i++) {
		const struct ms_huge_advice *a = ms_hugepages_advice_at(run->hp, i);

		how = hugepages_do(a, run->s, act, sizeof(act));
		text_advice(a, how);
		text_s("     why: ", 0);                  /* "%9s %s\n" */
		text_s(MS_TEXT(a->reason), 0);
		fputc_unlocked('\n', stdout);
		if (a->advised)
			printf("%9s %s\n", "do:", MS_TEXT(act));
	}
}

static void json_advice(struct ms_json *w, const struct ms_huge_advice *a, const struct hp_run *run)
{
	const struct ms_region *r = a->region;
	enum hugepages_how how;
	char act[1024];

	how = hugepages_do(a, run->s, act, sizeof(act));
	ms_json_object_begin(w);
	ms_json_key_u64(w, "pid", r->pid);
	ms_json_key_addr_or_null(w, "start", a->start, a->advised && a->end);
	ms_json_key_addr_or_null(w, "end", a->end, a->advised && a->end);
	ms_json_key(w, "region");
	ms_json_object_begin(w);
	ms_json_key_u64(w, "id", r->id);
	ms_json_key_str(w, "name", r->name);
	ms_json_key_str(w, "kind", ms_region_kind_name(r->kind));
	ms_json_key_addr(w, "start", r->start);
	ms_json_key_addr(w, "end", r->end);
	ms_json_object_end(w);
	ms_json_key_u64(w, "spans", a->spans);
	ms_json_key_u64(w, "aligned_spans", a->aligned_spans);
	ms_json_key_u64(w, "pages", a->pages);
	ms_json_key_u64(w, "faults", a->faults);
	ms_json_key_u64(w, "samples", a->samples);
	ms_json_key_u64(w, "tlb_misses", a->tlb_misses);
	ms_json_key_u64(w, "faults_saved", a->faults_saved);
	ms_json_key_u64(w, "tlb_entries_now", a->tlb_entries_now);
	ms_json_key_u64(w, "tlb_entries_huge", a->tlb_entries_huge);
	ms_json_key_u64(w, "benefit", a->benefit);
	ms_json_key_u64(w, "sample_period", a->period);
	ms_json_key_bool(w, "estimated", a->estimated);
	ms_json_key_bool(w, "advised", a->advised);
	ms_json_key_str(w, "reason", a->reason);
	ms_json_key_str(w, "alloc", hugepages_alloc(r, run->s));
	ms_json_key_str(w, "alloc_chain", ms_session_alloc_chain(run->s, r));
	ms_json_key_str(w, "how", hugepages_how_name(how));
	ms_json_key_str(w, "action", act);
	if (run->budget) {
		ms_json_key_bool(w, "no_room", a->no_room);
		ms_json_key(w, "level_with");
		if (a->level_with)
			ms_json_u64(w, a->level_with->id);
		else
			ms_json_null(w);
	}
	ms_json_object_end(w);
}

static void print_json(size_t n, const struct hp_run *run, bool tlb)
{
	struct ms_json w;
	size_t i;

	ms_json_init(&w, stdout, 0);
	ms_json_object_begin(&w);
	ms_json_key_bool(&w, "tlb_samples", tlb);
	replay_loss_json(run->s, &w);
	if (run->budget) {
		struct budget_use u = budget_use(run->hp, n);

		ms_json_key(&w, "budget");
		ms_json_object_begin(&w);
		ms_json_key_u64(&w, "bytes", run->budget);
		ms_json_key_u64(&w, "advised_bytes", u.advised);
		ms_json_key_u64(&w, "left_out", u.left_out);
		ms_json_key_u64(&w, "left_out_bytes", u.left_out_bytes);
		ms_json_object_end(&w);
	}
	ms_json_key(&w, "advice");
	ms_json_array_begin(&w);
	for (i = 0; i < n; i++) {
		ms_json_newline(&w, 2);
		json_advice(&w, ms_hugepages_advice_at(run->hp, i), run);
	}
	ms_json_array_end(&w);
	ms_json_object_end(&w);
	putchar('\n');
}

/* AnonHugePages (kB) of the VMAs of pid overlapping [start, end), from smaps; -1 when unreadable. */
static long anon_huge_kb(pid_t pid, uint64_t start, uint64_t end)
{
	char path[64], line[512];
	unsigned long long s, e;
	bool in = false;
	long total = 0, kb;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = s < end && start < e;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			total += kb;
	}
	fclose(f);
	return total;
}

/* Whether the running kernel is older than major.minor. */
static bool kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/*
 * What the kernel meant (mm/khugepaged.c, madvise_collapse_errno; seen
 * on 6.18): a span already huge succeeds; one with no page table at all
 * (never touched, or released since) fails EINVAL, as do read-only and
 * userfaultfd memory.
 */
static const char *collapse_error(int e)
{
	switch (e) {
	case EINVAL: return kernel_before(6, 1) ? "this kernel has no MADV_COLLAPSE: Linux 6.1+ is needed" :
			    "the span holds no memory now (never touched, or released since: MADV_DONTNEED, "
			    "munmap) or memory that cannot be collapsed (read-only, userfaultfd)";
	case ENOMEM: return "no hugepage could be had (memory low or fragmented: try after "
			    "echo 1 > /proc/sys/vm/compact_memory), or the range is no longer mapped";
	case EAGAIN: return "the pages were busy (locked or being changed): try again";
	case EBUSY: return "the memory cgroup's limit left no room for a hugepage";
	case EPERM: return "not allowed: process_madvise on another process needs CAP_SYS_NICE";
	case EACCES: return "not allowed: ptrace access to the process is needed (same user, or root)";
	case ESRCH: return "the process has exited";
	case ENOSYS: return "this kernel has no process_madvise (Linux 5.10+ needed; MADV_COLLAPSE 6.1+)";
	default: return strerror(e);
	}
}

/* Whether this process has CAP_SYS_NICE in its effective set (bit 23 of CapEff). */
static bool have_cap_sys_nice(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff >> 23 & 1;
}

/*
 * What --apply needs, checked before anything is done or promised: the
 * process's smaps readable (ptrace access: the same user, or root) and
 * CAP_SYS_NICE (process_madvise on another process). 0, or EXIT_RUNTIME
 * after saying what is missing.
 */
static int check_access(pid_t pid)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		cli_error("cannot read '%s': %s", path, strerror(errno));
		if (errno == EACCES || errno == EPERM)
			cli_hint("--apply needs ptrace access to process %d: run as its user, or as root",
				 (int)pid);
		return EXIT_RUNTIME;
	}
	fclose(f);
	if (pid != getpid() && !have_cap_sys_nice()) {
		cli_error("cannot apply advice to process %d: process_madvise needs CAP_SYS_NICE", (int)pid);
		cli_hint("run as root, or give mapscope CAP_SYS_NICE (setcap cap_sys_nice+ep)");
		return EXIT_RUNTIME;
	}
	return 0;
}

/* How the spans of one range fared: collapsed (or huge already), or the first error and where. */
struct collapse {
	uint32_t ok, failed;
	int err;                      /* the first failure's errno */
	uint64_t at[4];               /* the first failed spans */
};

/*
 * Collapses [start, end) of the process one 2 MiB span at a time: the
 * kernel stops a range at its first failing span, and says nothing of
 * which; span by span, the rest are collapsed and the failures named.
 */
static void collapse_spans(int pidfd, uint64_t start, uint64_t end, struct collapse *c)
{
	struct iovec iov;
	uint64_t at;

	memset(c, 0, sizeof(*c));
	for (at = start; at < end; at += MS_HUGE_SPAN) {
		iov = (struct iovec){ (void *)(uintptr_t)at, MS_HUGE_SPAN };
		if (syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_COLLAPSE, 0) >= 0) {
			c->ok++;
			continue;
		}
		if (!c->failed)
			c->err = errno;
		if (c->failed < 4)
			c->at[c->failed] = at;
		c->failed++;
	}
}

/*
 * One advised range: what was done, said truly. A span already huge
 * collapses "successfully" and changes nothing: a range that was all huge
 * before (after an earlier --apply, say) is said to be so. smaps counts
 * whole VMAs, which may be larger than the range: a range is huge already
 * only when collapsing it changed nothing either.
 */
static int apply_range(int pidfd, const struct ms_huge_advice *a, const struct hp_opts *o)
{
	long before = anon_huge_kb(o->pid, a->start, a->end), after, range_kb = (long)((a->end - a->start) >> 10);
	uint32_t i, spans = (uint32_t)((a->end - a->start) / MS_HUGE_SPAN);
	struct collapse c;
	char range[40];

	ms_format_range(a->start, a->end, range);
	printf("%s (%u spans, %s): ", range, spans,
	       a->region->name[0] ? MS_TEXT(a->region->name) : "[anon]");
	if (o->dry_run) {
		printf(before >= range_kb ? "already on hugepages, it seems: AnonHugePages now %ld kB\n" :
		       "would collapse; AnonHugePages now %ld kB\n", before);
		return 0;
	}
	collapse_spans(pidfd, a->start, a->end, &c);
	after = anon_huge_kb(o->pid, a->start, a->end);
	if (!c.failed && after == before && before >= range_kb)
		printf("already on hugepages (AnonHugePages %ld kB, unchanged): nothing to do\n", before);
	else if (!c.failed)
		printf("collapsed; AnonHugePages %ld kB -> %ld kB\n", before, after);
	if (!c.failed)
		return 0;
	printf("collapsed %u of %u spans (AnonHugePages %ld kB -> %ld kB); %u failed: %s (%s), at", c.ok, spans,
	       before, after, c.failed, strerror(c.err), collapse_error(c.err));
	for (i = 0; i < c.failed && i < 4; i++)
		printf(" 0x%" PRIx64, c.at[i]);
	printf("%s\n", c.failed > 4 ? " ..." : "");
	return -1;
}

/* Only advised ranges the process holds now: the advised come first, and end at one neither advised nor left out. */
static int apply(struct ms_hugepages *hp, size_t n, const struct hp_opts *o)
{
	const struct ms_huge_advice *a;
	int pidfd, failed = 0, done = 0;
	size_t i;

	if (check_access(o->pid))
		return EXIT_RUNTIME;
	pidfd = launch_pidfd(o->pid);
	if (pidfd < 0) {
		cli_error("cannot open process %d: %s", (int)o->pid, strerror(errno));
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n && (a = ms_hugepages_advice_at(hp, i)) && (a->advised || a->no_room); i++) {
		if (!a->advised || !a->end || a->region->pid != (uint32_t)o->pid)
			continue;
		if (apply_range(pidfd, a, o))
			failed++;
		else
			done++;
	}
	close(pidfd);
	if (!done && !failed)
		fprintf(stderr, "mapscope: nothing to apply: no advised range belongs to process %d in '%s'\n",
			(int)o->pid, o->input);
	return failed ? EXIT_RUNTIME : 0;
}

/* --budget SIZE: bytes, or with K, M, G or T (KiB ... TiB); at least one 2 MiB hugepage. */
static int parse_budget(const struct cli_option *opt, const char *arg)
{
	static const char units[] = "KMGT";
	char digits[32];
	const char *u;
	size_t len = strspn(arg, "0123456789");
	uint64_t v, shift = 0;

	u = arg[len] ? strchr(units, arg[len] >= 'a' ? arg[len] - 32 : arg[len]) : NULL;
	if (u && *u && (!arg[len + 1] || !strcmp(arg + len + 1, "iB") || !strcmp(arg + len + 1, "B")))
		shift = 10 * (uint64_t)(u - units + 1);
	if (!len || len >= sizeof(digits) || (arg[len] && !shift))
		return cli_usage_error("hugepages", "invalid --budget '%s': expected a size such as 64M or 1G", arg);
	memcpy(digits, arg, len);
	digits[len] = '\0';
	if (cli_parse_u64(digits, 0, UINT64_MAX >> shift, &v))
		return cli_usage_error("hugepages", "invalid --budget '%s': too large", arg);
	if ((v << shift) < MS_HUGE_SPAN)
		return cli_usage_error("hugepages", "invalid --budget '%s': expected at least 2M, one hugepage", arg);
	*(uint64_t *)opt->value = v << shift;
	return 0;
}

static int parse_args(int argc, char **argv, struct hp_opts *o)
{
	uint64_t pid = 0;
	int fmt = CLI_FORMAT_TEXT, n;
	const struct cli_option options[] = {
		OPT_INPUT(&o->input, "the recording (default " CLI_DEFAULT_DATA ")"),
		OPT_U64(0, "min-benefit", &o->min_benefit, "N",
			"advise only regions whose benefit is at least N (default 1)", 0, UINT64_MAX,
			"invalid --min-benefit", NULL),
		OPT_CALLBACK(0, "budget", &o->budget, "SIZE", "room for SIZE of hugepages (64M, 1G): advise the\n"
			     "best-ranked regions whose spans fit, say which\n"
			     "were left out for lack of room", parse_budget),
		OPT_FORMAT_TEXT_JSON(&fmt, "text (default) or json"),
		OPT_BOOL(0, "apply", &o->apply, "collapse the advised ranges of process PID now, with\n"
			 "process_madvise(MADV_COLLAPSE): Linux 6.1 or later,\n"
			 "CAP_SYS_NICE and ptrace access to it; AnonHugePages\n"
			 "from /proc/PID/smaps is shown before and after"),
		OPT_PID('p', "pid", &pid, "the live process for --apply (it must be the one recorded)"),
		OPT_BOOL(0, "dry-run", &o->dry_run, "with --apply: say what would be collapsed, change nothing"),
		OPT_STRING(0, "save", &o->save, "FILE", "also write the advice to FILE, keyed by what made\n"
			   "each region, for mapscope run --hugepages FILE"),
		OPT_END(),
	};

	o->input = CLI_DEFAULT_DATA;
	o->min_benefit = 1;               /* as --help says; 0 advises any dense region */
	if ((n = parse_options(argc, argv, options, &usage, 0)) < 0)
		return parse_options_failed(n);
	o->json = fmt == CLI_FORMAT_JSON;
	o->pid = (pid_t)pid;
	if (o->apply != (o->pid != 0))
		return cli_usage_error("hugepages", "--apply and -p go together");
	if (o->save && o->apply)
		return cli_usage_error("hugepages", "--save goes without --apply");
	if (o->dry_run && !o->apply)
		return cli_usage_error("hugepages", "--dry-run goes with --apply");
	return 0;
}

/*
 * The sites and chains the output names, handed to the namer's thread now,
 * in the order they are named: from its cache where an earlier run kept
 * them, not from symbol tables built here. JSON names every row's; text
 * the advised rows' (hugepages_do()); --save the advised and those left
 * out for lack of room (ms_advice_add()); --apply none.
 */
static void ask_sites(struct ms_session *s, struct ms_hugepages *hp, size_t n, const struct hp_opts *o)
{
	const struct ms_huge_advice *a;
	size_t i;

	for (i = 0; i < n; i++) {
		a = ms_hugepages_advice_at(hp, i);
		if ((!o->apply && (o->json || a->advised)) || (o->save && (a->advised || a->no_room)))
			session_sites_ask(s, a->region);
	}
}

int cmd_hugepages(int argc, char **argv)
{
	struct hp_opts o = { 0 };
	struct ms_hugepages_opts ho = { 0 };
	struct hp_run run = { 0 };
	struct ms_advice *adv = NULL;
	struct ms_session_opts so = { .symbols = true, .to_ns = UINT64_MAX };
	struct ms_session *s = NULL;
	struct ms_session_stats st;
	size_t n = 0;
	int ret, err;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	cli_log_init(0);
	ho.min_benefit = o.min_benefit;
	ho.budget = run.budget = o.budget;
	if ((ret = replay_open(&s, o.input, &so)))
		goto out;
	run.hp = ms_hugepages_new(&ho);
	run.s = s;
	if (!run.hp || ms_session_add(s, &ms_hugepages_analysis, run.hp)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (o.save && (!(adv = ms_advice_new()) || ms_session_add(s, &ms_advice_analysis, adv))) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if ((ret = replay_run(s, o.input)))
		goto out;
	ms_session_stats(s, &st);
	err = ms_hugepages_sort(run.hp, ms_session_aspace(s), st.last_time, &n);
	if (err) {
		cli_error("cannot build the advice: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	ask_sites(s, run.hp, n, &o);
	replay_warnings(s, o.input);
	if (o.save && (ret = advice_file_save(o.save, adv, s, run.hp, n)))
		goto out;
	if (o.apply)
		ret = apply(run.hp, n, &o);
	else if (o.json)
		print_json(n, &run, ms_hugepages_have_tlb(run.hp));
	else
		print_text(n, &run, ms_hugepages_have_tlb(run.hp));
	if (replay_status(s))
		ret = EXIT_RUNTIME;
out:
	ms_advice_free(adv);
	ms_hugepages_free(run.hp);
	replay_close(s);
	return ret;
}
