/*
 * The kernel's VMA rules that no record shows (mm/vma.c, mm/madvise.c,
 * mm/mlock.c, mm/mseal.c, mm/mempolicy.c, ipc/shm.c): when two
 * neighbouring VMAs are one, which flags madvise, mlock and mseal set,
 * which policy mbind does, where an anon_vma comes from and goes, and
 * which VMAs shmdt detaches.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "aspace/internal.h"
#include "util/str.h"

/* One VMA has one anon_vma: after a merge, the one that had it gives it to the rest. */
void ms_vma_share_anon(struct proc *p, size_t i)
{
	size_t first, last, k;
	uint32_t anon = 0;

	ms_pieces_vma(p, i, &first, &last);
	for (k = first; k <= last && !anon; k++)
		anon = p->p[k].anon;
	for (k = first; k <= last; k++)
		p->p[k].anon = anon;
}

/* Whether ra and rb are of the same file (both of none: anonymous memory, which has no inode). */
static bool same_file(const struct ms_region *ra, const struct ms_region *rb)
{
	return ra->ino == rb->ino && ra->maj == rb->maj && ra->min == rb->min;
}

/*
 * Whether b's page offsets run on from a's, as a merge and a shared
 * anon_vma need (can_vma_merge_before, anon_vma_compatible), anonymous
 * memory's too: its address's where it was made, its own where mremap
 * moved it with an anon_vma (apply.c, remap.c). The main stack's pieces
 * grow here with none, and always run on in the kernel.
 */
static bool offsets_run_on(const struct ms_region *ra, const struct piece *a, const struct piece *b)
{
	return ra->kind == MS_KIND_STACK || a->pgoff + (a->end - a->start) == b->pgoff;
}

/*
 * Whether the VMA ending with piece a and the one starting with piece b
 * (next to it) are one VMA to the kernel's merge rules (mm/vma.c,
 * is_mergeable_vma): the same protection, sharing and flags, and for a
 * file the same file at contiguous offsets, and anon_vmas that allow it
 * (is_mergeable_anon_vma): the same one, or none on one side while the
 * other's is not a fork's copy.
 */
static bool mergeable(const struct ms_aspace *as, const struct piece *a, const struct piece *b)
{
	const struct ms_region *ra = as->regions[a->region], *rb = as->regions[b->region];
	bool fa = region_has_file(ra), fb = region_has_file(rb);

	if (a->end != b->start || a->prot != b->prot || a->flags != b->flags || a->vmflags != b->vmflags ||
	    a->mpol != b->mpol || a->name != b->name)
		return false;
	if (a->anon != b->anon && (a->anon ? b->anon || (a->anon & ANON_FORKED) : (b->anon & ANON_FORKED)))
		return false;
	/* VM_GROWSDOWN on both sides or neither: the main stack's pieces merge again */
	if (fa != fb || (ra->kind == MS_KIND_STACK) != (rb->kind == MS_KIND_STACK))
		return false;
	if (fa && !same_file(ra, rb))
		return false;
	return offsets_run_on(ra, a, b);
}

/* Piece k joins the VMA before it where the kernel would merge the two; they then share one anon_vma. */
void ms_vma_join_if_mergeable(struct ms_aspace *as, struct proc *p, size_t k)
{
	p->p[k].join = k > 0 && mergeable(as, &p->p[k - 1], &p->p[k]);
	if (p->p[k].join)
		ms_vma_share_anon(p, k);
}

/* VM_NORESERVE and VM_ACCOUNT of a new map (mm/mmap.c, do_mmap and accountable_mapping). */
uint16_t ms_vma_map_accounting(const struct ms_event_map *m)
{
	if (m->noreserve)
		return VF_NORESERVE;
	return (m->prot & PROT_WRITE) && !(m->flags & MAP_SHARED) ? VF_ACCOUNT : 0;
}

