/*
 * What this process may record here: its rights (root, capabilities,
 * kernel.perf_event_paranoid), tracefs, and what the kernel grants when
 * asked (an event opened and closed on ourselves), each with the fix that
 * works on this machine.
 *
 * The kernel's rules, as measured on 6.x: a syscalls:* tracepoint with raw
 * data opens for an ordinary user on its own tasks at paranoid 2 when it
 * excludes the kernel (those tracepoints are flagged for any user);
 * maple_tree:ma_write does not (raw data of other tracepoints needs
 * CAP_PERFMON or paranoid -1). What such a user lacks is the tracepoints'
 * ids and formats: tracefs is mode 0700 unless mounted with gid= and mode=.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "kernel/damon.h"
#include "kernel/doctor.h"
#include "kernel/live.h"
#include "kernel/tracefs.h"
#include "util/log.h"

#define CAP_SYS_PTRACE_BIT 19
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

static uint64_t effective_caps(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (f)
		fclose(f);
	return caps;
}

static int read_int(const char *path, int dflt)
{
	char s[32];
	int v;

	return !ms_kernel_read_line(path, s, sizeof(s)) && sscanf(s, "%d", &v) == 1 ? v : dflt;
}

bool ms_doctor_privileged(void)
{
	uint64_t caps = effective_caps();

	return geteuid() == 0 || (caps >> CAP_PERFMON_BIT & 1) || (caps >> CAP_SYS_ADMIN_BIT & 1) ||
	       read_int("/proc/sys/kernel/perf_event_paranoid", 2) <= -1;
}

static struct ms_check *add(struct ms_doctor *d, const char *what, enum ms_check_state st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static struct ms_check *add(struct ms_doctor *d, const char *what, enum ms_check_state st, const char *fmt, ...)
{
	struct ms_check *c = &d->checks[d->n < MS_DOCTOR_MAX_CHECKS ? d->n++ : MS_DOCTOR_MAX_CHECKS - 1];
	va_list ap;

	c->what = what;
	c->state = st;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	c->fix[0] = '\0';
	return c;
}

static void probe_rights(struct ms_doctor *d)
{
	uint64_t caps = effective_caps();
	struct ms_check *c;

	d->root = geteuid() == 0;
	d->cap_perfmon = caps >> CAP_PERFMON_BIT & 1;
	d->cap_sys_admin = caps >> CAP_SYS_ADMIN_BIT & 1;
	d->cap_sys_ptrace = caps >> CAP_SYS_PTRACE_BIT & 1;
	d->paranoid = read_int("/proc/sys/kernel/perf_event_paranoid", 2);
	if (d->root)
		add(d, "privileges", MS_CHECK_OK, "root: every event, of any process");
	else if (d->cap_perfmon || d->cap_sys_admin)
		add(d, "privileges", MS_CHECK_OK, "uid %d with CAP_%s: every event of its own processes%s",
		    (int)geteuid(), d->cap_perfmon ? "PERFMON" : "SYS_ADMIN",
		    d->cap_sys_ptrace ? " and of others" : " (others' need CAP_SYS_PTRACE)");
	else if (d->paranoid <= -1)
		add(d, "privileges", MS_CHECK_OK, "uid %d, kernel.perf_event_paranoid=%d: every event of its own processes",
		    (int)geteuid(), d->paranoid);
	else {
		c = add(d, "privileges", MS_CHECK_LESS, "uid %d, no CAP_PERFMON, kernel.perf_event_paranoid=%d: events "
			"of its own processes, excluding the kernel", (int)geteuid(), d->paranoid);
		snprintf(c->fix, sizeof(c->fix), "for the kernel's side too (the VMA tree's writes, faults taken in "
			 "kernel mode): as root, setcap cap_perfmon+ep on the mapscope binary");
	}
}

static void probe_tracefs(struct ms_doctor *d)
{
	struct ms_check *c;

	d->tracefs = ms_tracefs_dir();
	if (!d->tracefs) {
		d->tracefs_err = -ENOENT;
		c = add(d, "tracefs", MS_CHECK_NO, "not mounted, and this user may not mount it");
		snprintf(c->fix, sizeof(c->fix), "as root: mount -t tracefs nodev /sys/kernel/tracing");
		return;
	}
	d->tracefs_err = ms_tracefs_event_id(d->tracefs, "syscalls", "sys_exit_munmap", &d->munmap_id);
	if (!d->tracefs_err) {
		add(d, "tracefs", MS_CHECK_OK, "%s: the syscall tracepoints' ids and formats are readable", d->tracefs);
	} else if (d->tracefs_err == -EACCES || d->tracefs_err == -EPERM) {
		c = add(d, "tracefs", MS_CHECK_NO, "%s is not readable by uid %d: without it, no munmap, mremap or "
			"mprotect is recorded", d->tracefs, (int)geteuid());
		snprintf(c->fix, sizeof(c->fix), "as root: mapscope setup --group GROUP, with this user in GROUP "
			 "(it remounts tracefs readable for the group; mapscope setup --undo restores it)");
	} else {
		c = add(d, "tracefs", MS_CHECK_NO, "%s/events/syscalls: %s", d->tracefs, strerror(-d->tracefs_err));
		snprintf(c->fix, sizeof(c->fix), "a kernel built with CONFIG_FTRACE_SYSCALLS");
	}
}

/* Opens syscalls:sys_exit_munmap for ourselves as record would in this mode, and a user-mode page-fault event. */
static void probe_events(struct ms_doctor *d, bool full)
{
	struct perf_event_attr a = { .size = sizeof(a), .sample_period = 1, .disabled = 1, .exclude_hv = 1 };

	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_IP;
	a.exclude_kernel = !full;
	d->faults_err = ms_live_probe_open(&a);
	d->syscalls_err = d->tracefs_err;
	if (!d->tracefs_err) {
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = d->munmap_id;
		a.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_IP;
		d->syscalls_err = ms_live_probe_open(&a);
	}
}

