/*
 * The only place that calls perf_event_open. Events are opened per task and
 * per CPU with inherit=1, so threads and children created later are
 * followed, and all events of one CPU share that CPU's ring buffer
 * (PERF_EVENT_IOC_SET_OUTPUT): one mmap and one poll fd per CPU.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <asm/perf_regs.h>

#include <mapscope/live.h>

#include "kernel/blocked.h"
#include "kernel/cpus.h"
#include "kernel/doctor.h"
#include "kernel/live.h"
#include "kernel/live_impl.h"
#include "kernel/procsynth.h"
#include "kernel/sysevents.h"
#include "kernel/tracefs.h"
#include "perfdata/evlist.h"
#include "util/buf.h"
#include "util/grow.h"
#include "util/log.h"

/*
 * What every record carries: IDENTIFIER (first in a sample, last in a
 * trailer) says its event, as perf needs it among several; no ID, CPU or
 * PERIOD (fixed), which nothing reads. A page-fault sample is then 56 bytes:
 * IDENTIFIER, IP, TID, TIME, ADDR and DATA_SRC.
 */
#define SAMPLE_ID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER)

#define DWARF_STACK_BYTES 8192

#if defined(__x86_64__)
#define USER_REGS_ALL (((1ULL << PERF_REG_X86_64_MAX) - 1) & ~((1ULL << PERF_REG_X86_DS) | \
			(1ULL << PERF_REG_X86_ES) | (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS)))
#elif defined(__aarch64__)
#define USER_REGS_ALL ((1ULL << PERF_REG_ARM64_MAX) - 1)
#else
#define USER_REGS_ALL 0ULL
#endif

#if defined(__x86_64__)
#define USER_SP_MASK (1ULL << PERF_REG_X86_SP)
#elif defined(__aarch64__)
#define USER_SP_MASK (1ULL << PERF_REG_ARM64_SP)
#else
#define USER_SP_MASK 0ULL
#endif

/* The user stack pointer, which names thread stacks: on syscall samples and the stack pointer's own event. */
static void with_sp(struct perf_event_attr *a)
{
	if (USER_SP_MASK && !(a->sample_type & PERF_SAMPLE_REGS_USER)) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = USER_SP_MASK;
	}
}

/* Fields every event shares. */
static void common_attr(struct perf_event_attr *a, const struct ms_live_opts *o)
{
	a->size = sizeof(*a);
	a->sample_type = SAMPLE_ID_BITS | PERF_SAMPLE_IP;
	if (o->flags & MS_LIVE_CALLCHAIN) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_kernel = 1;
	}
	if (o->flags & MS_LIVE_DWARF) {
		/* What a DWARF unwinder needs: every register and the stack above SP. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = USER_REGS_ALL;
		a->sample_stack_user = DWARF_STACK_BYTES;
	}
	a->sample_id_all = 1;
	if (o->flags & MS_LIVE_USER)
		a->exclude_kernel = a->exclude_hv = 1;
	/* As perf record sets it: perf then names the event "page-faults", not "page-faults:HG". */
	a->exclude_guest = 1;
	a->inherit = 1;
	a->disabled = 1;
	a->enable_on_exec = !!(o->flags & MS_LIVE_ENABLE_ON_EXEC);
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	if (o->flags & MS_LIVE_WAKEUP_EACH) {
		a->wakeup_events = 1;
	} else {
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)((size_t)o->mmap_pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	}
}

static void add_evsel(struct ms_live *l, const char *name, const char *tp, enum phase ph,
		      const struct perf_event_attr *a)
{
	struct ms_evsel *e = ms_evlist_add(&l->ev, a, sizeof(*a));

	if (!e || ms_evsel_set_name(e, name, strlen(name))) {
		l->oom = true;
		return;
	}
	snprintf(l->use[l->ev.n - 1].tp, sizeof(l->use[0].tp), "%s", tp);
	l->use[l->ev.n - 1].phase = ph;
	l->use[l->ev.n - 1].filter = NULL;
}

