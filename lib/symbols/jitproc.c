/*
 * A process's JIT code: where it can be (anonymous memory made
 * executable: perf looks in a perf map for those maps only, so a stale
 * /tmp/perf-PID.map of an earlier process with the same pid never names a
 * heap address), and the tables that name it. Its jitdump is read when the
 * recording shows the JIT mapping it (as perf inject --jit finds it); its
 * perf map at the first address one may name, from /tmp where the JIT
 * wrote it, as perf report does: a recording read later on the same
 * machine is named as long as the file is there. A perf map has no times:
 * the last line holding an address names it. A jitdump's loads and moves
 * have times on the recording's clock: a sample is named by the code
 * there at its time, and the generation moves at each of those instants.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "symbols/internal.h"
#include "util/grow.h"
#include "util/log.h"

/* Memory a JIT's code can be in: executable, and no binary's (anonymous, memfd, hugetlbfs, /dev/zero). */
static bool jit_memory(const struct ms_event_map *m)
{
	if (!(m->prot & PROT_EXEC))
		return false;
	if (!strncmp(m->name, "/memfd:", 7) || !strncmp(m->name, "/anon_hugepage", 14) ||
	    !strcmp(m->name, "/dev/zero") || !strncmp(m->name, "[anon:", 6))
		return true;
	return !(m->maj || m->min || m->ino) && strcmp(m->name, "[vdso]") && strcmp(m->name, "[vsyscall]") &&
	       strcmp(m->name, "[uprobes]");
}

/* [start, end) joins the process's executable anonymous ranges, merged with those it meets. */
static void add_exec(struct proc_bins *p, uint64_t start, uint64_t end)
{
	size_t i = 0;

	while (i < p->nr_exec) {
		if (p->exec[i].start <= end && start <= p->exec[i].end) {
			start = p->exec[i].start < start ? p->exec[i].start : start;
			end = p->exec[i].end > end ? p->exec[i].end : end;
			p->exec[i] = p->exec[--p->nr_exec];
			continue;
		}
		i++;
	}
	if (!MS_GROW(p->exec, p->nr_exec + 1, p->cap_exec, 8, SIZE_MAX, false))
		p->exec[p->nr_exec++] = (struct jit_range){ start, end };
}

static bool in_exec(const struct proc_bins *p, uint64_t addr)
{
	size_t i;

	for (i = 0; i < p->nr_exec; i++)
		if (addr >= p->exec[i].start && addr < p->exec[i].end)
			return true;
	return false;
}

bool ms_jit_may_name(const struct proc_bins *p, uint64_t addr)
{
	return in_exec(p, addr);
}

/* The instants after now at which t's names change join s's, sorted, each once. */
static void add_times(struct ms_symbols *s, const struct jit_table *t)
{
	size_t i, k, n = s->nr_times - s->time_at;

	if (s->time_at)                       /* the instants passed go */
		memmove(s->times, s->times + s->time_at, n * sizeof(*s->times));
	s->nr_times = n;
	s->time_at = 0;
	for (i = 0; i < t->n; i++) {
		uint64_t v[2] = { t->v[i].from, t->v[i].until };

		for (k = 0; k < 2; k++)
			if (v[k] > s->now && v[k] != UINT64_MAX &&
			    !MS_GROW(s->times, s->nr_times + 1, s->cap_times, 256, SIZE_MAX, false))
				s->times[s->nr_times++] = v[k];
	}
	if (s->nr_times)
		qsort(s->times, s->nr_times, sizeof(*s->times), ms_u64_order);
	for (i = k = 0; i < s->nr_times; i++)
		if (!k || s->times[k - 1] != s->times[i])
			s->times[k++] = s->times[i];
	s->nr_times = k;
	s->next_change = k ? s->times[0] : UINT64_MAX;
}

