/*
 * Syscall pairing: a sys_enter_* sample opens a window for its thread;
 * MMAP2 records the kernel writes inside the window belong to that
 * syscall, and so do the VMA tree's writes; the sys_exit_* sample closes
 * it and, on success, the change is emitted with the range the syscall
 * returned (an MMAP2 alone covers the merged VMA), then the tree's writes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stream/internal.h"
#include "util/grow.h"
#include "util/log.h"

struct thread *stream_thread_get(struct ms_stream *s, uint32_t tid)
{
	struct thread *t = ms_u32map_get(&s->threads, tid);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->sc = -1;
	if (ms_u32map_put(&s->threads, tid, t)) {
		free(t);
		return NULL;
	}
	return t;
}

static void thread_clear(struct thread *t)
{
	size_t i;

	for (i = 0; i < t->nr_maps; i++)
		free(t->maps[i].name);
	for (i = 0; i < 2; i++) {
		free(t->strs[i]);
		t->strs[i] = NULL;
	}
	t->nr_maps = 0;
	t->nr_vmas = 0;
	t->nr_files = 0;
	t->sc = -1;
	t->chain_len = 0;
	t->unmapped = false;
}

static uint64_t field(const struct evinfo *ei, const struct ms_sample *smp, int k)
{
	uint64_t v = 0;
	uint32_t w;

	if (k >= ei->nr_fields || (uint32_t)ei->off[k] + ei->size[k] > smp->raw_size)
		return 0;
	if (ei->size[k] == 8)
		memcpy(&v, smp->raw + ei->off[k], 8);
	else if (ei->size[k] == 4) {
		memcpy(&w, smp->raw + ei->off[k], 4);
		v = (uint64_t)(int64_t)(int32_t)w;   /* syscall ret and int args are signed */
	} else if (ei->size[k] == 1) {
		v = smp->raw[ei->off[k]];            /* a bool (mmap_lock's write, success) */
	}
	return v;
}

uint64_t stream_field(const struct evinfo *ei, const struct ms_sample *smp, int k)
{
	return field(ei, smp, k);
}

/*
 * What the entry's exit will need of it: its chain, the top of its stack,
 * and, in a dwarf recording, its registers and stack copy to unwind. The
 * copy is most of a recording's bytes (4 KiB an mmap entry of chromium's
 * page load, 55% of the file): where the record's bytes last (a file's
 * mapping), it is pointed at, not copied.
 */
static int keep_chain(struct ms_stream *s, struct thread *t, const struct ms_sample *smp)
{
	t->chain_len = 0;
	t->regs_mask = 0;
	t->ustack_len = 0;
	t->ustack_at = NULL;
	if (!s->no_stacks && smp->regs && smp->stack_size > sizeof(t->stack) &&
	    __builtin_popcountll(smp->regs_mask) <= 32) {
		/* A dwarf recording: keep what unwinding the entry needs. */
		t->regs_mask = smp->regs_mask;
		memcpy(t->regs, smp->regs, (size_t)__builtin_popcountll(smp->regs_mask) * 8);
		t->ustack_len = (uint32_t)(smp->stack_size < 8192 ? smp->stack_size : 8192);
		if (ms_stream_lasting(s->src, smp->stack, t->ustack_len)) {
			t->ustack_at = smp->stack;
		} else {
			if (!t->ustack && !(t->ustack = malloc(8192)))
				return -ENOMEM;
			memcpy(t->ustack, smp->stack, t->ustack_len);
			t->ustack_at = t->ustack;
		}
	}
	t->stack_len = (uint32_t)((smp->stack_size < sizeof(t->stack) ? smp->stack_size : sizeof(t->stack)) / 8);
	if (t->stack_len)
		memcpy(t->stack, smp->stack, t->stack_len * 8);
	if (!smp->chain_len)
		return 0;
	if (MS_GROW(t->chain, smp->chain_len, t->chain_cap, 16, SIZE_MAX, false))
		return -ENOMEM;
	memcpy(t->chain, smp->chain, smp->chain_len * 8);
	t->chain_len = (uint32_t)smp->chain_len;
	return 0;
}

/* A map the kernel made outside a followed syscall (exec, the stack, or a file without syscalls). */
static int emit_map(struct ms_stream *s, const struct ms_sample *smp, const struct pending_map *pm,
		    enum ms_map_via via)
{
	struct ms_event ev;