/* The first event carries the side-band records: maps, comm, fork, exit. */
static void add_fault_evsel(struct ms_live *l)
{
	struct perf_event_attr a = { 0 };

	common_attr(&a, &l->opts);
	a.type = PERF_TYPE_SOFTWARE;
	if (l->opts.fault_period) {
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
		a.sample_period = l->opts.fault_period;
		/* DATA_SRC too, as perf record -d has it: perf's --mem-mode needs it. */
		a.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
	} else {
		a.config = PERF_COUNT_SW_DUMMY;
		a.sample_period = 1;
		a.exclude_kernel = 1;
		a.sample_type |= PERF_SAMPLE_ADDR;   /* as on every event: perf script -F addr wants it */
	}
	a.mmap = a.mmap2 = a.mmap_data = 1;
	a.comm = a.comm_exec = 1;
	a.task = 1;
	/* perf's names: ":u" where the kernel's side is excluded. */
	add_evsel(l, !l->opts.fault_period ? "dummy:u" : a.exclude_kernel ? "page-faults:u" : "page-faults", "",
		  PHASE_FAULTS, &a);
}

/* A tracepoint's event: every hit, with its raw fields. */
static void tracepoint_attr(const struct ms_live *l, uint64_t id, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	common_attr(a, &l->opts);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = id;
	a->sample_period = 1;
	/*
	 * ADDR (0 here) as perf record -d sets it on every event:
	 * perf script -F addr refuses a file where one event lacks it.
	 */
	a->sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_ADDR;
	with_sp(a);
}

/*
 * The stack pointer's own event: each thread's user registers every
 * millisecond of its run time (task-clock), so that its stack is named
 * [stack:TID] though the page-fault samples no longer carry them. ADDR (0)
 * as every event has it.
 */
static void add_sp_evsel(struct ms_live *l)
{
	struct perf_event_attr a = { 0 };

	if (!USER_SP_MASK || !l->opts.fault_period || (l->opts.flags & MS_LIVE_DWARF))
		return;                      /* no faults to charge, or they carry every register */
	common_attr(&a, &l->opts);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.sample_type |= PERF_SAMPLE_ADDR;
	with_sp(&a);
	add_evsel(l, "task-clock", "", PHASE_FAULTS, &a);
}

/* What of the user stack a syscall's sample copies, beyond --call-graph dwarf's every event. */
static void syscall_stack_attr(const struct ms_live *l, const char *sc, bool enter, struct perf_event_attr *a)
{
	uint32_t bytes;

	if (ms_sysevent_wakes(sc, enter)) {
		a->watermark = 0;
		a->wakeup_events = 1;
	}
	if (l->opts.flags & MS_LIVE_DWARF)
		return;
	bytes = ms_sysevent_stack_bytes(sc, enter, l->opts.flags, USER_REGS_ALL != 0);
	if (!bytes)
		return;
	a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_stack_user = bytes;
	/* perf unwinds any sample with a stack: give it every register. */
	a->sample_regs_user = USER_REGS_ALL;
}

/*
 * damon:damon_aggregated, which fires in the kdamond's thread, not in the
 * tasks: opened for that thread alone (ms_live_add_kthread), counting from
 * its open, with its raw fields and nothing of user space.
 */
static int add_damon_evsel(struct ms_live *l, const char *dir)
{
	struct perf_event_attr a;
	uint64_t id;
	int err = ms_tracefs_event_id(dir, "damon", "damon_aggregated", &id);

	if (err) {
		ms_err("cannot read tracepoint 'damon:damon_aggregated' in '%s/events': %s%s", dir,
		       strerror(-err), err == -ENOENT ? ": the kernel needs CONFIG_DAMON_VADDR" : "");
		return err;
	}
	memset(&a, 0, sizeof(a));
	common_attr(&a, &l->opts);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.sample_type = SAMPLE_ID_BITS | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW;
	a.sample_regs_user = a.sample_stack_user = 0;
	a.exclude_callchain_kernel = 0;
	a.inherit = a.disabled = a.enable_on_exec = 0;
	add_evsel(l, "damon:damon_aggregated", "damon/damon_aggregated", PHASE_KTHREAD, &a);
	return l->oom ? -ENOMEM : 0;
}

/*
 * The hardware data-address events, with what every event has: user
 * accesses only (kernel addresses are set aside anyway), ADDR, DATA_SRC
 * and WEIGHT on each sample.
 */