/* What an advice does to a VMA's flags: the flags it sets and those it clears; false for other advice. */
static bool advice_flags(uint32_t advice, uint16_t *set, uint16_t *clear)
{
	*set = *clear = 0;
	switch (advice) {
	case MADV_NORMAL: *clear = VF_SEQ_READ | VF_RAND_READ; break;
	case MADV_SEQUENTIAL: *set = VF_SEQ_READ; *clear = VF_RAND_READ; break;
	case MADV_RANDOM: *set = VF_RAND_READ; *clear = VF_SEQ_READ; break;
	case MADV_DONTFORK: *set = VF_DONTFORK; break;
	case MADV_DOFORK: *clear = VF_DONTFORK; break;
	case MADV_MERGEABLE: *set = VF_MERGEABLE; break;
	case MADV_UNMERGEABLE: *clear = VF_MERGEABLE; break;
	case MADV_HUGEPAGE: *set = VF_HUGEPAGE; *clear = VF_NOHUGEPAGE; break;
	case MADV_NOHUGEPAGE: *set = VF_NOHUGEPAGE; *clear = VF_HUGEPAGE; break;
	case MADV_DONTDUMP: *set = VF_DONTDUMP; break;
	case MADV_DODUMP: *clear = VF_DONTDUMP; break;
	case MADV_WIPEONFORK: *set = VF_WIPEONFORK; break;
	case MADV_KEEPONFORK: *clear = VF_WIPEONFORK; break;
	default: return false;
	}
	return true;
}

/*
 * What a change does to a VMA: flags set and cleared, and a NUMA policy
 * (mpol >= 0: mbind's) or a home node for the policy it has (home >= 0),
 * userfaultfd's registration (uffd >= 0: the VF_UFFD_* flags, 0 to
 * unregister) or an anon_vma_name (name >= 0: its id, 0 none). ksm:
 * only on VMAs KSM may merge (MADV_MERGEABLE passes over the others).
 */
struct vma_change {
	uint16_t set, clear;
	int64_t mpol, home, uffd, name;
	bool ksm;
};

/* Whether KSM may merge pc's VMA (mm/ksm.c, ksm_compatible): not shared, not hugetlb, not [vdso] or [vvar]. */
bool ms_vma_ksm_may_merge(const struct ms_aspace *as, const struct piece *pc)
{
	return !(pc->flags & (MAP_SHARED | MAP_HUGETLB)) && as->regions[pc->region]->kind != MS_KIND_VDSO;
}

/* What a VMA becomes: its flags, policy and name. */
struct vma_now {
	uint16_t vf;
	uint32_t mpol, name;
};

enum { MPOL_MODE_BIND = 2, MPOL_MODE_PREFERRED_MANY = 5 };

/*
 * userfaultfd_register_range: a VMA of the context that has every flag
 * asked for already is skipped; the others take exactly those. Unregister
 * clears them all.
 */
static uint16_t uffd_flags(uint16_t vf, int64_t uffd)
{
	if (uffd > 0 && (vf & uffd) == uffd)
		return vf;
	return (uint16_t)((vf & ~VF_UFFD) | uffd);
}

/* Anonymous memory, shared (shmem) or not: of no file, or of /dev/zero (which a map makes anonymous). */
static bool anon_memory(const struct ms_region *r)
{
	return !region_has_file(r) || !strncmp(r->proc_name, "/dev/zero", 9);
}

/* vma_is_anonymous(): no vm_ops, a private map of anonymous memory. */
bool ms_vma_is_anonymous(const struct ms_aspace *as, const struct piece *pc)
{
	return !(pc->flags & MAP_SHARED) && anon_memory(as->regions[pc->region]);
}

/*
 * A read fault in an anonymous VMA (do_anonymous_page) that takes a page
 * of its own where Linux would map the zero page makes the VMA's anon_vma
 * as a write fault does. Any VMA it may read or execute; not [vdso] or
 * [vvar], which have vm_ops; a file's takes the page cache's page.
 */