	base_event(&ev, MS_EV_MAP, smp);
	ev.pid = pm->pid;
	ev.map = pm->m;
	ev.map.name = pm->name;
	ev.map.via = via;
	return emit(s, &ev);
}

static int flush_thread_maps(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	size_t i;
	int err = 0;

	for (i = 0; i < t->nr_maps && !err; i++)
		err = emit_map(s, smp, &t->maps[i], MS_VIA_KERNEL);
	if (!err)
		err = stream_emit_vma_writes(s, smp, t);
	thread_clear(t);
	return err;
}

static const struct pending_map *covering_map(const struct thread *t, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < t->nr_maps; i++)
		if (t->maps[i].m.vma_start <= start && end <= t->maps[i].m.vma_end)
			return &t->maps[i];
	return NULL;
}

static int on_exit_mmap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t,
			uint64_t ret)
{
	uint64_t start = ret, end = ret + PAGE_ALIGN(t->args[1]);
	const struct pending_map *pm;
	struct ms_event ev;
	int err;

	if (t->sc == SC_SHMAT && t->nr_maps) {
		start = t->maps[0].m.vma_start;
		end = t->maps[0].m.vma_end;
	}
	pm = covering_map(t, start, end);
	if (!pm)
		return 0;               /* no MMAP2 in the window: nothing we can name */
	if (s->nr_unmapping && t->sc == SC_MMAP && !(t->args[3] & MAP_FIXED) &&
	    (err = stream_unmaps_overtaken(s, smp, start, end)))
		return err;
	base_event(&ev, MS_EV_MAP, smp);
	ev.pid = pm->pid;
	ev.map = pm->m;
	ev.map.start = start;
	ev.map.end = end;
	if (ev.map.ino || ev.map.maj || ev.map.min)
		ev.map.pgoff = pm->m.pgoff + (start - pm->m.vma_start);
	ev.map.name = pm->name;
	ev.map.via = t->sc == SC_SHMAT ? MS_VIA_SHMAT : MS_VIA_MMAP;
	ev.map.fixed = t->sc == SC_MMAP && (t->args[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE));
	ev.map.noreserve = t->sc == SC_MMAP && (t->args[3] & MAP_NORESERVE);
	ev.map.populate = t->sc == SC_MMAP && (t->args[3] & (MAP_POPULATE | MAP_NONBLOCK)) == MAP_POPULATE;
	/* The record says MAP_LOCKED for mlockall(MCL_FUTURE)'s lock too, on fault or not: the model has that. */
	if (t->sc == SC_MMAP && !(t->args[3] & MAP_LOCKED))
		ev.map.flags &= ~(uint32_t)MAP_LOCKED;
	ev.map.alloc_chain = t->chain_len ? t->chain : NULL;
	ev.map.alloc_chain_len = t->chain_len;
	ev.map.alloc_stack = t->stack_len ? t->stack : NULL;
	ev.map.alloc_stack_len = t->stack_len;
	ev.chain = ev.map.alloc_chain;
	ev.chain_len = ev.map.alloc_chain_len;
	ev.stack = ev.map.alloc_stack;
	ev.stack_len = ev.map.alloc_stack_len;
	ev.uregs = t->regs_mask ? t->regs : NULL;
	ev.uregs_mask = t->regs_mask;
	ev.ustack = t->ustack_len ? t->ustack_at : NULL;
	ev.ustack_len = t->ustack_len;
	return emit(s, &ev);
}

static uint64_t *brk_slot(struct ms_stream *s, uint32_t pid)
{
	uint64_t *b = ms_u32map_get(&s->brks, pid);

	if (!b && (b = calloc(1, sizeof(*b))) && ms_u32map_put(&s->brks, pid, b)) {
		free(b);
		b = NULL;
	}
	return b;
}

/*
 * Advice that releases pages, that changes VMA flags (which splits and
 * merges VMAs), or that makes anon_vmas (POPULATE_WRITE, and POPULATE_READ
 * where a read fault takes a page of its own: which VMAs merge).
 */
static bool wanted_advice(const struct ms_stream *s, uint64_t advice)
{
	return advice <= MADV_SEQUENTIAL /* NORMAL, RANDOM: read-ahead flags */ ||
	       advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE ||
	       advice == MADV_POPULATE_WRITE || advice == 24 /* DONTNEED_LOCKED */ || advice == 25 /* COLLAPSE */ ||
	       (advice >= MADV_DONTFORK && advice <= MADV_KEEPONFORK) ||
	       (advice == MADV_POPULATE_READ && ms_stream_facts_read_fault_page(&s->facts));
}