static void probe_mode(struct ms_doctor *d)
{
	bool full = d->root || d->cap_perfmon || d->cap_sys_admin || d->paranoid <= -1;
	struct ms_check *c;

	probe_events(d, full);
	if (d->faults_err) {
		d->mode = MS_MODE_NONE;
		c = add(d, "page faults", MS_CHECK_NO, "a page-fault event for this task: %s", strerror(-d->faults_err));
		snprintf(c->fix, sizeof(c->fix), "as root: sysctl kernel.perf_event_paranoid=2 (now %d; 3 and above "
			 "refuse every user)", d->paranoid);
		return;
	}
	if (d->syscalls_err && !d->tracefs_err) {
		d->mode = MS_MODE_PERF;
		c = add(d, "syscall events", MS_CHECK_NO, "syscalls:sys_exit_munmap for this task: %s",
			strerror(-d->syscalls_err));
		snprintf(c->fix, sizeof(c->fix), "as root: setcap cap_perfmon+ep on the mapscope binary");
		return;
	}
	d->mode = d->tracefs_err ? MS_MODE_PERF : full ? MS_MODE_FULL : MS_MODE_USER;
	if (!d->tracefs_err)
		add(d, "syscall events", MS_CHECK_OK, "syscalls:* open for this user's processes%s",
		    full ? "" : " (user mode: excluding the kernel)");
}

static void probe_extras(struct ms_doctor *d)
{
	int scope = read_int("/proc/sys/kernel/yama/ptrace_scope", -1);
	int uffd = read_int("/proc/sys/vm/unprivileged_userfaultfd", -1);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES,
				     .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1 };
	int pmu = ms_live_probe_open(&a), damon = ms_damon_available(ms_damon_root());

	if (scope < 0)
		add(d, "ptrace", MS_CHECK_OK, "no Yama ptrace scope: record -p may attach to this user's processes");
	else if (scope == 0 || d->root || d->cap_sys_ptrace)
		add(d, "ptrace", MS_CHECK_OK, "kernel.yama.ptrace_scope=%d: record -p may attach", scope);
	else
		add(d, "ptrace", MS_CHECK_INFO, "kernel.yama.ptrace_scope=%d: record -p only on this user's children "
		    "or with CAP_SYS_PTRACE; record -- CMD is unaffected", scope);
	if (pmu)
		add(d, "hardware PMU", MS_CHECK_INFO, "none (cycles: %s): record -e mem-loads and dTLB-load-misses are "
		    "not available; record --referenced gives ongoing access without one", strerror(-pmu));
	else
		add(d, "hardware PMU", MS_CHECK_OK, "present: record -e mem-loads, dTLB-load-misses... where the CPU has them");
	if (damon == 0)
		add(d, "DAMON", MS_CHECK_OK, "available: record --damon makes its own kdamond");
	else if (damon == -EBUSY)
		add(d, "DAMON", MS_CHECK_INFO, "a kdamond that is not mapscope's exists: record --damon falls back to "
		    "--referenced");
	else
		add(d, "DAMON", MS_CHECK_INFO, "%s: record --damon falls back to --referenced",
		    damon == -ENOENT ? "no DAMON sysfs interface" : strerror(-damon));
	if (uffd >= 0)
		add(d, "userfaultfd", MS_CHECK_INFO, "vm.unprivileged_userfaultfd=%d: users may open userfaultfd %s", uffd,
		    uffd ? "for any fault" : "for user-mode faults only (UFFD_USER_MODE_ONLY)");
}