static void track_jitdump(struct ms_symbols *s, const struct ms_event *ev)
{
	struct proc_bins *p = ms_symbols_proc(s, ev->pid, true);
	struct jit_table *t;

	if (!p || (p->jitdump && !strcmp(p->jitdump->path, ev->map.name)))
		return;                       /* mapped again: read once */
	t = ms_jitdump_read(ev->map.name, ev->pid, !s->clock_other);
	if (!t) {
		ms_warn("cannot read the jitdump '%s' of process %u: %s: its JIT code is not named", ev->map.name,
			ev->pid, errno == ENOEXEC ? "not one written by that process" : strerror(errno));
		return;
	}
	ms_jit_free(p->jitdump);
	p->jitdump = t;
	add_times(s, t);
	s->gen++;
}

void ms_jit_track(struct ms_symbols *s, const struct ms_event *ev)
{
	struct proc_bins *p, *parent;
	size_t i;

	switch (ev->kind) {
	case MS_EV_MAP:
		if (ev->map.name[0] == '/' && ms_jitdump_path(ev->map.name))
			track_jitdump(s, ev);
		else if (jit_memory(&ev->map) && (p = ms_symbols_proc(s, ev->pid, true)))
			add_exec(p, ev->map.start, ev->map.end);
		break;
	case MS_EV_PROTECT:
		if ((ev->protect.prot & PROT_EXEC) && (p = ms_symbols_proc(s, ev->pid, true)))
			add_exec(p, ev->protect.start, ev->protect.end);
		break;
	case MS_EV_FORK:                      /* the child's memory is the parent's */
		parent = ms_symbols_proc(s, ev->pid, false);
		if (ev->fork.child_pid == ev->pid || !parent || !(p = ms_symbols_proc(s, ev->fork.child_pid, true)))
			break;
		for (i = 0; i < parent->nr_exec; i++)
			add_exec(p, parent->exec[i].start, parent->exec[i].end);
		break;
	default:
		break;
	}
}

void ms_jit_proc_clear(struct proc_bins *p)
{
	p->nr_exec = 0;
	ms_jit_free(p->jitdump);
	p->jitdump = NULL;
}

void ms_jit_proc_release(struct proc_bins *p)
{
	ms_jit_proc_clear(p);
	free(p->exec);
	ms_jit_free(p->perfmap);
}

/* /tmp/perf-PID.map, read once; NULL where there is none to read. */
static const struct jit_table *perfmap(struct proc_bins *p, uint32_t pid)
{
	char path[64];

	if (p->perfmap_state)
		return p->perfmap;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	p->perfmap = ms_perfmap_read(path);
	p->perfmap_state = p->perfmap ? 1 : -1;
	if (!p->perfmap && errno == EPERM)
		ms_warn("'%s' is not read: it is not a regular file owned by this user or root (perf's rule): "
			"the JIT code of process %u is not named", path, pid);
	else if (!p->perfmap && errno != ENOENT)
		ms_warn("cannot read '%s': %s: the JIT code of process %u is not named", path, strerror(errno), pid);
	return p->perfmap;
}

int ms_jit_resolve(struct ms_symbols *s, uint32_t pid, uint64_t addr, struct ms_sym *out)
{
	struct proc_bins *p = ms_symbols_proc(s, pid, false);
	const struct jit_entry *e = NULL;
	const struct jit_table *t = NULL;

	if (!p || !in_exec(p, addr))
		return -ENOENT;
	if (p->jitdump && (e = ms_jit_find(p->jitdump, addr, s->now)))
		t = p->jitdump;
	else if ((t = perfmap(p, pid)))
		e = ms_jit_find(t, addr, 0);
	if (!e)
		return -ENOENT;
	out->dso = t->path;
	out->name = e->name;
	out->offset = addr - e->start;
	out->vaddr = addr;
	return 0;
}

void ms_symbols_set_time(struct ms_symbols *s, uint64_t t)
{
	if (t >= s->next_change) {
		while (s->time_at < s->nr_times && s->times[s->time_at] <= t)
			s->time_at++;
		s->next_change = s->time_at < s->nr_times ? s->times[s->time_at] : UINT64_MAX;
		s->time_gen = ++s->gen;
	}
	if (t > s->now)
		s->now = t;
}

uint64_t ms_symbols_next_change(const struct ms_symbols *s)
{
	return s->next_change;
}

void ms_symbols_clock_monotonic(struct ms_symbols *s, bool yes)
{
	s->clock_other = !yes;
}