/*
 * The VMA tree's writes made during a syscall, after the change the syscall
 * made: what the kernel ended with overrides the model's merge rules.
 */
int stream_emit_vma_writes(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	struct ms_event ev;
	size_t i;
	int err = 0;

	for (i = 0; i < t->nr_vmas && !err; i++) {
		base_event(&ev, MS_EV_VMA, smp);
		ev.vma.start = t->vmas[i][0];
		ev.vma.end = t->vmas[i][1];
		err = emit(s, &ev);
	}
	t->nr_vmas = 0;
	return err;
}

/*
 * mprotect: the range, then the VMAs the kernel wrote for it (each an MMAP2
 * between entry and exit). A call that failed (a hole, a sealed VMA, a
 * protection a VMA may not have) changed the VMAs before the one it failed
 * at, each with its MMAP2 (mprotect_fixup), and nothing after: the range
 * ends where the last of them does. No MMAP2, no change.
 */
static int on_exit_protect(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	uint64_t end = t->args[0] + PAGE_ALIGN(t->args[1]), upto = 0;
	struct ms_event ev;
	size_t i;
	int err;

	for (i = 0; ret && i < t->nr_maps; i++)
		if (t->maps[i].m.vma_end > upto)
			upto = t->maps[i].m.vma_end;
	if (ret && upto <= t->args[0])
		return 0;
	base_event(&ev, MS_EV_PROTECT, smp);
	ev.protect.start = t->args[0];
	ev.protect.end = ret && upto < end ? upto : end;
	ev.protect.prot = (uint32_t)t->args[2];
	err = stream_emit_with_chain(s, t, &ev);
	for (i = 0; i < t->nr_maps && !err; i++) {
		base_event(&ev, MS_EV_VMA, smp);
		ev.vma.start = t->maps[i].m.vma_start;
		ev.vma.end = t->maps[i].m.vma_end;
		err = stream_emit_with_chain(s, t, &ev);
	}
	return err;
}

/* brk: the break moved from the process's last one, *brk, to ret. 0 or what the emit returned. */
static int on_exit_brk(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret,
		       uint64_t *brk)
{
	struct ms_event ev;
	int err = 0;

	base_event(&ev, MS_EV_BRK, smp);
	/* The first brk of a process attached to: the break before is unknown, old == new. */
	ev.brk.old_brk = *brk ? *brk : ret;
	ev.brk.new_brk = ret;
	if (t->nr_maps) {
		ev.brk.vma_start = t->maps[0].m.vma_start;
		ev.brk.vma_end = t->maps[0].m.vma_end;
	}
	if (ev.brk.old_brk != ev.brk.new_brk || t->nr_maps || !*brk)
		err = stream_emit_with_chain(s, t, &ev);
	*brk = ret;
	return err;
}

static int on_exit_mremap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	if (t->unmapped)
		return 0;                 /* applied when another thread's map overtook it */
	return stream_emit_remap(s, smp, t, smp->tid, ret);
}

/*
 * munmap: what it unmapped. One refused (-EPERM) at a sealed VMA unmapped
 * nothing, but split the VMA at its start first where that one is not
 * sealed itself (mm/vma.c, vms_gather_munmap_vmas): the model makes that
 * split. Other failures changed nothing.
 */
static int on_exit_munmap(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	struct ms_event ev;

	if (t->unmapped)
		return 0;                 /* applied when another thread's map overtook it */
	if (!ret)
		return stream_emit_unmap(s, smp, t, smp->tid);
	if (ret != (uint64_t)-EPERM || t->args[1] > USER_END)
		return 0;
	base_event(&ev, MS_EV_VMA_ATTR, smp);
	ev.vma_attr.start = t->args[0];
	ev.vma_attr.end = t->args[0] + PAGE_ALIGN(t->args[1]);
	ev.vma_attr.what = MS_VMA_UNMAP_REFUSED;
	ev.vma_attr.tree = s->has_tree;
	return stream_emit_with_chain(s, t, &ev);
}

