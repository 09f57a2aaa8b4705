/*
 * ms_record: the live source plus the perf.data writer. Every record the
 * rings hand out goes to the file through write_record(), which adds what
 * the kernel writes no record of (session/rewrite.h) and keeps the state
 * that needs: the exec windows and the binaries seen, per recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mapscope/live.h>
#include <mapscope/pdwriter.h>
#include <mapscope/record.h>
#include <mapscope/symbols.h>

#include "kernel/damon.h"
#include "kernel/hwevent.h"
#include "kernel/live.h"
#include "kernel/procsynth.h"
#include "kernel/refsample.h"
#include "kernel/sysctl.h"
#include "kernel/ringmerge.h"
#include "kernel/tracefs.h"
#include "kernel/ustring.h"
#include "perfdata/format.h"
#include "session/execwin.h"
#include "session/prefetches.h"
#include "session/rewrite.h"
#include "stream/sample.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/log.h"

/* The entries whose strings record reads and writes after them (kernel/ustring.h). */
enum { US_PRCTL, US_RENAME, US_RENAMEAT, US_RENAMEAT2, US_NR };
static const char *const ustring_events[US_NR] = {
	"syscalls:sys_enter_prctl", "syscalls:sys_enter_rename", "syscalls:sys_enter_renameat",
	"syscalls:sys_enter_renameat2",
};

/* The largest MMAP2 rewritten: a path of PATH_MAX and the largest trailer. */
#define MMAP2_COPY_SIZE (sizeof(struct perf_record_mmap2) + 4096 + 64)

struct ms_record {
	struct ms_record_opts opts;
	struct ms_live *live;
	struct ms_pdwriter *writer;
	struct ms_tidset attached;   /* threads whose events are open, over every -p process */
	struct ms_execwin execwin;
	struct ms_binaries binaries;
	size_t vsyscall_trailer;     /* 0: no [vsyscall] to write */
	struct ms_refsampler *refs;  /* record --referenced, or NULL */
	uint16_t ref_tp;             /* its tracepoint's id */
	struct ms_buf tracing;       /* with --referenced: the live tracepoints' formats and its own */
	struct ms_damon *damon;      /* our kdamond, or NULL */
	pid_t *damon_pids;           /* its targets, by target_id */
	size_t nr_damon_pids;
	int damon_evsel;             /* damon:damon_aggregated's index, or -1 */
	struct perf_event_attr damon_attr;   /* as the file has it: the intervals in config1, config2 */
	struct ms_prefetches *pf;    /* record --prefetches, or NULL */
	int us_evsel[US_NR];         /* those entries' event indexes, -1 where not recorded */
	uint16_t us_tp;              /* mapscope:user_string's tracepoint id, 0 where none is written */
	struct ms_buf us_tracing;    /* the tracing data with its format */
	uint16_t sc_tp;              /* mapscope:sysctl's tracepoint id, 0 where none is written */
	uint64_t mmap_min_addr;      /* the machine's vm.mmap_min_addr, written as mapscope:sysctl */
	uint64_t zero_page;          /* and MS_FACT_READ_ZERO_PAGE, where known (has_zero_page) */
	bool has_zero_page;
	struct ms_buf sc_tracing;    /* the tracing data with its format */
	bool closed;
	unsigned char us_rec[MS_USTRING_RECORD_MAX] __attribute__((aligned(8)));
	union {                      /* an MMAP2 of the ring's, copied to be changed */
		struct perf_record_mmap2 m;
		unsigned char bytes[MMAP2_COPY_SIZE];
	} copy;
};

static bool tracepoint_id_taken(const struct ms_live *l, uint16_t id, const uint16_t *taken, size_t nr_taken)
{
	const struct perf_event_attr *a;
	size_t i;

	for (i = 0; i < nr_taken; i++)
		if (taken[i] == id)
			return true;
	for (i = 0; i < ms_live_nr_evsels(l); i++)
		if ((a = ms_live_evsel_attr(l, i))->type == PERF_TYPE_TRACEPOINT && a->config == id)
			return true;
	return false;
}