bool ms_vma_read_fault_anon(const struct ms_aspace *as, const struct piece *pc)
{
	return !pc->anon && (pc->prot & (PROT_READ | PROT_EXEC)) && ms_vma_is_anonymous(as, pc) &&
	       as->regions[pc->region]->kind != MS_KIND_VDSO;
}

/* Whether a prctl may name pc's VMA: anonymous memory, shared or not; a file's fails with -EBADF. */
static bool nameable(const struct ms_aspace *as, const struct piece *pc)
{
	return anon_memory(as->regions[pc->region]);
}

/*
 * What piece pc's VMA becomes; false where the walk stops there:
 * set_mempolicy_home_node fails (-EOPNOTSUPP) at a VMA whose policy takes
 * no home node, having changed those before it (one with no policy it
 * leaves as it is); an anon name fails (-EBADF) at a file's VMA.
 */
static bool vma_changed(const struct ms_aspace *as, const struct piece *pc, const struct vma_change *ch,
			struct vma_now *now)
{
	now->vf = (uint16_t)((pc->vmflags | ch->set) & ~ch->clear);
	if (ch->uffd >= 0)
		now->vf = uffd_flags(now->vf, ch->uffd);
	now->mpol = ch->mpol >= 0 ? (uint32_t)ch->mpol : pc->mpol;
	now->name = ch->name >= 0 ? (uint32_t)ch->name : pc->name;
	if (ch->name >= 0 && !nameable(as, pc))
		return false;
	if (ch->home < 0 || !pc->mpol)
		return true;
	if ((pc->mpol & 0xff) != MPOL_MODE_BIND && (pc->mpol & 0xff) != MPOL_MODE_PREFERRED_MANY)
		return false;
	now->mpol = (pc->mpol & 0xffff) | (uint32_t)(ch->home + 1) << 16;
	return true;
}

/*
 * A change of VMA flags (madvise, mlock, mseal) or policy (mbind): VMA by
 * VMA, one whose flags and policy would not change is left whole; the
 * others are split at the range's ends, take them, and merge with their
 * neighbours where those now match. The kernel writes no record of any of
 * it. tree: the VMA tree's writes follow and set the VMAs; pieces are
 * split to hold their flags, and nothing is merged or parted here.
 */
static int change_vmas(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end,
		       const struct vma_change *ch, bool tree)
{
	size_t i = lower(p, start), first, last, j, k;
	struct vma_now now;
	uint64_t a, b;
	int err;

	while (i < p->n && p->p[i].start < end) {
		ms_pieces_vma(p, i, &first, &last);
		b = p->p[last].end < end ? p->p[last].end : end;
		if (!vma_changed(as, &p->p[i], ch, &now))
			break;
		/* [vdso], [vvar]: VM_SPECIAL, which neither mlock nor this advice changes. */
		if ((now.vf == p->p[i].vmflags && now.mpol == p->p[i].mpol && now.name == p->p[i].name) ||
		    as->regions[p->p[i].region]->kind == MS_KIND_VDSO || (ch->ksm && !ms_vma_ksm_may_merge(as, &p->p[i]))) {
			i = last + 1;
			continue;
		}
		a = p->p[first].start > start ? p->p[first].start : start;
		if ((err = ms_pieces_carve(p, a, b, &i, &j)))
			return err;
		for (k = i; k < j; k++) {
			p->p[k].vmflags = now.vf;
			p->p[k].mpol = now.mpol;
			p->p[k].name = now.name;
		}
		if (i < p->n && !tree)
			ms_vma_join_if_mergeable(as, p, i);
		if (j < p->n && !tree)
			ms_vma_join_if_mergeable(as, p, j);
		i = j;
	}
	return 0;
}

/*
 * Where the VMAs that run on from start without a gap end, up to end
 * (start where it lies in a hole); and before the first that lacks a
 * protection bit of need.
 */