static void add_hw_evsels(struct ms_live *l)
{
	const struct perf_event_attr *u;
	struct perf_event_attr a;
	size_t i;

	for (i = 0; i < l->opts.nr_hw_events && !l->oom; i++) {
		u = &l->opts.hw_events[i];
		memset(&a, 0, sizeof(a));
		common_attr(&a, &l->opts);
		a.type = u->type;
		a.config = u->config;
		a.config1 = u->config1;
		a.config2 = u->config2;
		a.precise_ip = u->precise_ip;
		a.exclude_user = u->exclude_user;
		a.exclude_kernel = 1;
		a.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
		a.sample_period = u->sample_period;
		if (!a.sample_period) {
			a.freq = 1;
			a.sample_freq = 4000;
		}
		add_evsel(l, l->opts.hw_names[i], "", PHASE_FAULTS, &a);
	}
}

/*
 * Which new processes share their parent's address space (task_newtask's
 * clone flags), and which file an unlink took a name from (the ctime it
 * sets: multigrain filesystems swap it in, or find it set already).
 */
static const char *const task_tps[][2] = {
	{ "task", "task_newtask" }, { "timestamp", "inode_set_ctime_to_ts" },
	{ "timestamp", "ctime_ns_xchg" }, { "timestamp", "ctime_xchg_skip" },
};
#define NR_TASK_TPS (sizeof(task_tps) / sizeof(task_tps[0]))

/* Write locks only, taken or let go: their samples name the mm a VMA tree write is in. */
static const char *const mmlock_tps[][2] = {
	{ "mmap_lock_acquire_returned", "write == 1 && success == 1" }, { "mmap_lock_released", "write == 1" },
};
#define NR_MMLOCK_TPS (sizeof(mmlock_tps) / sizeof(mmlock_tps[0]))

/*
 * Tracepoint sys:name, where the kernel has it, for the whole run, with
 * filter where not NULL: names[*n] gets it. 0 or -ENOMEM.
 */
static int add_optional_tp(struct ms_live *l, const char *dir, const char *sys, const char *name,
			   const char *filter, const char **names, size_t *n)
{
	struct perf_event_attr a;
	char full[128], path[128];
	uint64_t id;

	if (ms_tracefs_event_id(dir, sys, name, &id)) {
		ms_debug("no tracepoint '%s:%s' on this kernel: recording without it", sys, name);
		return 0;
	}
	tracepoint_attr(l, id, &a);
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	snprintf(path, sizeof(path), "%s/%s", sys, name);
	add_evsel(l, full, path, PHASE_ENTER, &a);
	if (l->oom)
		return -ENOMEM;
	l->use[l->ev.n - 1].filter = filter;
	names[(*n)++] = l->use[l->ev.n - 1].tp;
	return 0;
}