/*
 * The id of one of mapscope's own tracepoints: the highest a tracepoint
 * can have (common_type is 16 bits) that no recorded tracepoint has, nor
 * taken[0, nr_taken) (ours given before), so that perf finds its format
 * by it.
 */
static uint16_t free_tracepoint_id(const struct ms_live *l, const uint16_t *taken, size_t nr_taken)
{
	uint16_t id = UINT16_MAX;

	while (tracepoint_id_taken(l, id, taken, nr_taken))
		id--;
	return id;
}

/* record --referenced: the sampler, which follows what ms_record follows. 0 or -ENOMEM. */
static int referenced_new(struct ms_record *r)
{
	if (!r->opts.referenced_ms)
		return 0;
	r->ref_tp = free_tracepoint_id(r->live, NULL, 0);
	r->refs = ms_refsampler_new("/proc", (uint64_t)r->opts.referenced_ms * 1000000ULL, r->ref_tp);
	return r->refs ? 0 : -ENOMEM;
}

/* A process to sample with --referenced, from now on. */
static void referenced_follow(struct ms_record *r, pid_t tgid)
{
	int err;

	if (r->refs && (err = ms_refsampler_add(r->refs, tgid, ms_monotonic_ns())) && err != -ESRCH && err != -ENOENT)
		ms_warn("cannot clear the accessed bits of process %d: %s: its accesses are not sampled",
			(int)tgid, strerror(-err));
}

/* A new process joins the sampled ones, one that exited leaves them. */
static void referenced_task(struct ms_record *r, const struct perf_event_header *h)
{
	const struct perf_record_fork *f = (const void *)h;

	if (!r->refs || (h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT) ||
	    !perf_record_contains(f, ptid))
		return;
	if (h->type == PERF_RECORD_FORK && f->pid != f->ppid)
		referenced_follow(r, (pid_t)f->pid);
	else if (h->type == PERF_RECORD_EXIT && f->pid == f->tid)
		ms_refsampler_remove(r->refs, (pid_t)f->pid);
}

/* record --prefetches: its uprobes and their event (session/prefetches.h). 0 or a negative errno. */
static int prefetch_setup(struct ms_record *r)
{
	if (!r->opts.nr_prefetch_paths && !r->opts.prefetch_follow)
		return 0;
	return (r->pf = ms_prefetches_new(&r->opts, r->live)) ? 0 : -errno;
}

MS_EXPORT int ms_record_prefetch_sites(const struct ms_record *r, size_t i, size_t *found, size_t *probed,
				       size_t *unsupported)
{
	const char *path;

	if (!r->pf || i >= r->opts.nr_prefetch_paths)
		return -EINVAL;
	return ms_prefetches_binary(r->pf, i, &path, found, probed, unsupported);
}

MS_EXPORT struct ms_record *ms_record_new(const struct ms_record_opts *opts)
{
	struct ms_live_opts lo = { .fault_period = opts->fault_period, .mmap_pages = opts->mmap_pages };
	struct ms_record *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->opts = *opts;
	ms_tidset_init(&r->attached);
	ms_execwin_init(&r->execwin);
	ms_binaries_init(&r->binaries);
	r->damon_evsel = -1;
	lo.hw_events = opts->hw_events;
	lo.hw_names = opts->hw_names;
	lo.nr_hw_events = opts->nr_hw_events;
	lo.flags = (opts->callchain ? MS_LIVE_CALLCHAIN : 0) | (opts->dwarf ? MS_LIVE_DWARF : 0) |
		   (opts->damon ? MS_LIVE_DAMON : 0) |
		   (opts->no_vma_tree ? MS_LIVE_NO_VMA_TREE : 0) |
		   (opts->no_alloc_stacks ? 0 : MS_LIVE_ALLOC_STACKS) |
		   (opts->enable_on_exec ? MS_LIVE_ENABLE_ON_EXEC : 0) | MS_LIVE_PERF_FALLBACK;
	ms_buf_init(&r->tracing);
	ms_buf_init(&r->us_tracing);
	ms_buf_init(&r->sc_tracing);
	r->live = ms_live_new(&lo);
	if (!r->live || (errno = -referenced_new(r)) || (errno = -prefetch_setup(r))) {
		err = errno;
		ms_record_free(r);
		errno = err;
		return NULL;
	}
	return r;
}