static int on_syscall_exit(struct ms_stream *s, const struct ms_sample *smp, struct thread *t, uint64_t ret)
{
	struct ms_event ev;
	uint64_t *brk;
	int err = 0;

	switch (t->sc) {
	case SC_MMAP:
	case SC_SHMAT:
		if (!IS_ERR_VALUE(ret))
			err = on_exit_mmap(s, smp, t, ret);
		break;
	case SC_MUNMAP:
		err = on_exit_munmap(s, smp, t, ret);
		stream_unmapping_closed(s, smp->tid);
		break;
	case SC_MREMAP:
		if (!IS_ERR_VALUE(ret))
			err = on_exit_mremap(s, smp, t, ret);
		stream_unmapping_closed(s, smp->tid);
		break;
	case SC_MPROTECT:
	case SC_PKEY_MPROTECT:            /* mprotect with a protection key (-1: none), the same VMA changes */
		err = on_exit_protect(s, smp, t, ret);
		break;
	case SC_BRK:
		if (!(brk = brk_slot(s, smp->pid)))
			return -ENOMEM;
		err = on_exit_brk(s, smp, t, ret, brk);
		break;
	case SC_MADVISE:
		/*
		 * Over a hole, the advice is applied to every VMA, then -ENOMEM
		 * (madvise_walk_vmas); POPULATE_WRITE fills VMAs in turn up to a
		 * hole (-ENOMEM) or one it may not write (-EINVAL); POPULATE_READ
		 * one it may not read.
		 */
		if ((ret && ret != (uint64_t)-ENOMEM &&
		     (ret != (uint64_t)-EINVAL || (t->args[2] != MADV_POPULATE_WRITE && t->args[2] != MADV_POPULATE_READ))) ||
		    !wanted_advice(s, t->args[2]))
			break;
		base_event(&ev, MS_EV_MADVISE, smp);
		ev.madvise.start = t->args[0];
		ev.madvise.end = t->args[0] + PAGE_ALIGN(t->args[1]);
		ev.madvise.advice = (uint32_t)t->args[2];
		ev.madvise.tree = s->has_tree;
		err = stream_emit_with_chain(s, t, &ev);
		break;
	case SC_SHMDT:
		if (ret)
			break;
		base_event(&ev, MS_EV_SHMDT, smp);
		ev.shmdt.addr = t->args[0];
		err = stream_emit_with_chain(s, t, &ev);
		break;
	case SC_MLOCK:
	case SC_MLOCK2:
	case SC_MUNLOCK:
	case SC_MLOCKALL:
	case SC_MUNLOCKALL:
		/* -ENOMEM over a gap: the VMAs before it changed (apply_vma_lock_flags). */
		if (!ret || (ret == (uint64_t)-ENOMEM && t->sc != SC_MLOCKALL && t->sc != SC_MUNLOCKALL))
			err = stream_exit_mlock(s, smp, t, ret);
		break;
	case SC_MSEAL:
	case SC_MBIND:
	case SC_HOME_NODE:
		if (!ret || (t->sc == SC_HOME_NODE && ret == (uint64_t)-EOPNOTSUPP))
			err = stream_exit_vma_attr(s, smp, t);
		break;
	default:
		err = stream_lifecycle_exit(s, smp, t, ret);
		break;
	}
	if (!err)
		err = stream_emit_vma_writes(s, smp, t);
	thread_clear(t);
	return err;
}

/* Changes made by a syscall carry its call chain. */
int stream_emit_with_chain(struct ms_stream *s, struct thread *t, struct ms_event *ev)
{
	ev->chain = t->chain_len ? t->chain : NULL;
	ev->chain_len = t->chain_len;
	ev->stack = t->stack_len ? t->stack : NULL;
	ev->stack_len = t->stack_len;
	ev->uregs = t->regs_mask ? t->regs : NULL;
	ev->uregs_mask = t->regs_mask;
	ev->ustack = t->ustack_len ? t->ustack_at : NULL;
	ev->ustack_len = t->ustack_len;
	return emit(s, ev);
}

/*
 * An entry whose exit the file does not record (perf record -e
 * syscalls:sys_enter_munmap alone): nothing would ever close it, so it is
 * never left open to hold the maps that follow. What the entry says alone
 * is applied, as if it succeeded, where its arguments give the whole
 * change: munmap, mprotect, madvise and shmdt. mmap, brk, mremap and shmat
 * need the result, and the kernel's MMAP2 records show what they mapped.
 */
