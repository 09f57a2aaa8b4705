/*
 * What the process table and the file names need beyond the syscalls'
 * changes: task:task_newtask says which new processes share their
 * parent's address space (the FORK record does not), and
 * timestamp:inode_set_ctime_to_ts, inside an unlink, says which file lost
 * a name (the syscall's own tracepoint holds only a pointer to the path).
 */
#include <sched.h>

#include "stream/internal.h"

#ifndef CLONE_VM
#define CLONE_VM 0x100
#endif
#ifndef CLONE_THREAD
#define CLONE_THREAD 0x10000
#endif

/*
 * clone(CLONE_VM) without CLONE_THREAD, vfork included: the FORK record
 * before this made the child a copy; this FORK says it shares instead.
 */
int stream_on_newtask(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint32_t child = (uint32_t)stream_field(ei, smp, 0);
	uint64_t flags = stream_field(ei, smp, 1);
	struct ms_event ev;

	if (!(flags & CLONE_VM) || (flags & CLONE_THREAD) || !child || child == smp->pid)
		return 0;
	base_event(&ev, MS_EV_FORK, smp);
	ev.fork.child_pid = ev.fork.child_tid = child;
	ev.fork.share_vm = true;
	return emit(s, &ev);
}

/* A ctime set inside an open unlink: the file it unlinks, or its directory (never mapped). */
int stream_on_ctime(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	struct thread *t = ms_u32map_get(&s->threads, smp->tid);
	size_t n = sizeof(t->files) / sizeof(t->files[0]);

	if (!t || (t->sc != SC_UNLINK && t->sc != SC_UNLINKAT) || t->nr_files == n)
		return 0;
	t->files[t->nr_files][0] = stream_field(ei, smp, 0) & 0xffffffffu;
	t->files[t->nr_files++][1] = stream_field(ei, smp, 1);
	return 0;
}

/* A successful unlink: each file whose ctime it set lost a name (the kernel's dev_t is major << 20 | minor). */
int stream_emit_unlinked(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	struct ms_event ev;
	uint32_t i;
	int err = 0;

	for (i = 0; i < t->nr_files && !err; i++) {
		base_event(&ev, MS_EV_UNLINK, smp);
		ev.file.maj = (uint32_t)(t->files[i][0] >> 20);
		ev.file.min = (uint32_t)(t->files[i][0] & 0xfffff);
		ev.file.ino = t->files[i][1];
		err = emit(s, &ev);
	}
	t->nr_files = 0;
	return err;
}