MS_EXPORT int ms_record_add_task(struct ms_record *r, pid_t tid)
{
	int err = ms_live_add_task(r->live, tid);

	if (!err)
		referenced_follow(r, tid);   /* a command we launch: its pid is its process's */
	return err;
}

MS_EXPORT int ms_record_attach(struct ms_record *r, pid_t tgid)
{
	int err = ms_proc_attach(r->live, tgid, &r->attached);

	if (!err)
		referenced_follow(r, tgid);
	return err;
}

/*
 * A binary's build-id is read when it is first mapped (a binary rebuilt
 * later is still told apart) and goes to the writer: the BUILD_ID section
 * of a file, or a record in a pipe, ahead of the map, so that a report of
 * the pipe knows it in time.
 */
static void note_binary(struct ms_record *r, const struct perf_event_header *h)
{
	unsigned char id[64];
	const char *name;
	int n;

	if (h->type != PERF_RECORD_MMAP2 || ms_binaries_note(&r->binaries, (const void *)h, &name) <= 0)
		return;
	n = ms_elf_build_id(name, id, sizeof(id));
	if (n > 0)
		ms_pdwriter_add_build_id(r->writer, name, id, (size_t)n);
}

/* An MMAP2 in an exec's window, cut as the loader cut it: in r's copy, the ring's own not being ours. */
static const struct perf_event_header *trim_exec_map(struct ms_record *r, const struct perf_event_header *h)
{
	const struct perf_record_mmap2 *m = (const void *)h;

	if (h->type != PERF_RECORD_MMAP2 || !ms_execwin_any(&r->execwin) || h->size > sizeof(r->copy) ||
	    !perf_record_contains(m, tid) || !ms_execwin_open(&r->execwin, m->pid))
		return h;
	memcpy(&r->copy, h, h->size);
	ms_trim_exec_map(&r->copy.m);
	return &r->copy.m.header;
}

/*
 * [vsyscall]: every x86-64 process has it at a fixed address where the
 * kernel offers it, but the kernel writes no record of it. /proc shows it,
 * and so does an attach (read from /proc); after each exec it is written
 * here as an MMAP2 of the exec's time, with the COMM's own trailer, so
 * that maps shows it in both modes.
 */
static int write_vsyscall(struct ms_record *r, const struct perf_event_header *comm)
{
	unsigned char rec[sizeof(struct perf_record_mmap2) + 16 + 64] __attribute__((aligned(8)));

	if (!ms_vsyscall_record((const void *)comm, r->vsyscall_trailer, rec, sizeof(rec)))
		return 0;
	return ms_pdwriter_write(r->writer, (const void *)rec);
}

/*
 * A damon:damon_aggregated sample happens in the kdamond; it is written as
 * its target's (target_id: the order the targets were given), so that the
 * file needs no table of them and perf script shows whose it is.
 */
static const struct perf_event_header *damon_as_target(struct ms_record *r, const struct perf_event_header *h)
{
	const struct ms_damon_sample *ds = (const void *)h;
	const uint64_t *ids;
	size_t nr, i;

	if (r->damon_evsel < 0 || h->type != PERF_RECORD_SAMPLE || h->size < MS_DAMON_SAMPLE_MIN)
		return h;
	ids = ms_live_evsel_ids(r->live, (size_t)r->damon_evsel, &nr);
	for (i = 0; i < nr && ids[i] != ds->identifier; i++)
		;
	if (i == nr)
		return h;
	return ms_damon_sample_as_target(h, r->damon_pids, r->nr_damon_pids, &r->copy, sizeof(r->copy));
}

/* The event index of a sample of one of the entries whose strings are read: its US_*, or -1. */
static int ustring_source(const struct ms_record *r, const struct perf_event_header *h)
{
	const uint64_t *ids;
	uint64_t id;
	size_t nr, i;
	int k;

	if (!r->us_tp || h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h) + 8)
		return -1;
	memcpy(&id, h + 1, 8);                  /* IDENTIFIER: first in every sample of ours */
	for (k = 0; k < US_NR; k++) {
		if (r->us_evsel[k] < 0)
			continue;
		ids = ms_live_evsel_ids(r->live, (size_t)r->us_evsel[k], &nr);
		for (i = 0; i < nr; i++)
			if (ids[i] == id)
				return k;
	}
	return -1;
}