static int lone_enter(struct ms_stream *s, const struct ms_sample *smp, struct thread *t)
{
	/* Nothing checked these arguments: a range outside user space would have failed. */
	uint64_t len = t->sc == SC_SHMDT ? 0 : t->args[1];

	if (t->args[0] >= USER_END || len >= USER_END || PAGE_ALIGN(len) > USER_END - t->args[0])
		t->sc = -1;
	switch (t->sc) {
	case SC_MUNMAP:
	case SC_MPROTECT:
	case SC_PKEY_MPROTECT:
	case SC_MADVISE:
	case SC_SHMDT:
		return on_syscall_exit(s, smp, t, 0);
	}
	thread_clear(t);
	return 0;
}

/*
 * maple_tree:ma_write, in a followed task: a write of a VMA pointer over
 * [index, last] says that this range is one VMA now, exactly (the VMA tree
 * stores each VMA over its whole range). Writes of NULL (holes) and into
 * other maple trees (not page ranges in user space, or not a kernel
 * pointer) are left out: unmaps come from the syscalls. Inside a followed
 * syscall the writes wait for its exit, so that they come after its change.
 */
int stream_on_vma_tree(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint64_t start = field(ei, smp, 0), last = field(ei, smp, 1), val = field(ei, smp, 2);
	struct thread *t;
	struct ms_event ev;
	int err;

	if ((val && !(val >> 63)) || start & 4095 || (last & 4095) != 4095 || last >= USER_END || start > last)
		return 0;
	t = stream_thread_get(s, smp->tid);
	if (!t)
		return -ENOMEM;
	if (t->in_exec)
		return 0;                /* the new program's stack, in the tree of the address space to come */
	if (!val)                    /* a hole: of a call in flight since before the recording (inflight.c)? */
		return t->sc < 0 && !t->entered && s->has_enter[SC_MUNMAP] ?
			       stream_hole_note(s, smp, start, last + 1) : 0;
	if (t->locked_mm && (err = stream_tree_owner(s, t, smp, start, last + 1)))
		return err < 0 ? err : 0;    /* another process's tree */
	if (s->nr_holes && (err = stream_holes_cut(s, smp->pid, start, last + 1)))
		return err;
	if (t->sc < 0) {
		base_event(&ev, MS_EV_VMA, smp);
		ev.vma.start = start;
		ev.vma.end = last + 1;
		return emit(s, &ev);
	}
	if (MS_GROW(t->vmas, t->nr_vmas + 1, t->cap_vmas, 8, SIZE_MAX, false))
		return -ENOMEM;
	t->vmas[t->nr_vmas][0] = start;
	t->vmas[t->nr_vmas++][1] = last + 1;
	return 0;
}

/*
 * The exit of a call in flight since before the recording: what it wrote
 * NULL over is unmapped where it unmaps (and succeeded), and forgotten
 * otherwise.
 */
static int exit_in_flight(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	uint64_t ret = field(ei, smp, 0);

	switch (ei->sc) {
	case SC_MUNMAP:
	case SC_SHMDT:
		if (ret)
			break;
		return stream_holes_unmap(s, smp);
	case SC_MREMAP:
	case SC_BRK:
		if (IS_ERR_VALUE(ret))
			break;
		return stream_holes_unmap(s, smp);
	default:
		break;
	}
	stream_holes_drop(s, smp->pid, smp->tid);
	return 0;
}

/*
 * A thread's stack pointer names its stack; the main thread's is told once
 * after its exec (at the execve's exit where the file has it, else at the
 * first call), for where its stack began.
 */
static bool sp_wanted(struct thread *t, const struct ms_sample *smp)
{
	if (!smp->has_sp)
		return false;
	if (smp->tid != smp->pid)
		return true;
	if (t->sp_told)
		return false;
	t->sp_told = true;
	return true;
}

