/*
 * What the process table and the file names need beyond the syscalls'
 * changes: task:task_newtask says which new processes share their
 * parent's address space (the FORK record does not), and
 * timestamp:inode_set_ctime_to_ts, inside an unlink or a rename, says
 * which file lost a name or took another (the syscall's own tracepoint
 * holds only a pointer to the path). The strings a syscall pointed to
 * (a rename's paths, a VMA's name) come as mapscope:user_string, which
 * record writes after the entry; userfaultfd's range, as its ioctl's
 * argument points into the caller's stack, from the stack the entry's
 * sample copied. And the calls that set VMA attributes, which split and
 * merge VMAs with no record of their own: the mlock family, mseal, mbind,
 * set_mempolicy_home_node, prctl's names and KSM setting, userfaultfd's
 * registration.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "stream/internal.h"

#ifndef CLONE_VM
#define CLONE_VM 0x100
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
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

/* A ctime set inside an open unlink or rename: the file it unlinks or renames, or a directory. */
int stream_on_ctime(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	struct thread *t = ms_u32map_get(&s->threads, smp->tid);
	size_t n = sizeof(t->files) / sizeof(t->files[0]);

	if (!t || (t->sc != SC_UNLINK && t->sc != SC_UNLINKAT && t->sc != SC_RENAME && t->sc != SC_RENAMEAT &&
		   t->sc != SC_RENAMEAT2) || t->nr_files == n)
		return 0;
	t->files[t->nr_files][0] = stream_field(ei, smp, 0) & 0xffffffffu;
	t->files[t->nr_files++][1] = stream_field(ei, smp, 1);
	return 0;
}