/* String arg (1 or 2) at addr, a path (relative to dirfd) or not, written after the entry smp. */
static int ustring_put(struct ms_record *r, const struct ms_sample *smp, uint32_t arg, uint64_t addr, int dirfd,
		       bool path)
{
	char str[4096], abs[4096];
	size_t n;

	if (ms_ustring_read((pid_t)smp->pid, addr, smp->stack, smp->sp, smp->stack ? smp->stack_size : 0,
			    str, sizeof(str)) ||
	    (path && ms_ustring_path("/proc", (pid_t)smp->pid, (pid_t)smp->tid, dirfd, str, abs, sizeof(abs)))) {
		ms_debug("cannot read string %u of task %u's syscall at %llu: its change is not named",
			 arg, smp->tid, (unsigned long long)smp->time);
		return 0;
	}
	n = ms_ustring_encode(r->us_tp, smp->pid, smp->tid, smp->time, arg, path ? abs : str, r->us_rec,
			      sizeof(r->us_rec));
	return n ? ms_pdwriter_write(r->writer, (const void *)r->us_rec) : 0;
}

/*
 * A syscall tracepoint's raw data holds its arguments 8 bytes each from
 * offset 16 (after the common fields and the syscall's number): prctl's
 * option, arg2, ..., arg5; rename's oldname, newname; renameat's and
 * renameat2's olddfd, oldname, newdfd, newname.
 */
static int write_ustrings(struct ms_record *r, const struct perf_event_header *h)
{
	static const uint32_t nr_args[US_NR] = { 5, 2, 4, 5 };
	int k = ustring_source(r, h), err;
	struct ms_sample smp;
	uint64_t a[5] = { 0 };

	if (k < 0 || ms_sample_parse(ms_live_evsel_attr(r->live, (size_t)r->us_evsel[k]), h, &smp) ||
	    smp.raw_size < 16 + 8 * nr_args[k])
		return 0;
	memcpy(a, smp.raw + 16, 8 * nr_args[k]);
	if (k == US_PRCTL)      /* PR_SET_VMA, PR_SET_VMA_ANON_NAME: the name (at most 80 bytes, the NUL's) */
		return a[0] == 0x53564d41 && a[1] == 0 && a[4] ? ustring_put(r, &smp, 1, a[4], 0, false) : 0;
	if (k == US_RENAME)
		return (err = ustring_put(r, &smp, 1, a[0], AT_FDCWD, true)) ? err :
		       ustring_put(r, &smp, 2, a[1], AT_FDCWD, true);
	return (err = ustring_put(r, &smp, 1, a[1], (int)a[0], true)) ? err :
	       ustring_put(r, &smp, 2, a[3], (int)a[2], true);
}

static int write_record(const struct perf_event_header *h, void *arg)
{
	struct ms_record *r = arg;
	int err;

	if (ms_execwin_track(&r->execwin, h))
		ms_debug("no memory for an exec's window: its first map is written untrimmed");
	h = damon_as_target(r, h);
	h = trim_exec_map(r, h);
	note_binary(r, h);
	referenced_task(r, h);
	ms_prefetches_record(r->pf, h);
	if ((err = ms_pdwriter_write(r->writer, h)) || (err = write_ustrings(r, h)))
		return err;
	if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) && r->vsyscall_trailer)
		return write_vsyscall(r, h);
	return 0;
}

/*
 * With --referenced, its event joins the live ones in the header (one id,
 * ours) and its format the tracing data, as its system's only event.
 */
/*
 * One of mapscope's own tracepoints (id tp, named name, its samples
 * carrying *id) joins the header's events, with the fields every one of
 * their samples has, and its format (written by format) the tracing data:
 * the header's, copied with it into td, which the header then points to.
 */