int stream_on_syscall(struct ms_stream *s, const struct evinfo *ei, const struct ms_sample *smp)
{
	struct thread *t = stream_thread_get(s, smp->tid);
	int k, err;

	if (!t)
		return -ENOMEM;
	/* At a followed call's entry or exit no mmap lock is held (a downgraded one's release is not seen). */
	stream_mm_unlock(t);
	if (ei->kind == EK_ENTER && sp_wanted(t, smp) && (err = stream_thread_sp(s, smp)))
		return err;
	if (ei->sc == SC_EXECVE || ei->sc == SC_EXECVEAT) {
		/* Its exit comes from the new program, or says it failed: the caller's maps either way. */
		t->in_exec = ei->kind == EK_ENTER;
		t->exec_pid = smp->pid;
		/*
		 * The new program's registers at its exit are those it starts
		 * with: its stack pointer is where its stack begins
		 * (mm->start_stack, which /proc's [stack] goes by), exactly.
		 */
		if (ei->kind == EK_EXIT && !field(ei, smp, 0) && smp->has_sp && smp->tid == smp->pid) {
			t->sp_told = true;
			return stream_thread_sp(s, smp);
		}
		return 0;
	}
	t->in_exec = false;                  /* any other call: the execve returned, its exit lost */
	if (ei->kind == EK_ENTER) {
		if ((t->nr_maps || t->nr_vmas) && (err = flush_thread_maps(s, smp, t)))   /* an exit was lost */
			return err;
		if (!t->entered && s->nr_holes)
			stream_holes_drop(s, smp->pid, smp->tid);
		t->entered = true;
		t->sc = (int)ei->sc;
		t->pid = smp->pid;
		t->unmapped = false;             /* of this call: a call before whose exit was lost had its own */
		for (k = 0; k < 5; k++)
			t->args[k] = k < ei->nr_fields ? field(ei, smp, k) : 0;
		if (s->has_exit[t->sc] && (err = stream_unmapping_open(s, t, smp->tid)))
			return err;
		if (t->sc == SC_IOCTL)
			stream_uffd_enter(t, smp);
		if ((err = keep_chain(s, t, smp)))
			return err;
		return s->has_exit[ei->sc] ? 0 : lone_enter(s, smp, t);
	}
	if (t->sc != (int)ei->sc) {          /* an exit whose entry we did not see */
		if (ei->sc == SC_BRK) {
			uint64_t *b = brk_slot(s, smp->pid);

			if (b)
				*b = field(ei, smp, 0);
		}
		return t->entered || !s->nr_holes ? 0 : exit_in_flight(s, ei, smp);
	}
	return on_syscall_exit(s, smp, t, field(ei, smp, 0));
}

/*
 * A thread's stack pointer from a sample with no data address (a syscall's
 * entry, or the stack pointer's own event): it names the thread's stack
 * where the page-fault samples do not carry it.
 */
int stream_thread_sp(struct ms_stream *s, const struct ms_sample *smp)
{
	struct ms_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MS_EV_THREAD_SP;
	ev.time = smp->time;
	ev.pid = smp->pid;
	ev.tid = smp->tid;
	ev.cpu = smp->cpu;
	ev.sample.sp = smp->sp;
	ev.sample.has_sp = true;
	return emit(s, &ev);
}