static uint64_t mapped_to(const struct proc *p, uint64_t start, uint64_t end, uint32_t need)
{
	size_t i = lower_c(p, start);
	uint64_t at = start;

	for (; i < p->n && p->p[i].start <= at && at < end && (p->p[i].prot & need) == need; i++)
		at = p->p[i].end;
	return at < end ? at : end;
}

int ms_vma_advise(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	struct vma_change ch = { .mpol = -1, .home = -1, .uffd = -1, .name = -1 };

	/*
	 * Every VMA, locked on fault or not, up to a hole (-ENOMEM) or one not
	 * writable (-EINVAL): madvise_populate faults them in turn. A read
	 * (up to one not readable) maps the zero page and makes no anon_vma,
	 * but where the recording's machine takes a page of its own.
	 */
	if (ev->madvise.advice == MADV_POPULATE_WRITE) {
		ms_vma_populate(as, p, ev->madvise.start, mapped_to(p, ev->madvise.start, ev->madvise.end, PROT_WRITE),
				0, 0);
		return 0;
	}
	if (ev->madvise.advice == MADV_POPULATE_READ) {
		if (as->read_fault_page)
			ms_vma_populate(as, p, ev->madvise.start,
					mapped_to(p, ev->madvise.start, ev->madvise.end, PROT_READ), 0, 0);
		return 0;
	}
	if (!advice_flags(ev->madvise.advice, &ch.set, &ch.clear))
		return 0;
	ch.ksm = ev->madvise.advice == MADV_MERGEABLE;
	return change_vmas(as, p, ev->madvise.start, ev->madvise.end, &ch, ev->madvise.tree);
}

/*
 * A munmap refused at a sealed VMA: the VMA holding start, itself not
 * sealed, was split there before the kernel's walk of the range reached a
 * sealed one, and its halves stay apart (a split merges nothing). Nothing
 * is done where start lies in a hole or on a VMA's start, or where no VMA
 * of the range is known sealed. tree: its writes make the split.
 */
static int unmap_refused(struct proc *p, uint64_t start, uint64_t end, bool tree)
{
	size_t i = lower(p, start), first, last, k;
	bool sealed = false;
	int err;

	if (tree || i == p->n || p->p[i].start > start || (p->p[i].vmflags & VF_SEALED))
		return 0;
	ms_pieces_vma(p, i, &first, &last);
	for (k = last + 1; k < p->n && p->p[k].start < end && !sealed; k++)
		sealed = p->p[k].vmflags & VF_SEALED;
	if (p->p[first].start == start || !sealed)
		return 0;
	if ((err = ms_pieces_carve(p, start, p->p[last].end, &i, &k)))
		return err;
	p->p[i].join = false;
	return 0;
}

/*
 * prctl(PR_SET_MEMORY_MERGE): on, VM_MERGEABLE on every VMA KSM may merge
 * (ksm_add_vmas), and on such new ones (ksm_vma_flags); off, cleared on
 * every VMA (ksm_del_vmas). Flags set in place: nothing splits or merges.
 */
static void merge_any(const struct ms_aspace *as, struct proc *p, bool on)
{
	size_t i;

	if (p->merge_any == on)
		return;                  /* ksm_enable_merge_any, ksm_disable_merge_any: nothing to do */
	p->merge_any = on;
	for (i = 0; i < p->n; i++)
		if (!on)
			p->p[i].vmflags &= (uint16_t)~VF_MERGEABLE;
		else if (ms_vma_ksm_may_merge(as, &p->p[i]))
			p->p[i].vmflags |= VF_MERGEABLE;
}

/*
 * mseal sets VM_SEALED; mbind sets a policy (MPOL_DEFAULT: none);
 * set_mempolicy_home_node a home node; userfaultfd its VM_UFFD_* flags;
 * prctl an anon_vma_name; a refused munmap splits.
 */