static int own_event_header(struct ms_pdwriter_evsel *ev, struct perf_event_attr *attr, struct ms_pdwriter_opts *wo,
			    uint16_t tp, const char *name, const uint64_t *id,
			    void (*format)(uint16_t tp_id, struct ms_buf *out), struct ms_buf *td)
{
	struct ms_buf fmt;
	int err;

	ms_referenced_attr(tp, attr);
	ev[wo->nr_evsels++] = (struct ms_pdwriter_evsel){ attr, name, id, 1 };
	ms_buf_init(&fmt);
	format(tp, &fmt);
	err = ms_buf_error(&fmt) ? -ENOMEM : ms_tracefs_add_system(wo->tracing_data, wo->tracing_data_len,
								   MS_REFERENCED_SYS, fmt.data, fmt.len, td);
	ms_buf_release(&fmt);
	wo->tracing_data = td->data;
	wo->tracing_data_len = td->len;
	return err;
}

static int referenced_header(struct ms_record *r, struct ms_pdwriter_evsel *ev, struct perf_event_attr *attr,
			     struct ms_pdwriter_opts *wo)
{
	static const uint64_t id = MS_REFERENCED_ID;

	if (!r->refs)
		return 0;
	return own_event_header(ev, attr, wo, r->ref_tp, MS_REFERENCED_NAME, &id, ms_referenced_format, &r->tracing);
}

/*
 * Where an entry whose strings are read is recorded, mapscope:user_string
 * joins the events (one id, ours) and its format the tracing data.
 */
static int ustring_header(struct ms_record *r, struct ms_pdwriter_evsel *ev, struct perf_event_attr *attr,
			  struct ms_pdwriter_opts *wo)
{
	static const uint64_t id = MS_USTRING_ID;
	size_t i, n = ms_live_nr_evsels(r->live);
	const char *name;
	bool any = false;
	int k;

	for (k = 0; k < US_NR; k++) {
		r->us_evsel[k] = -1;
		for (i = 0; i < n; i++)
			if ((name = ms_live_evsel_name(r->live, i)) && !strcmp(name, ustring_events[k]))
				r->us_evsel[k] = (int)i;
		any |= r->us_evsel[k] >= 0;
	}
	if (!any)
		return 0;
	r->us_tp = free_tracepoint_id(r->live, &r->ref_tp, r->refs ? 1 : 0);
	return own_event_header(ev, attr, wo, r->us_tp, MS_USTRING_NAME, &id, ms_ustring_format, &r->us_tracing);
}

/*
 * The machine's settings that analyses need (vm.mmap_min_addr: where
 * unmapped's null pages end; whether a read fault maps the zero page,
 * which decides which VMAs get an anon_vma), as mapscope:sysctl: its
 * event joins the header and its format the tracing data. Where the
 * settings cannot be read, or the recording has no tracing data to add
 * them to, none is written and the analyses take their defaults.
 */
static int sysctl_header(struct ms_record *r, struct ms_pdwriter_evsel *ev, struct perf_event_attr *attr,
			 struct ms_pdwriter_opts *wo)
{
	static const uint64_t id = MS_SYSCTL_ID;
	uint16_t taken[2] = { r->ref_tp, r->us_tp };

	if (!wo->tracing_data_len || ms_sysctl_read("/proc", "vm.mmap_min_addr", &r->mmap_min_addr))
		return 0;
	r->has_zero_page = !ms_read_fault_zero_page(&r->zero_page);
	r->sc_tp = free_tracepoint_id(r->live, taken, 2);
	return own_event_header(ev, attr, wo, r->sc_tp, MS_SYSCTL_NAME, &id, ms_sysctl_format, &r->sc_tracing);
}

/*
 * One setting as a mapscope:sysctl sample. Time 0, as perf stamps what it
 * synthesises: a fact about the machine is no event, and a real time here
 * would move the recording's start (report's, not the timeline's) to
 * before the program's first record.
 */
static int sysctl_put(struct ms_record *r, const char *name, uint64_t value)
{
	uint64_t rec[MS_SYSCTL_RECORD_MAX / 8];
	size_t n = ms_sysctl_encode(r->sc_tp, (uint32_t)getpid(), 0, name, value, rec, sizeof(rec));

	return n ? ms_pdwriter_write(r->writer, (const struct perf_event_header *)rec) : -EINVAL;
}

