/*
 * The mapping calls an attached process's threads are blocked in when its
 * maps are read. Such a call entered before the events were on, so its
 * entry is not recorded; it waits (for the address space's lock, most
 * often) while /proc shows the maps as they were, and changes them after:
 * its exit alone would say nothing of what it did, and the kernel writes
 * no record of some of its changes (the VMA tree's store of NULL over a
 * VMA between two others is not traced). /proc/PID/task/TID/syscall gives
 * the call and its arguments of a task blocked in one; an entry record of
 * it, stamped with the maps' time, lets its exit pair with it as any
 * other call's does.
 *
 * A call that blocks after its change (userfaultfd's unmap and remap
 * events wait after it) would be applied twice: /proc shows its result,
 * and its exit applies it again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include <mapscope/live.h>

#include "kernel/blocked.h"
#include "kernel/tracefs.h"

/* The mapping calls followed, by number: their entry tracepoints' names and their arguments' counts. */
static const struct {
	long nr;
	const char *name;
	int nargs;
} calls[] = {
	{ SYS_mmap, "mmap", 6 },         { SYS_munmap, "munmap", 2 },     { SYS_mremap, "mremap", 5 },
	{ SYS_mprotect, "mprotect", 3 }, { SYS_brk, "brk", 1 },           { SYS_madvise, "madvise", 3 },
	{ SYS_shmat, "shmat", 3 },       { SYS_shmdt, "shmdt", 1 },       { SYS_mlock, "mlock", 2 },
	{ SYS_munlock, "munlock", 2 },   { SYS_mlockall, "mlockall", 1 }, { SYS_munlockall, "munlockall", 0 },
#ifdef SYS_mlock2
	{ SYS_mlock2, "mlock2", 3 },
#endif
#ifdef SYS_pkey_mprotect
	{ SYS_pkey_mprotect, "pkey_mprotect", 4 },
#endif
#ifdef SYS_mbind
	{ SYS_mbind, "mbind", 6 },
#endif
};
#define NR_CALLS (sizeof(calls) / sizeof(calls[0]))

int ms_blocked_parse(const char *text, long *nr, uint64_t args[6], uint64_t *pc)
{
	uint64_t sp;
	int n;

	if (sscanf(text, "%ld 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64
		   " 0x%" SCNx64 " 0x%" SCNx64 "%n", nr, &args[0], &args[1], &args[2], &args[3], &args[4], &args[5],
		   &sp, pc, &n) != 9 || *nr < 0)
		return -EINVAL;              /* "running", or "-1 ..." (not in a call) */
	return 0;
}

const char *ms_blocked_call(long nr, int *nargs)
{
	size_t i;

	for (i = 0; i < NR_CALLS; i++)
		if (calls[i].nr == nr) {
			*nargs = calls[i].nargs;
			return calls[i].name;
		}
	return NULL;
}

/* Appends v's 8 bytes at *p, where they fit. */
static void put64(unsigned char **p, const unsigned char *end, uint64_t v)
{
	if (*p + 8 <= end)
		memcpy(*p, &v, 8);
	*p += 8;
}

/* The sample_type bits an entry's sample may have that are written here: any other, and none is made. */
#define KNOWN (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | \
	       PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                  \
	       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