static int add_tracepoints(struct ms_live *l, const char *dir)
{
	const char *names[2 * 32 + 2 + NR_MMLOCK_TPS + NR_TASK_TPS];   /* 32: room for ms_sysevents, which is shorter */
	struct perf_event_attr a;
	char tp[64], full[128], path[128];
	size_t i, k, n = 0;
	uint64_t id;
	int err;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < ms_nr_sysevents && i < 32; i++) {
			snprintf(tp, sizeof(tp), "sys_%s_%s", k ? "exit" : "enter", ms_sysevents[i]);
			err = ms_tracefs_event_id(dir, "syscalls", tp, &id);
			if (err == -ENOENT && i >= MS_SYSEVENTS_FIRST_OPTIONAL) {
				ms_debug("no tracepoint 'syscalls:%s' on this kernel: recording without it", tp);
				continue;
			}
			if (err) {
				ms_err("cannot read tracepoint 'syscalls:%s' in '%s/events': %s%s",
				       tp, dir, strerror(-err), err == -EACCES || err == -EPERM ?
				       ": tracefs is not readable by this user; as root, 'mapscope setup --group "
				       "GROUP' makes it readable for GROUP ('mapscope doctor' says more)" :
				       err == -ENOENT ? ": the kernel needs CONFIG_FTRACE_SYSCALLS" : "");
				return err;
			}
			tracepoint_attr(l, id, &a);
			syscall_stack_attr(l, ms_sysevents[i], k == 0, &a);
			snprintf(full, sizeof(full), "syscalls:%s", tp);
			snprintf(path, sizeof(path), "syscalls/%s", tp);
			add_evsel(l, full, path, k ? PHASE_EXIT : PHASE_ENTER, &a);
			if (l->oom)
				return -ENOMEM;
			l->use[l->ev.n - 1].filter = ms_sysevent_filter(ms_sysevents[i], k == 0);
			names[n++] = l->use[l->ev.n - 1].tp;
		}
	}
	/*
	 * The VMA tree's writes, where the kernel has the tracepoint (maple_tree,
	 * 6.1 on): every VMA's exact range as the kernel stores it, splits and
	 * merges that no other record shows included.
	 */
	k = n;
	if (!(l->opts.flags & (MS_LIVE_NO_VMA_TREE | MS_LIVE_USER)) &&
	    (err = add_optional_tp(l, dir, "maple_tree", "ma_write", NULL, names, &n)))
		return err;
	/* Whose tree a write is in, where there are writes: the mm whose write lock the writer holds. */
	for (i = 0; i < NR_MMLOCK_TPS && n > k; i++)
		if ((err = add_optional_tp(l, dir, "mmap_lock", mmlock_tps[i][0], mmlock_tps[i][1], names, &n)))
			return err;
	/* Like it, only a syscall's tracepoint is open to an ordinary user. */
	for (i = 0; i < NR_TASK_TPS && !(l->opts.flags & MS_LIVE_USER); i++)
		if ((err = add_optional_tp(l, dir, task_tps[i][0], task_tps[i][1], NULL, names, &n)))
			return err;
	if ((l->opts.flags & MS_LIVE_DAMON) && (err = add_damon_evsel(l, dir)))
		return err;
	if (l->opts.flags & MS_LIVE_DAMON)
		names[n++] = l->use[l->ev.n - 1].tp;
	return ms_tracefs_tracing_data(dir, names, n, &l->tracing_data);
}

int ms_live_add_tracepoints(struct ms_live *l, const char *const *tps, size_t n)
{
	const char *dir = ms_tracefs_dir(), *slash, **names;
	struct perf_event_attr a;
	void *grown;
	char sys[64], full[192];
	size_t i, k = 0;
	uint64_t id;
	int err;

	if (!dir || l->nr_fds)
		return dir ? -EBUSY : -errno;
	if (!(grown = realloc(l->use, (l->ev.n + n) * sizeof(*l->use))))
		return -ENOMEM;
	l->use = grown;
	for (i = 0; i < n; i++) {
		slash = strchr(tps[i], '/');
		if (!slash || (size_t)(slash - tps[i]) >= sizeof(sys) || strlen(tps[i]) >= sizeof(l->use->tp))
			return -EINVAL;
		snprintf(sys, sizeof(sys), "%.*s", (int)(slash - tps[i]), tps[i]);
		if ((err = ms_tracefs_event_id(dir, sys, slash + 1, &id)))
			return err;
		tracepoint_attr(l, id, &a);
		snprintf(full, sizeof(full), "%s:%s", sys, slash + 1);
		add_evsel(l, full, tps[i], PHASE_ENTER, &a);
	}
	/* The tracing data again, of every tracepoint in the events' order, as add_tracepoints() made it. */
	if (l->oom || !(names = malloc(l->ev.n * sizeof(*names))))
		return -ENOMEM;
	for (i = 0; i < l->ev.n; i++)
		if (l->use[i].tp[0])
			names[k++] = l->use[i].tp;
	ms_buf_release(&l->tracing_data);
	ms_buf_init(&l->tracing_data);
	err = ms_tracefs_tracing_data(dir, names, k, &l->tracing_data);
	free(names);
	return err;
}

static int init_rings(struct ms_live *l)
{
	int cpus[4096], n = ms_cpus_online(cpus, 4096), i;

	if (n <= 0)
		return n ? n : -EINVAL;
	l->rings = calloc((size_t)n, sizeof(*l->rings));
	if (!l->rings)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		l->rings[i].fd = -1;
		l->rings[i].cpu = cpus[i];
	}
	l->nr_cpus = n;
	return 0;
}

/* ms_live_new() chose user mode itself, and is yet to say so. */
#define MS_LIVE_CHOSEN_USER (1u << 31)