/* The settings, as the recording's first samples: before any the analyses read with them. */
static int sysctl_write(struct ms_record *r)
{
	int err;

	if (!r->sc_tp)
		return 0;
	if ((err = sysctl_put(r, "vm.mmap_min_addr", r->mmap_min_addr)) || !r->has_zero_page)
		return err;
	return sysctl_put(r, MS_FACT_READ_ZERO_PAGE, r->zero_page);
}

MS_EXPORT int ms_record_start(struct ms_record *r, int fd)
{
	size_t n = ms_live_nr_evsels(r->live), i;
	struct ms_pdwriter_evsel *ev = calloc(n + 3, sizeof(*ev));
	struct perf_event_attr ref_attr, us_attr, sc_attr;
	struct ms_pdwriter_opts wo = {
		.evsels = ev, .nr_evsels = n, .argc = r->opts.argc, .argv = r->opts.argv,
		.clockid = CLOCK_MONOTONIC, .pipe = r->opts.pipe,
		.compress_level = r->opts.no_compress ? 0 : r->opts.compress_level ? (int)r->opts.compress_level :
				  r->opts.pipe ? 0 : MS_RECORD_COMPRESS_LEVEL,
	};
	int err;

	if (!ev)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ev[i].attr = ms_live_evsel_attr(r->live, i);
		ev[i].name = ms_live_evsel_name(r->live, i);
		ev[i].ids = ms_live_evsel_ids(r->live, i, &ev[i].nr_ids);
		if ((int)i == r->damon_evsel)
			ev[i].attr = &r->damon_attr;
	}
	ms_live_tracing_data(r->live, &wo.tracing_data, &wo.tracing_data_len);
	if ((err = referenced_header(r, ev, &ref_attr, &wo)) || (err = ustring_header(r, ev, &us_attr, &wo)) ||
	    (err = sysctl_header(r, ev, &sc_attr, &wo))) {
		free(ev);
		return err;
	}
	if (ms_has_vsyscall())
		r->vsyscall_trailer = ms_sample_id_size(ms_live_evsel_attr(r->live, 0));
	r->writer = ms_pdwriter_new(fd, &wo);
	free(ev);
	return r->writer ? sysctl_write(r) : -errno;
}

MS_EXPORT int ms_record_enable(struct ms_record *r)
{
	return ms_live_enable(r->live);
}

static int write_plain(const struct perf_event_header *h, void *arg)
{
	return ms_pdwriter_write(((struct ms_record *)arg)->writer, h);
}

/*
 * Each round is written in time order, the rings merged (kernel/ringmerge.h):
 * the writer then finds the whole file in order, as a rule, and says so.
 */
MS_EXPORT int ms_record_drain(struct ms_record *r)
{
	long n = ms_live_drain_merged(r->live, write_record, r);
	int err;

	if (n < 0)
		return (int)n;
	if (n > 0 && (err = ms_pdwriter_finish_round(r->writer)))
		return err;
	/* Stamped after the drain, as ms_record_synthesize() stamps its records: the file stays in order. */
	if (r->refs && r->writer && (err = ms_refsampler_tick(r->refs, ms_monotonic_ns(), write_plain, r)))
		return err;
	if ((err = ms_prefetches_tick(r->pf, ms_monotonic_ns())))
		return err;
	return ms_pdwriter_flush(r->writer);
}

MS_EXPORT int ms_record_wait_ms(const struct ms_record *r, int max_ms)
{
	uint64_t now = ms_monotonic_ns(), due;

	max_ms = ms_prefetches_wait_ms(r->pf, now, max_ms);
	if (!r->refs)
		return max_ms;
	due = ms_refsampler_due(r->refs);
	if (due <= now)
		return 0;
	return (due - now) / 1000000ULL + 1 < (uint64_t)max_ms ? (int)((due - now) / 1000000ULL + 1) : max_ms;
}

/*
 * The rings fill while /proc is read: they are drained first, so a long
 * tree (a browser's dozens of processes, thousands of maps, a build-id
 * read per binary) never holds them back for longer than one process
 * takes. The records carry the time the read began, taken after the
 * drain, so the file stays in time order round by round: what was drained
 * is older, what follows is newer.
 */