/* MMAP and MMAP2 bodies; the name ends before the sample_id trailer of id bytes. */
static int take_mmap(struct ms_stream *s, const struct perf_event_header *rec, size_t id, struct pending_map *pm)
{
	const unsigned char *p = (const unsigned char *)(rec + 1);
	const unsigned char *end = (const unsigned char *)rec + (rec->size > id ? rec->size - id : 0);
	size_t fixed = rec->type == PERF_RECORD_MMAP2 ? 8 + 24 + 24 + 8 : 8 + 24;
	uint32_t pidtid[2];
	uint64_t v[3];
	const char *name;

	memset(pm, 0, sizeof(*pm));
	if ((size_t)(end - p) <= fixed)
		return -EBADMSG;
	memcpy(pidtid, p, 8);
	memcpy(v, p + 8, 24);
	/*
	 * A damaged address or length: nothing may iterate over a range outside
	 * user space. The kernel's own maps (pid -1) and [vsyscall], which
	 * /proc shows at a fixed kernel address, are what they say.
	 */
	if (pidtid[0] != UINT32_MAX && !(v[0] == VSYSCALL_START && v[1] == 4096) &&
	    (v[0] >= USER_END || v[1] > USER_END - v[0]))
		return -ERANGE;
	pm->pid = pidtid[0];
	pm->m.start = pm->m.vma_start = v[0];
	pm->m.end = pm->m.vma_end = v[0] + v[1];
	pm->m.pgoff = v[2];
	if (rec->type == PERF_RECORD_MMAP2) {
		if (!(rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			memcpy(&pm->m.maj, p + 32, 4);
			memcpy(&pm->m.min, p + 36, 4);
			memcpy(&pm->m.ino, p + 40, 8);
		}
		memcpy(&pm->m.prot, p + 56, 4);
		memcpy(&pm->m.flags, p + 60, 4);
	} else {
		pm->m.prot = PROT_READ | ((rec->misc & PERF_RECORD_MISC_MMAP_DATA) ? PROT_WRITE : PROT_EXEC);
		pm->m.flags = MAP_PRIVATE;
	}
	name = (const char *)p + fixed;
	pm->name = stream_record_name(s, rec, name, (const char *)end);
	return pm->name ? 0 : -ENOMEM;
}

int stream_on_mmap(struct ms_stream *s, const struct perf_event_header *rec, const struct ms_sample *smp)
{
	struct pending_map pm;
	struct thread *t = ms_u32map_get(&s->threads, smp->tid);
	int err;

	err = take_mmap(s, rec, ms_sample_id_size(s->ev[stream_trailer_evsel(s, rec)].attr), &pm);
	if (err) {
		s->st.bad_records += err == -EBADMSG;      /* damage: what the map was is lost */
		if (s->src)
			ms_warn("skipping an MMAP record at byte offset %llu %s",
				(unsigned long long)stream_offset_of(s, rec),
				err == -ERANGE ? "whose range lies outside the user address space" :
				"that does not fit");
		return err == -ENOMEM ? err : 0;
	}
	if (pm.pid == UINT32_MAX || (t && t->in_exec)) {   /* the kernel's own maps; the new program's stack */
		free(pm.name);
		return 0;
	}
	if (s->has_exit[SC_IO_DESTROY] && (err = stream_aio_note(s, &pm))) {
		free(pm.name);
		return err;
	}
	/*
	 * Inside a followed syscall, the map belongs to it; the stack grows on
	 * its own, but not in an mprotect, which touches no user memory: a
	 * [stack] there is the VMA it changed, merged again where it was split.
	 */
	if (t && t->sc >= 0 && (strcmp(pm.name, "[stack]") || t->sc == SC_MPROTECT || t->sc == SC_PKEY_MPROTECT)) {
		if (MS_GROW(t->maps, t->nr_maps + 1, t->cap_maps, 2, SIZE_MAX, false)) {
			free(pm.name);
			return -ENOMEM;
		}
		t->maps[t->nr_maps++] = pm;
		return 0;
	}
	err = emit_map(s, smp, &pm, s->has_syscalls ? MS_VIA_KERNEL : MS_VIA_UNKNOWN);
	free(pm.name);
	return err;
}

int stream_flush_threads(struct ms_stream *s)
{
	struct ms_sample smp = { .time = s->st.last_time };
	struct thread *t;
	size_t pos = 0;
	uint32_t tid;
	int err = 0;

	while (!err && (t = ms_u32map_next(&s->threads, &pos, &tid))) {
		smp.tid = tid;
		if (t->nr_maps || t->nr_vmas)
			err = flush_thread_maps(s, &smp, t);
	}
	return err;
}

void stream_thread_gone(struct ms_stream *s, uint32_t pid, uint32_t tid)
{
	struct thread *t = ms_u32map_del(&s->threads, tid);

	if (s->nr_holes)
		stream_holes_drop(s, pid, tid);
	if (tid == pid)
		stream_mm_forget(s, pid);
	if (!t)
		return;
	thread_clear(t);
	free(t->chain);
	free(t->ustack);
	free(t->maps);
	free(t->vmas);
	free(t);
}

void stream_free_threads(struct ms_stream *s)
{
	struct thread *t;
	size_t pos = 0;
	void *b;

	while ((t = ms_u32map_next(&s->threads, &pos, NULL))) {
		thread_clear(t);
		free(t->chain);
		free(t->ustack);
		free(t->maps);
		free(t->vmas);
		free(t);
	}
	free(s->holes);
	s->holes = NULL;
	s->nr_holes = s->cap_holes = 0;
	stream_unmaps_free(s);
	pos = 0;
	while ((b = ms_u32map_next(&s->brks, &pos, NULL)))
		free(b);
	ms_u32map_release(&s->threads);
	ms_u32map_release(&s->brks);
	stream_mm_free(s);
}