size_t ms_blocked_entry(const struct perf_event_attr *attr, uint64_t id, const struct ms_blocked *b,
			void *out, size_t cap)
{
	uint64_t t = attr->sample_type, pidtid = (uint64_t)b->tid << 32 | b->pid;
	unsigned char *p = (unsigned char *)out + sizeof(struct perf_event_header), *end = (unsigned char *)out + cap;
	uint32_t raw = 16 + 8 * (uint32_t)b->nargs + 4, nr = (uint32_t)b->nr;
	unsigned char head[16] = { 0 };
	uint16_t tp = (uint16_t)attr->config;
	int i;

	if ((t & ~KNOWN) || !(t & PERF_SAMPLE_RAW) || b->nargs < 0 || b->nargs > 6)
		return 0;
	if (t & PERF_SAMPLE_IDENTIFIER)
		put64(&p, end, id);
	if (t & PERF_SAMPLE_IP)
		put64(&p, end, b->pc);
	if (t & PERF_SAMPLE_TID)
		put64(&p, end, pidtid);
	if (t & PERF_SAMPLE_TIME)
		put64(&p, end, b->time);
	if (t & PERF_SAMPLE_ADDR)
		put64(&p, end, 0);
	if (t & PERF_SAMPLE_ID)
		put64(&p, end, id);
	if (t & PERF_SAMPLE_STREAM_ID)
		put64(&p, end, id);
	if (t & PERF_SAMPLE_CPU)
		put64(&p, end, 0);
	if (t & PERF_SAMPLE_PERIOD)
		put64(&p, end, 1);
	if (t & PERF_SAMPLE_CALLCHAIN)
		put64(&p, end, 0);           /* no frames: the stack is not known */
	/* RAW: its size, then the tracepoint's common fields, __syscall_nr and the arguments, to 8 bytes. */
	if (p + 4 + raw > end)
		return 0;
	memcpy(p, &raw, 4);
	memcpy(head, &tp, 2);
	memcpy(head + 4, &b->tid, 4);        /* common_pid */
	memcpy(head + 8, &nr, 4);
	memcpy(p + 4, head, 16);
	for (i = 0; i < b->nargs; i++)
		memcpy(p + 20 + 8 * i, &b->args[i], 8);
	memset(p + 20 + 8 * b->nargs, 0, 4);
	p += 4 + raw;
	if (t & PERF_SAMPLE_REGS_USER)
		put64(&p, end, 0);           /* PERF_SAMPLE_REGS_ABI_NONE: no registers */
	if (t & PERF_SAMPLE_STACK_USER)
		put64(&p, end, 0);           /* no stack, and so no dyn_size */
	if (p > end || (size_t)(p - (unsigned char *)out) > UINT16_MAX)
		return 0;
	*(struct perf_event_header *)out = (struct perf_event_header){
		.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER, .size = (uint16_t)(p - (unsigned char *)out) };
	return (size_t)(p - (unsigned char *)out);
}

/* The entry evsel of call name (syscalls:sys_enter_NAME) and an id of it: its index, or -1. */
static int entry_evsel(struct ms_live *l, const char *name, uint64_t *id)
{
	char want[64];
	const uint64_t *ids;
	size_t i, n;

	snprintf(want, sizeof(want), "syscalls:sys_enter_%s", name);
	for (i = 0; i < ms_live_nr_evsels(l); i++) {
		if (strcmp(ms_live_evsel_name(l, i) ? ms_live_evsel_name(l, i) : "", want))
			continue;
		ids = ms_live_evsel_ids(l, i, &n);
		if (!n)
			return -1;
		*id = ids[0];
		return (int)i;
	}
	return -1;
}

int ms_blocked_task(pid_t tid, void *arg)
{
	struct ms_blocked_to *w = arg;
	unsigned char rec[512] __attribute__((aligned(8)));
	struct ms_blocked b = { .pid = (uint32_t)w->tgid, .tid = (uint32_t)tid, .time = w->time };
	char path[128], text[256];
	const char *name;
	uint64_t id;
	size_t size;
	int e;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)w->tgid, (int)tid);
	/* Gone, or not ours to read: as if running. */
	if (ms_kernel_read_line(path, text, sizeof(text)) || ms_blocked_parse(text, &b.nr, b.args, &b.pc) ||
	    !(name = ms_blocked_call(b.nr, &b.nargs)) || (e = entry_evsel(w->live, name, &id)) < 0)
		return 0;
	size = ms_blocked_entry(ms_live_evsel_attr(w->live, (size_t)e), id, &b, rec, sizeof(rec));
	return size ? w->fn((const struct perf_event_header *)rec, w->ctx) : 0;
}