/*
 * record --prefetches: placing a uprobe is a write to tracefs's
 * uprobe_events. The kernel keeps that to root (or a user tracefs is
 * writable for with CAP_SYS_ADMIN), since a uprobe traps in every process
 * that maps the probed binary, whoever runs it.
 */
static void probe_uprobes(struct ms_doctor *d)
{
	char path[512];
	struct ms_check *c;

	snprintf(path, sizeof(path), "%s/uprobe_events", d->tracefs ? d->tracefs : "/sys/kernel/tracing");
	if (!access(path, W_OK)) {
		add(d, "uprobes", MS_CHECK_OK, "%s is writable: record --prefetches may place uprobes", path);
		return;
	}
	c = add(d, "uprobes", MS_CHECK_INFO, "%s: %s: record --prefetches records no prefetches", path,
		errno == ENOENT ? "no such file" : "not writable by this user");
	snprintf(c->fix, sizeof(c->fix), "%s", errno == ENOENT ? "a kernel built with CONFIG_UPROBE_EVENTS" :
		 "run record --prefetches as root (a uprobe traps in every process that maps its binary, so tracefs "
		 "keeps placing one to root; mapscope setup does not grant it)");
}

void ms_doctor_probe(struct ms_doctor *d)
{
	memset(d, 0, sizeof(*d));
	probe_rights(d);
	probe_tracefs(d);
	probe_mode(d);
	probe_extras(d);
	probe_uprobes(d);
}

const char *ms_record_mode_name(enum ms_record_mode m)
{
	static const char *const names[] = { "full", "user", "perf", "none" };

	return (unsigned int)m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

const char *ms_record_mode_loses(enum ms_record_mode m)
{
	switch (m) {
	case MS_MODE_FULL:
		return "nothing";
	case MS_MODE_USER:
		return "page faults taken in kernel mode (a read() or copy_to_user into fresh pages) and the VMA "
		       "tree's writes (splits the syscalls do not show are inferred by the kernel's rules)";
	case MS_MODE_PERF:
		return "every unmap, remap and protection change: samples after one may be charged to the wrong "
		       "mapping, as with perf record -d, and are marked uncertain";
	default:
		return "everything: nothing can be recorded";
	}
}

bool ms_doctor_tracefs_refused(const char *dir)
{
	uint64_t id;
	int err = ms_tracefs_event_id(dir, "syscalls", "sys_exit_munmap", &id);

	if (err != -EACCES && err != -EPERM)
		return false;
	ms_warn("tracefs (%s) is not readable by uid %d: user mode, recording what perf record -d can (maps, page "
		"faults), with no unmap, remap or protection change, so samples after one may be charged to the "
		"wrong mapping; as root, 'mapscope setup --group GROUP' makes tracefs readable for GROUP", dir,
		(int)geteuid());
	return true;
}

void ms_doctor_warn_user_mode(void)
{
	ms_warn("uid %d without CAP_PERFMON at kernel.perf_event_paranoid=%d: user mode, its own processes only; "
		"page faults taken in kernel mode and the VMA tree's writes are not seen (mapscope doctor says what "
		"would give them)", (int)geteuid(), read_int("/proc/sys/kernel/perf_event_paranoid", 2));
}