/* A successful unlink: each file whose ctime it set lost a name (the kernel's dev_t is major << 20 | minor). */
static int emit_unlinked(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
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

#define UFFDIO_REGISTER_ 0xc020aa00u      /* _IOWR(0xAA, 0x00, struct uffdio_register) */
#define UFFDIO_UNREGISTER_ 0x8010aa01u    /* _IOR(0xAA, 0x01, struct uffdio_range) */
#define PR_SET_VMA_ 0x53564d41u
#define PR_SET_VMA_ANON_NAME_ 0u
#define PR_SET_MEMORY_MERGE_ 67u
#define RENAME_EXCHANGE_ 2u

/*
 * struct uffdio_register is { start, len, mode, ioctls } and struct
 * uffdio_range { start, len }: read where the argument lies in the copy
 * of the stack from the stack pointer up. Elsewhere (the heap) it is not
 * known: args[4] (the length) stays 0, and the VMA tree alone shows it.
 */
void stream_uffd_enter(struct thread *t, const struct ms_sample *smp)
{
	uint32_t cmd = (uint32_t)t->args[1];
	uint64_t at = t->args[2], v[3] = { 0 }, need = cmd == UFFDIO_REGISTER_ ? 24 : 16;

	t->args[3] = t->args[4] = 0;
	if ((cmd != UFFDIO_REGISTER_ && cmd != UFFDIO_UNREGISTER_) || !smp->has_sp || !smp->stack ||
	    at < smp->sp || smp->stack_size < need || at - smp->sp > smp->stack_size - need)
		return;
	memcpy(v, smp->stack + (at - smp->sp), need);
	t->args[2] = cmd == UFFDIO_REGISTER_ ? v[2] : 0;
	t->args[3] = v[0];
	t->args[4] = v[1];
}

/* Both check the whole range before they change a VMA: a successful one changed it all. */
static int uffd_exit(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	struct ms_event ev;

	if (!t->args[4] || t->args[3] & 4095 || t->args[4] & 4095 || t->args[3] >= USER_END ||
	    t->args[4] > USER_END - t->args[3])
		return 0;
	base_event(&ev, MS_EV_VMA_ATTR, smp);
	ev.vma_attr.start = t->args[3];
	ev.vma_attr.end = t->args[3] + t->args[4];
	ev.vma_attr.what = MS_VMA_UFFD;
	ev.vma_attr.value = (uint32_t)(t->args[2] & 7);
	ev.vma_attr.tree = s->has_tree;
	return emit(s, &ev);
}

/*
 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, start, len, name): madvise's
 * walk names every VMA and fails with -ENOMEM over a hole at the end, or
 * stops with -EBADF at a file's VMA, having named those before it. A name
 * the recording lacks (arg5 set, no user_string) is not known: nothing is
 * applied, and the VMA tree alone shows the splits.
 * prctl(PR_SET_MEMORY_MERGE, on) that succeeded: KSM may merge any VMA
 * of the process, from now on or no longer (MS_VMA_MERGE_ANY).
 */
static int prctl_exit(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	struct ms_event ev;

	if (t->args[0] == PR_SET_MEMORY_MERGE_ && !ret) {
		base_event(&ev, MS_EV_VMA_ATTR, smp);
		ev.vma_attr.start = 0;
		ev.vma_attr.end = USER_END;
		ev.vma_attr.what = MS_VMA_MERGE_ANY;
		ev.vma_attr.value = t->args[1] != 0;
		ev.vma_attr.tree = s->has_tree;
		return emit(s, &ev);
	}
	if (t->args[0] != PR_SET_VMA_ || t->args[1] != PR_SET_VMA_ANON_NAME_ ||
	    (ret && ret != (uint64_t)-ENOMEM && ret != (uint64_t)-EBADF) || (t->args[4] && !t->strs[0]) ||
	    t->args[2] & 4095 || t->args[2] >= USER_END || t->args[3] > USER_END - t->args[2])
		return 0;
	base_event(&ev, MS_EV_VMA_ATTR, smp);
	ev.vma_attr.start = t->args[2];
	ev.vma_attr.end = t->args[2] + PAGE_ALIGN(t->args[3]);
	ev.vma_attr.what = MS_VMA_ANON_NAME;
	ev.vma_attr.name = t->args[4] ? t->strs[0] : NULL;
	ev.vma_attr.tree = s->has_tree;
	return ev.vma_attr.end > ev.vma_attr.start ? emit(s, &ev) : 0;
}

/* A successful rename whose two paths the recording has. */
static int emit_renamed(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	struct ms_event ev;
	int err = 0;

	if (t->strs[0] && t->strs[1]) {
		base_event(&ev, MS_EV_RENAME, smp);
		ev.rename.old_path = t->strs[0];
		ev.rename.new_path = t->strs[1];
		ev.rename.exchange = t->sc == SC_RENAMEAT2 && (t->args[4] & RENAME_EXCHANGE_);
		ev.rename.nr_files = t->nr_files;
		ev.rename.files = (const uint64_t (*)[2])t->files;
		err = emit(s, &ev);
	}
	t->nr_files = 0;
	return err;
}

/*
 * The string of argument arg (1 or 2) of the thread's open syscall, a
 * __data_loc field: its offset in the raw data in the low 16 bits, its
 * length (with the NUL) in the high.
 */
int stream_on_ustring(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	struct thread *t = ms_u32map_get(&s->threads, smp->tid);
	uint64_t arg = stream_field(ei, smp, 0), loc = stream_field(ei, smp, 1) & 0xffffffffu;
	uint32_t off = (uint32_t)(loc & 0xffff), len = (uint32_t)(loc >> 16);
	char *str;

	if (!t || (t->sc != SC_PRCTL && t->sc != SC_RENAME && t->sc != SC_RENAMEAT && t->sc != SC_RENAMEAT2) ||
	    arg < 1 || arg > 2 || !len || off > smp->raw_size || len > smp->raw_size - off)
		return 0;
	if (!(str = malloc(len)))
		return -ENOMEM;
	memcpy(str, smp->raw + off, len);
	str[len - 1] = '\0';
	free(t->strs[arg - 1]);
	t->strs[arg - 1] = str;
	return 0;
}

int stream_lifecycle_exit(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	switch (t->sc) {
	case SC_UNLINK:
	case SC_UNLINKAT:
		return ret ? 0 : emit_unlinked(s, smp, t);
	case SC_RENAME:
	case SC_RENAMEAT:
	case SC_RENAMEAT2:
		return ret ? 0 : emit_renamed(s, smp, t);
	case SC_IOCTL:
		return ret ? 0 : uffd_exit(s, smp, t);
	case SC_PRCTL:
		return prctl_exit(s, smp, t, ret);
	case SC_IO_DESTROY:
		return ret ? 0 : stream_aio_destroyed(s, smp, t);
	default:
		return 0;
	}
}

/*
 * Process pid has exec'd: the maps of its threads from here on are the new
 * program's, in place now. The thread that called execve may have been
 * any of them: the exec's record names the leader, whose tid it takes
 * (de_thread), so every thread marked in the process is cleared. Its main
 * thread's stack pointer is to be told again, for the new program's stack.
 */
void stream_exec_done(struct ms_stream *s, uint32_t pid)
{
	struct thread *t;
	size_t pos = 0;
	uint32_t tid;

	stream_mm_forget(s, pid);        /* the new program's mm */
	while ((t = ms_u32map_next(&s->threads, &pos, &tid))) {
		if (t->in_exec && t->exec_pid == pid)
			t->in_exec = false;
		if (tid == pid)
			t->sp_told = false;
	}
}

/*
 * mlock and munlock round the range out to pages (do_mlock); mlockall
 * resets what new maps get, and with MCL_CURRENT (or as munlockall) sets
 * every VMA (apply_mlockall_flags).
 */
int stream_exit_mlock(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	uint64_t off = t->args[0] & 4095, flags = t->args[0];
	struct ms_event ev;

	base_event(&ev, MS_EV_MLOCK, smp);
	ev.mlock.def = -1;
	ev.mlock.tree = s->has_tree;
	ev.mlock.to_gap = ret != 0;
	switch (t->sc) {
	case SC_MLOCK:
	case SC_MLOCK2:
	case SC_MUNLOCK:
		if (t->args[1] > USER_END)
			return 0;
		ev.mlock.start = t->args[0] - off;
		ev.mlock.end = ev.mlock.start + PAGE_ALIGN(t->args[1] + off);
		ev.mlock.lock = t->sc == SC_MUNLOCK ? 0 : MS_LOCK_LOCKED |
				(t->sc == SC_MLOCK2 && (t->args[2] & MLOCK_ONFAULT) ? MS_LOCK_ONFAULT : 0);
		break;
	case SC_MLOCKALL:
		ev.mlock.def = flags & MCL_FUTURE ? MS_LOCK_LOCKED | (flags & MCL_ONFAULT ? MS_LOCK_ONFAULT : 0) : 0;
		ev.mlock.all = !!(flags & MCL_CURRENT);
		ev.mlock.lock = ev.mlock.all ? MS_LOCK_LOCKED | (flags & MCL_ONFAULT ? MS_LOCK_ONFAULT : 0) : 0;
		break;
	default:                                 /* munlockall */
		ev.mlock.def = 0;
		ev.mlock.all = true;
		break;
	}
	return stream_emit_with_chain(s, t, &ev);
}

/*
 * mseal, mbind, set_mempolicy_home_node: a VMA attribute over the range.
 * mseal and mbind check the whole range before changing anything, so a
 * failed one changed nothing. The home node goes on VMA by VMA, and fails
 * (-EOPNOTSUPP) at the first whose policy takes none, after the ones before.
 */
int stream_exit_vma_attr(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	struct ms_event ev;

	if (t->args[1] > USER_END)
		return 0;
	base_event(&ev, MS_EV_VMA_ATTR, smp);
	ev.vma_attr.start = t->args[0];
	ev.vma_attr.end = t->args[0] + PAGE_ALIGN(t->args[1]);
	ev.vma_attr.tree = s->has_tree;
	if (t->sc == SC_MSEAL) {
		ev.vma_attr.what = MS_VMA_SEAL;
	} else if (t->sc == SC_MBIND) {
		ev.vma_attr.what = MS_VMA_POLICY;
		ev.vma_attr.value = (uint32_t)t->args[2];
	} else {
		ev.vma_attr.what = MS_VMA_HOME_NODE;
		ev.vma_attr.value = (uint32_t)t->args[2];
	}
	return stream_emit_with_chain(s, t, &ev);
}