/* Whether to record without the tracepoints (MS_LIVE_PERF_FALLBACK), tracefs being unreadable; says so. */
static bool perf_fallback(struct ms_live *l, const char *dir)
{
	if ((l->opts.flags & (MS_LIVE_USER | MS_LIVE_PERF_FALLBACK)) != (MS_LIVE_USER | MS_LIVE_PERF_FALLBACK) ||
	    !ms_doctor_tracefs_refused(dir))
		return false;
	l->opts.flags |= MS_LIVE_NO_SYSCALLS;
	return true;
}

MS_EXPORT unsigned int ms_live_flags(const struct ms_live *l)
{
	return l->opts.flags;
}

MS_EXPORT struct ms_live *ms_live_new(const struct ms_live_opts *opts)
{
	size_t nsys = ms_nr_sysevents;
	struct ms_live *l;
	const char *dir;
	int err;

	if (opts->mmap_pages & (opts->mmap_pages - 1)) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->opts = *opts;
	if (!(l->opts.flags & MS_LIVE_USER) && !ms_doctor_privileged())
		l->opts.flags |= MS_LIVE_USER | MS_LIVE_CHOSEN_USER;
	if (!l->opts.mmap_pages)
		l->opts.mmap_pages = MS_LIVE_DEFAULT_PAGES;
	ms_buf_init(&l->tracing_data);
	l->use = calloc(5 + NR_TASK_TPS + NR_MMLOCK_TPS + 2 * nsys + opts->nr_hw_events, sizeof(*l->use));
	if (!l->use) {
		err = -ENOMEM;
		goto fail;
	}
	err = init_rings(l);
	if (err) {
		ms_err("cannot read the online CPUs: %s", strerror(-err));
		goto fail;
	}
	dir = ms_tracefs_dir();
	if (!dir) {
		err = -errno;
		ms_err("cannot find or mount tracefs: %s: mount it as root with "
		       "'mount -t tracefs nodev /sys/kernel/tracing'", strerror(errno));
		goto fail;
	}
	add_fault_evsel(l);
	add_sp_evsel(l);
	add_hw_evsels(l);
	err = l->oom ? -ENOMEM : perf_fallback(l, dir) ? 0 : add_tracepoints(l, dir);
	if (err)
		goto fail;
	if ((l->opts.flags & (MS_LIVE_CHOSEN_USER | MS_LIVE_NO_SYSCALLS)) == MS_LIVE_CHOSEN_USER)
		ms_doctor_warn_user_mode();
	l->opts.flags &= ~MS_LIVE_CHOSEN_USER;
	return l;
fail:
	ms_live_free(l);
	errno = -err;
	return NULL;
}

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int ms_live_probe_open(struct perf_event_attr *a)
{
	int fd = perf_event_open(a, 0, -1);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int map_ring(struct ms_live *l, struct ring *r, int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (1 + (size_t)l->opts.mmap_pages) * page;
	void *base;

	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	r->fd = fd;
	r->pg = base;
	r->data = (unsigned char *)base + page;
	r->size = (size_t)l->opts.mmap_pages * page;
	return 0;
}

static int push_fd(struct ms_live *l, int fd, unsigned int evsel)
{
	uint64_t id;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	if (MS_GROW(l->fds, l->nr_fds + 1, l->cap_fds, 64, SIZE_MAX, false))
		return -ENOMEM;
	if (ms_evsel_add_id(&l->ev, l->ev.v[evsel], id))
		return -ENOMEM;
	l->fds[l->nr_fds++] = (struct efd){ fd, evsel };
	return 0;
}

static int open_one(struct ms_live *l, pid_t tid, struct ring *r, unsigned int evsel)
{
	struct ms_evsel *e = l->ev.v[evsel];
	int fd, err;

	fd = perf_event_open(&e->attr, tid, r->cpu);
	if (fd < 0) {
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			ms_err("cannot open event '%s' for task %d: %s%s: 'mapscope doctor' says what this user "
			       "may record here, and the fix", e->name, (int)tid, strerror(errno),
			       l->opts.flags & MS_LIVE_USER ? " (user mode: only this user's own processes)" : "");
		else if (err == -ESRCH)      /* a thread that ended meanwhile: the walk passes it over */
			ms_debug("task %d ended while its events were opened", (int)tid);
		else
			ms_err("cannot open event '%s' for task %d on CPU %d: %s",
			       e->name, (int)tid, r->cpu, strerror(errno));
		return err;
	}
	/* Only the events opened here have filters: those inherited use their parent's. */
	if (l->use[evsel].filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, l->use[evsel].filter) < 0) {
		err = -errno;
		ms_err("cannot set the filter '%s' of event '%s': %s", l->use[evsel].filter, e->name, strerror(errno));
		close(fd);
		return err;
	}
	if (r->fd < 0)
		err = map_ring(l, r, fd);
	else
		err = ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0 ? -errno : 0;
	if (!err)
		err = push_fd(l, fd, evsel);
	if (err) {
		ms_err("cannot set up the ring buffer of event '%s' on CPU %d: %s",
		       e->name, r->cpu, strerror(-err));
		if (r->fd != fd)
			close(fd);
	}
	return err;
}