int ms_vma_set_attr(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	struct vma_change ch = { .mpol = -1, .home = -1, .uffd = -1, .name = -1 };

	switch (ev->vma_attr.what) {
	case MS_VMA_SEAL:
		ch.set = VF_SEALED;
		break;
	case MS_VMA_POLICY:
		ch.mpol = (ev->vma_attr.value & 0xff) ? ev->vma_attr.value & 0xffff : 0;
		break;
	case MS_VMA_HOME_NODE:
		ch.home = ev->vma_attr.value & 0x7fff;
		break;
	case MS_VMA_UFFD:
		ch.uffd = (int64_t)(ev->vma_attr.value & 7) * VF_UFFD_MISSING;
		break;
	case MS_VMA_UNMAP_REFUSED:
		return unmap_refused(p, ev->vma_attr.start, ev->vma_attr.end, ev->vma_attr.tree);
	case MS_VMA_ANON_NAME:
		if ((ch.name = ms_names_anon_id(as, ev->vma_attr.name)) < 0)
			return (int)ch.name;
		break;
	case MS_VMA_MERGE_ANY:
		merge_any(as, p, ev->vma_attr.value != 0);
		return 0;
	default:
		return 0;
	}
	return change_vmas(as, p, ev->vma_attr.start, ev->vma_attr.end, &ch, ev->vma_attr.tree);
}

static uint16_t lock_vmflags(uint32_t lock)
{
	return (uint16_t)((lock & MS_LOCK_LOCKED ? VF_LOCKED : 0) | (lock & MS_LOCK_ONFAULT ? VF_LOCKONFAULT : 0));
}

/*
 * mm_populate (a VMA locked, not on fault; MAP_POPULATE) and
 * madvise_populate fault pages in through get_user_pages, with a write
 * fault where the VMA is private and writable (populate_vma_page_range):
 * that makes its anon_vma, and no page-fault sample says so. A read fault
 * maps the zero page, and makes none, except where the recording's
 * machine takes a page of its own for it (fault_makes_anon).
 */
void ms_vma_populate(struct ms_aspace *as, struct proc *p, uint64_t start, uint64_t end, uint16_t mask,
		     uint16_t want)
{
	size_t i;

	for (i = lower(p, start); i < p->n && p->p[i].start < end; i++)
		if (fault_makes_anon(as, &p->p[i]) && (p->p[i].vmflags & mask) == want &&
		    as->regions[p->p[i].region]->kind != MS_KIND_VDSO)
			ms_vma_make_anon(as, p, i);
}

/*
 * Where a lock that failed with -ENOMEM stopped: apply_vma_lock_flags
 * changes the VMAs up to the first gap, then fails; with none (start in
 * a hole) nothing. A range with no gap failed before any change
 * (RLIMIT_MEMLOCK): nothing either.
 */
static uint64_t lock_gap(const struct proc *p, uint64_t start, uint64_t end)
{
	uint64_t at = mapped_to(p, start, end, 0);

	return at < end ? at : start;
}

/* mlock, munlock (a range), mlockall and munlockall (every VMA, and what new maps get). */
int ms_vma_lock(struct ms_aspace *as, struct proc *p, const struct ms_event *ev)
{
	uint64_t start = ev->mlock.all ? 0 : ev->mlock.start, end = ev->mlock.all ? UINT64_MAX : ev->mlock.end;
	struct vma_change ch = { .set = lock_vmflags(ev->mlock.lock), .mpol = -1, .home = -1, .uffd = -1, .name = -1 };
	int err;

	if (ev->mlock.to_gap && !ev->mlock.all && (end = lock_gap(p, start, end)) == start)
		return 0;

	if (ev->mlock.def >= 0)
		p->def_vmflags = lock_vmflags((uint32_t)ev->mlock.def);
	if (ev->mlock.def >= 0 && !ev->mlock.all)
		return 0;                        /* MCL_FUTURE alone */
	ch.clear = (uint16_t)(VF_LOCKS & ~ch.set);
	if ((err = change_vmas(as, p, start, end, &ch, ev->mlock.tree)))
		return err;
	ms_vma_populate(as, p, start, end, VF_LOCKS, VF_LOCKED);
	return 0;
}