MS_EXPORT int ms_record_synthesize(struct ms_record *r, pid_t tgid)
{
	int err = ms_record_drain(r);

	if (err)
		return err;
	return ms_live_synthesize(r->live, tgid, ms_monotonic_ns(), write_record, r);
}

MS_EXPORT int ms_record_nr_fds(const struct ms_record *r)
{
	return ms_live_nr_fds(r->live);
}

MS_EXPORT int ms_record_fd(const struct ms_record *r, int i)
{
	return ms_live_fd(r->live, i);
}

MS_EXPORT int ms_record_event_resolve(const char *spec, struct perf_event_attr *attr, char *why, size_t len)
{
	return ms_hwevent_resolve(ms_pmu_root(), spec, attr, why, len);
}

MS_EXPORT int ms_record_damon_available(void)
{
	return ms_damon_available(ms_damon_root());
}

/* The damon event's index, and its attr as the file has it: DAMON's intervals ride in config1 and config2. */
static void note_damon_evsel(struct ms_record *r, const struct ms_damon_opts *o)
{
	size_t i, n = ms_live_nr_evsels(r->live);
	const char *name;

	for (i = 0; i < n; i++) {
		name = ms_live_evsel_name(r->live, i);
		if (name && !strcmp(name, "damon:damon_aggregated")) {
			r->damon_evsel = (int)i;
			r->damon_attr = *ms_live_evsel_attr(r->live, i);
			r->damon_attr.config1 = o->sample_us;
			r->damon_attr.config2 = o->aggr_us;
		}
	}
}

MS_EXPORT int ms_record_damon_start(struct ms_record *r, const pid_t *pids, size_t n)
{
	struct ms_damon_opts o = {
		r->opts.damon_sample_us, r->opts.damon_aggr_us, r->opts.damon_update_us,
		r->opts.damon_min_regions, r->opts.damon_max_regions,
	};
	int err;

	if (!r->opts.damon || r->damon || !n)
		return -EINVAL;
	ms_damon_opts_fill(&o);
	r->damon_pids = malloc(n * sizeof(*pids));
	if (!r->damon_pids)
		return -ENOMEM;
	memcpy(r->damon_pids, pids, n * sizeof(*pids));
	r->nr_damon_pids = n;
	r->damon = ms_damon_start(ms_damon_root(), &o, pids, n);
	if (!r->damon)
		return -errno;
	if ((err = ms_live_add_kthread(r->live, ms_damon_kdamond(r->damon)))) {
		ms_damon_stop(r->damon);
		r->damon = NULL;
		return err;
	}
	note_damon_evsel(r, &o);
	return 0;
}

/* DAMON first: its last aggregation is then in the rings for the final drain. */
MS_EXPORT int ms_record_stop(struct ms_record *r)
{
	int err = ms_damon_stop(r->damon);

	r->damon = NULL;
	ms_prefetches_stop(r->pf);           /* no window reopens the event for the final drain */
	return ms_live_disable(r->live) ?: err;
}

MS_EXPORT int ms_record_close(struct ms_record *r)
{
	if (r->closed || !r->writer)
		return 0;
	r->closed = true;
	return ms_pdwriter_close(r->writer);
}

MS_EXPORT void ms_record_stats(const struct ms_record *r, struct ms_record_stats *st)
{
	struct ms_pdwriter_stats ws = { 0 };

	if (r->writer)
		ms_pdwriter_stats(r->writer, &ws);
	*st = (struct ms_record_stats){ ws.samples, ws.data_samples, ws.lost, ws.bytes };
}

MS_EXPORT void ms_record_free(struct ms_record *r)
{
	if (!r)
		return;
	ms_damon_stop(r->damon);
	free(r->damon_pids);
	ms_pdwriter_free(r->writer);
	ms_live_free(r->live);
	ms_prefetches_free(r->pf);           /* after the events that use them are closed */
	ms_refsampler_free(r->refs);
	ms_buf_release(&r->tracing);
	ms_buf_release(&r->us_tracing);
	ms_buf_release(&r->sc_tracing);
	ms_tidset_release(&r->attached);
	ms_execwin_release(&r->execwin);
	ms_binaries_release(&r->binaries);
	free(r);
}