MS_EXPORT int ms_live_add_task(struct ms_live *l, pid_t tid)
{
	unsigned int e;
	int c, err;

	for (c = 0; c < l->nr_cpus; c++)
		for (e = 0; e < l->ev.n; e++)
			if (l->use[e].phase != PHASE_KTHREAD && (err = open_one(l, tid, &l->rings[c], e)))
				return err;
	return 0;
}

MS_EXPORT int ms_live_add_kthread(struct ms_live *l, pid_t tid)
{
	unsigned int e;
	int c, err;

	for (c = 0; c < l->nr_cpus; c++)
		for (e = 0; e < l->ev.n; e++)
			if (l->use[e].phase == PHASE_KTHREAD && (err = open_one(l, tid, &l->rings[c], e)))
				return err;
	return 0;
}

static int set_enabled(struct ms_live *l, unsigned long req, enum phase ph)
{
	size_t i;

	for (i = 0; i < l->nr_fds; i++)
		if (l->use[l->fds[i].evsel].phase == ph && ioctl(l->fds[i].fd, req, 0) < 0)
			return -errno;
	return 0;
}

int ms_live_evsel_enable(struct ms_live *l, size_t i, bool on)
{
	size_t k;

	for (k = 0; k < l->nr_fds; k++)
		if (l->fds[k].evsel == i && ioctl(l->fds[k].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			return -errno;
	return 0;
}

MS_EXPORT int ms_live_enable(struct ms_live *l)
{
	int err;

	/* Exits before entries: an entry is never recorded without its exit. */
	if ((err = set_enabled(l, PERF_EVENT_IOC_ENABLE, PHASE_EXIT)) ||
	    (err = set_enabled(l, PERF_EVENT_IOC_ENABLE, PHASE_ENTER)))
		return err;
	return set_enabled(l, PERF_EVENT_IOC_ENABLE, PHASE_FAULTS);
}

MS_EXPORT int ms_live_disable(struct ms_live *l)
{
	int err;

	if ((err = set_enabled(l, PERF_EVENT_IOC_DISABLE, PHASE_KTHREAD)) ||
	    (err = set_enabled(l, PERF_EVENT_IOC_DISABLE, PHASE_FAULTS)) ||
	    (err = set_enabled(l, PERF_EVENT_IOC_DISABLE, PHASE_ENTER)))
		return err;
	return set_enabled(l, PERF_EVENT_IOC_DISABLE, PHASE_EXIT);
}

MS_EXPORT int ms_live_nr_fds(const struct ms_live *l)
{
	int c, n = 0;

	for (c = 0; c < l->nr_cpus; c++)
		n += l->rings[c].fd >= 0;
	return n;
}

MS_EXPORT int ms_live_fd(const struct ms_live *l, int i)
{
	int c;

	for (c = 0; c < l->nr_cpus; c++)
		if (l->rings[c].fd >= 0 && i-- == 0)
			return l->rings[c].fd;
	return -1;
}

const struct perf_event_mmap_page *ms_live_ring_page(const struct ms_live *l, int i)
{
	int c;

	for (c = 0; c < l->nr_cpus; c++)
		if (l->rings[c].fd >= 0 && i-- == 0)
			return l->rings[c].pg;
	return NULL;
}

size_t ms_live_ring_size(const struct ms_live *l)
{
	return (size_t)l->opts.mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
}

static long drain_ring(struct ms_live *l, struct ring *r, ms_live_fn fn, void *ctx)
{
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pg->data_tail;
	size_t mask = r->size - 1, off, first;
	const struct perf_event_header *h;
	long n = 0;
	int ret = 0;

	while (tail < head) {
		off = tail & mask;
		h = (const void *)(r->data + off);
		if (off + sizeof(*h) > r->size || off + h->size > r->size) {
			/* The record wraps: copy its two halves into one piece. */
			first = r->size - off;
			memcpy(l->scratch, r->data + off, first);
			if (first < sizeof(*h))
				memcpy(l->scratch + first, r->data, sizeof(*h) - first);
			h = (const void *)l->scratch;
			if (h->size > first)
				memcpy(l->scratch + first, r->data, h->size - first);
		}
		if (h->size < sizeof(*h) || h->size > head - tail)
			break;                   /* cannot happen with a sane kernel */
		ret = fn(h, ctx);
		tail += h->size;
		n++;
		if (ret)
			break;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	return ret ? ret : n;
}

MS_EXPORT long ms_live_drain(struct ms_live *l, ms_live_fn fn, void *ctx)
{
	long n = 0, got;
	int c;

	for (c = 0; c < l->nr_cpus; c++) {
		if (l->rings[c].fd < 0)
			continue;
		got = drain_ring(l, &l->rings[c], fn, ctx);
		if (got < 0)
			return got;
		n += got;
	}
	return n;
}

/* The records of what tgid held before we came: one walk of /proc, shared with record and watch. */
MS_EXPORT int ms_live_synthesize(struct ms_live *l, pid_t tgid, uint64_t time,
				 ms_live_fn fn, void *ctx)
{
	struct ms_sample_id sid = {
		.pid = (uint32_t)tgid, .tid = (uint32_t)tgid, .time = time,
		.id = l->ev.n && l->ev.v[0]->nr_ids ? l->ev.v[0]->ids[0] : 0,
		/* The trailer as the first event lays it out: the records are charged to it. */
		.sample_type = l->ev.n ? l->ev.v[0]->attr.sample_type : 0,
	};
	/* With each thread's COMM, the call it is blocked in: an exit after the maps' read pairs with it. */
	struct ms_blocked_to blocked = { l, tgid, time, fn, ctx };

	sid.identifier = sid.id;
	return ms_proc_synthesize("/proc", tgid, &sid, ms_blocked_task, &blocked, fn, ctx);
}

MS_EXPORT size_t ms_live_nr_evsels(const struct ms_live *l)
{
	return l->ev.n;
}

MS_EXPORT const struct perf_event_attr *ms_live_evsel_attr(const struct ms_live *l, size_t i)
{
	return i < l->ev.n ? &l->ev.v[i]->attr : NULL;
}

MS_EXPORT const char *ms_live_evsel_name(const struct ms_live *l, size_t i)
{
	return i < l->ev.n ? l->ev.v[i]->name : NULL;
}

MS_EXPORT const uint64_t *ms_live_evsel_ids(const struct ms_live *l, size_t i, size_t *nr)
{
	*nr = i < l->ev.n ? l->ev.v[i]->nr_ids : 0;
	return i < l->ev.n ? l->ev.v[i]->ids : NULL;
}

const struct ms_evlist *ms_live_evlist(const struct ms_live *l)
{
	return &l->ev;
}

MS_EXPORT void ms_live_tracing_data(const struct ms_live *l, const void **data, size_t *len)
{
	*data = l->tracing_data.data;
	*len = l->tracing_data.len;
}

MS_EXPORT void ms_live_free(struct ms_live *l)
{
	size_t i, page;
	int c;

	if (!l)
		return;
	page = (size_t)sysconf(_SC_PAGESIZE);
	for (c = 0; c < l->nr_cpus; c++)
		if (l->rings[c].pg)
			munmap(l->rings[c].pg, page + l->rings[c].size);
	for (i = 0; i < l->nr_fds; i++)
		close(l->fds[i].fd);
	ms_evlist_release(&l->ev);
	free(l->use);
	free(l->rings);
	free(l->fds);
	ms_buf_release(&l->tracing_data);
	ms_ringmerge_free(l->merge);
	free(l);
}