/*
 * Whether VMAs a and b (next to it) could share an anon_vma:
 * anon_vma_compatible. The protection may differ (VM_ACCESS_FLAGS);
 * nothing else may, and the page offsets run on, as for a merge.
 */
static bool anon_compatible(const struct ms_aspace *as, const struct piece *a, const struct piece *b)
{
	const struct ms_region *ra = as->regions[a->region], *rb = as->regions[b->region];

	return a->end == b->start && a->flags == b->flags && a->vmflags == b->vmflags && a->mpol == b->mpol &&
	       same_file(ra, rb) && (ra->kind == MS_KIND_STACK) == (rb->kind == MS_KIND_STACK) &&
	       offsets_run_on(ra, a, b);
}

/* The first fault in piece i's VMA: it takes the next VMA's anon_vma, or the previous one's, or a new one. */
void __attribute__((noinline)) ms_vma_make_anon(struct ms_aspace *as, struct proc *p, size_t i)
{
	size_t first, last, k;
	uint32_t anon = 0, next;

	ms_pieces_vma(p, i, &first, &last);
	if (last + 1 < p->n && (next = p->p[last + 1].anon) && !(next & ANON_FORKED) &&
	    anon_compatible(as, &p->p[last], &p->p[last + 1]))
		anon = next;
	else if (first > 0 && (next = p->p[first - 1].anon) && !(next & ANON_FORKED) &&
		 anon_compatible(as, &p->p[first - 1], &p->p[first]))
		anon = next;
	if (!anon)
		anon = ++as->last_anon & ~ANON_FORKED;
	for (k = first; k <= last; k++)
		p->p[k].anon = anon;
}

/* A VMA of a SysV segment's attach (shm_vm_ops): shmat made it, or /proc named it so before the recording. */
static bool sysv_attach(const struct ms_region *r)
{
	return r->via == MS_VIA_SHMAT || !strncmp(r->proc_name, "/SYSV", 5);
}

/*
 * shmdt(addr) (ipc/shm.c, ksys_shmdt): the first VMA at or above addr of
 * an attach whose offset in the segment is its distance from addr goes,
 * then each VMA above it of the same attach whose offset is so too. What
 * mremap moved or mapped again elsewhere stays, as does what starts below
 * addr. The kernel stops at the segment's size too, which is not known
 * here: a VMA grown past the segment's end at its place goes as well.
 */
int ms_vma_shmdt(struct ms_aspace *as, struct proc *p, const struct ms_event *ev, struct ms_change *c)
{
	uint64_t addr = ev->shmdt.addr, e, lo = 0, hi = 0;
	const struct ms_region *r = NULL;
	size_t i = lower(p, addr), first, last;
	const struct piece *pc;
	int err;

	/* Piece by piece, each of a VMA that goes matching as its first does; none of one that starts below addr. */
	while (i < p->n) {
		pc = &p->p[i];
		if (pc->start < addr || pc->pgoff != pc->start - addr ||
		    (r ? pc->region != r->id : !sysv_attach(as->regions[pc->region]))) {
			i++;
			continue;
		}
		ms_pieces_vma(p, i, &first, &last);
		if (!r)
			lo = pc->start;
		r = as->regions[pc->region];
		hi = e = p->p[last].end;
		if ((err = ms_pieces_unmap(as, p, p->p[first].start, e, r->id, ev->time)))
			return err;
		i = lower(p, e);
	}
	if (c) {
		c->region = r;
		c->start = c->release_start = lo;
		c->end = c->release_end = hi;
		if (r)
			ms_str_copy(as->change_name, sizeof(as->change_name), r->name);
	}
	return 0;
}
