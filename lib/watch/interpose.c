/*
 * Relocation patching, as UCX's ucm does in its "reloc" mode: the calls a
 * program and its libraries make to munmap and kin go through their GOT
 * (PLT slots, or GOT entries with -fno-plt), and rewriting those slots
 * needs no symbol defined by us, so linking libmapscope changes nothing
 * until a watch opens in this mode, and closing it puts the slots back.
 *
 * What it cannot see (watch.h says so to users): raw syscalls, calls from
 * inside libc to its own internal aliases (free() returning a large block
 * calls __munmap directly), static binaries (no relocations to patch),
 * objects that resolve the functions themselves (dlsym) and other
 * processes. The hooks run in the caller's thread, in free() and in signal
 * handlers: they take no lock and allocate nothing; the ring does the same.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "watch/interpose.h"

#if defined(__x86_64__)
#define RELOC_JUMP_SLOT R_X86_64_JUMP_SLOT
#define RELOC_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define RELOC_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define RELOC_GLOB_DAT  R_AARCH64_GLOB_DAT
#endif

#define PAGE_UP(x) (((x) + 4095u) & ~(uint64_t)4095u)

static struct {
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*madvise)(void *, size_t, int);
	int (*shmdt)(const void *);
	int (*brk)(void *);
	void *(*sbrk)(intptr_t);
	void *(*dlopen)(const char *, int);
} real;

static struct ms_evring *active;      /* atomic: the ring of the open watch, or NULL */
static unsigned int inflight;         /* atomic: hooks between reading active and their put */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t cached_pid;
static __thread pid_t cached_tid;
static bool atfork_set;

static void forget_ids(void)
{
	cached_pid = 0;
	cached_tid = 0;
}

static void change_init(struct ms_change *c, enum ms_aspace_op op, uint64_t start, uint64_t end)
{
	if (!cached_pid)
		cached_pid = (pid_t)syscall(SYS_getpid);
	if (!cached_tid)
		cached_tid = (pid_t)syscall(SYS_gettid);
	*c = (struct ms_change){
		.op = op, .time_ns = ms_evring_now(),
		.pid = (uint32_t)cached_pid, .tid = (uint32_t)cached_tid, .start = start, .end = end,
		.name = "", .prot = -1, .advice = -1, .lock = -1,
	};
}

static void publish(const struct ms_change *c)
{
	struct ms_evring *r;

	__atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
	r = __atomic_load_n(&active, __ATOMIC_SEQ_CST);
	if (r)
		ms_evring_put(r, c);
	__atomic_sub_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
}

/* A change that releases [start, end), page-aligned. */
static void released(enum ms_aspace_op op, uint64_t start, uint64_t end, int advice)
{
	struct ms_change c;

	change_init(&c, op, start, PAGE_UP(end));
	c.release_start = start;
	c.release_end = PAGE_UP(end);
	c.advice = advice;
	publish(&c);
}

static int hook_munmap(void *addr, size_t len)
{
	int ret = real.munmap(addr, len);

	if (!ret)
		released(MS_OP_UNMAP, (uint64_t)addr, (uint64_t)addr + len, -1);
	return ret;
}

/* Only MAP_FIXED (not _NOREPLACE) replaces what was there. */
static void *hook_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *ret = real.mmap(addr, len, prot, flags, fd, off);

	if (ret != MAP_FAILED && (flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE))
		released(MS_OP_MAP, (uint64_t)ret, (uint64_t)ret + len, -1);
	return ret;
}

static void *hook_mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *target = NULL, *ret;
	struct ms_change c;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		target = va_arg(ap, void *);
		va_end(ap);
	}
	ret = real.mremap(old, old_len, new_len, flags, target);
	if (ret == MAP_FAILED)
		return ret;
	if (flags & MREMAP_FIXED)       /* what was at the target is gone */
		released(MS_OP_UNMAP, (uint64_t)ret, (uint64_t)ret + new_len, -1);
	change_init(&c, MS_OP_REMAP, (uint64_t)old, PAGE_UP((uint64_t)old + old_len));
	c.new_start = (uint64_t)ret;
	c.new_end = PAGE_UP((uint64_t)ret + new_len);
	if (old_len && ret != old) {
		c.release_start = c.start;
		c.release_end = c.end;
	} else if (new_len < old_len) {
		c.release_start = PAGE_UP((uint64_t)old + new_len);
		c.release_end = c.end;
	}
	publish(&c);
	return ret;
}

static bool releasing_advice(int advice)
{
	return advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE ||
	       advice == 24 /* MADV_DONTNEED_LOCKED */;
}

static int hook_madvise(void *addr, size_t len, int advice)
{
	int ret = real.madvise(addr, len, advice);

	if (!ret && releasing_advice(advice))
		released(MS_OP_MADVISE, (uint64_t)addr, (uint64_t)addr + len, advice);
	return ret;
}

/* shmdt takes no length: the segment's extent is read before it goes. */
static int hook_shmdt(const void *addr)
{
	uint64_t start, end;
	bool known = !ms_interpose_extent((uint64_t)addr, &start, &end);
	struct ms_change c;
	int ret = real.shmdt(addr);

	if (ret)
		return ret;
	if (known) {
		released(MS_OP_UNMAP, start, end, -1);
		return ret;
	}
	change_init(&c, MS_OP_UNMAP, (uint64_t)addr, (uint64_t)addr);
	c.release_all = true;           /* cannot tell how much went */
	publish(&c);
	return ret;
}

/* A break that moved from old to now: the pages above the lower one went if it shrank. */
static void break_moved(uint64_t old, uint64_t now)
{
	struct ms_change c;

	change_init(&c, MS_OP_BRK, old, now);
	if (PAGE_UP(now) < PAGE_UP(old)) {
		c.release_start = PAGE_UP(now);
		c.release_end = PAGE_UP(old);
	}
	publish(&c);
}

static int hook_brk(void *addr)
{
	void *old = real.sbrk(0);
	int ret = real.brk(addr);

	if (!ret && old != (void *)-1 && addr != old)
		break_moved((uint64_t)old, (uint64_t)addr);
	return ret;
}

static void *hook_sbrk(intptr_t incr)
{
	void *old = real.sbrk(incr);

	if (old != (void *)-1 && incr)
		break_moved((uint64_t)old, (uint64_t)old + (uint64_t)incr);
	return old;
}

static int patch_all(bool on);

static void *hook_dlopen(const char *file, int flags)
{
	void *h = real.dlopen(file, flags);

	if (h && __atomic_load_n(&active, __ATOMIC_SEQ_CST))
		patch_all(true);        /* the new object's relocations, and its dependencies' */
	return h;
}

static const struct {
	const char *name;
	void *hook;
	void **real;
} hooks[] = {
	{ "munmap", (void *)hook_munmap, (void **)&real.munmap },
	{ "mmap", (void *)hook_mmap, (void **)&real.mmap },
	{ "mmap64", (void *)hook_mmap, (void **)&real.mmap },
	{ "mremap", (void *)hook_mremap, (void **)&real.mremap },
	{ "madvise", (void *)hook_madvise, (void **)&real.madvise },
	{ "shmdt", (void *)hook_shmdt, (void **)&real.shmdt },
	{ "brk", (void *)hook_brk, (void **)&real.brk },
	{ "sbrk", (void *)hook_sbrk, (void **)&real.sbrk },
	{ "dlopen", (void *)hook_dlopen, (void **)&real.dlopen },
};
#define NR_HOOKS (sizeof(hooks) / sizeof(hooks[0]))

static int find_hook(const char *name)
{
	size_t i;

	for (i = 0; i < NR_HOOKS; i++)
		if (!strcmp(hooks[i].name, name))
			return (int)i;
	return -1;
}

#ifdef RELOC_JUMP_SLOT
struct object {
	uint64_t base, relro_lo, relro_hi;
	const ElfW(Sym) *symtab;
	const char *strtab;
};

struct walk {
	bool on;
	int munmaps;                  /* munmap slots that point at the hook now */
};

/* A GOT under RELRO is read-only once relocated: opened for the write alone. */
static void write_slot(const struct object *o, void **slot, void *value)
{
	uint64_t a = (uint64_t)slot;
	void *page = (void *)(a & ~(uint64_t)4095);
	bool ro = a >= o->relro_lo && a < o->relro_hi;

	if (ro && mprotect(page, 4096, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (ro)
		mprotect(page, 4096, PROT_READ);
}

static void patch_relocs(const struct object *o, uint64_t rel, uint64_t size, struct walk *w)
{
	const ElfW(Rela) *r = (const void *)rel, *end = (const void *)(rel + size);
	void **slot;
	int h;

	for (; rel && r < end; r++) {
		if (ELF64_R_TYPE(r->r_info) != RELOC_JUMP_SLOT && ELF64_R_TYPE(r->r_info) != RELOC_GLOB_DAT)
			continue;
		h = find_hook(o->strtab + o->symtab[ELF64_R_SYM(r->r_info)].st_name);
		if (h < 0)
			continue;
		slot = (void **)(o->base + r->r_offset);
		if (w->on && *slot != hooks[h].hook)
			write_slot(o, slot, hooks[h].hook);
		else if (!w->on && *slot == hooks[h].hook)
			write_slot(o, slot, *hooks[h].real);
		w->munmaps += w->on && hooks[h].hook == (void *)hook_munmap;
	}
}

/* The loader relocates most dynamic entries in place; the vDSO's and some others stay offsets. */
static uint64_t dyn_addr(uint64_t base, uint64_t v)
{
	return v < base ? v + base : v;
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object o = { .base = info->dlpi_addr };
	uint64_t jmprel = 0, pltsz = 0, rela = 0, relasz = 0, pltrel = DT_RELA;
	const ElfW(Dyn) *d = NULL;
	int i;

	(void)size;
	if (strstr(info->dlpi_name, "linux-vdso") || strstr(info->dlpi_name, "ld-linux"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const void *)(o.base + info->dlpi_phdr[i].p_vaddr);
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			o.relro_lo = o.base + info->dlpi_phdr[i].p_vaddr;
			o.relro_hi = o.relro_lo + info->dlpi_phdr[i].p_memsz;
		}
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: o.symtab = (const void *)dyn_addr(o.base, d->d_un.d_ptr); break;
		case DT_STRTAB: o.strtab = (const void *)dyn_addr(o.base, d->d_un.d_ptr); break;
		case DT_JMPREL: jmprel = dyn_addr(o.base, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: pltsz = d->d_un.d_val; break;
		case DT_RELA: rela = dyn_addr(o.base, d->d_un.d_ptr); break;
		case DT_RELASZ: relasz = d->d_un.d_val; break;
		case DT_PLTREL: pltrel = d->d_un.d_val; break;
		}
	}
	if (!o.symtab || !o.strtab || pltrel != DT_RELA)
		return 0;
	patch_relocs(&o, jmprel, pltsz, arg);
	patch_relocs(&o, rela, relasz, arg);
	return 0;
}

/* Points every loaded object's slots at the hooks (on) or back at the functions; the munmap slots patched. */
static int patch_all(bool on)
{
	struct walk w = { .on = on };

	pthread_mutex_lock(&patch_lock);
	dl_iterate_phdr(patch_object, &w);
	pthread_mutex_unlock(&patch_lock);
	return w.munmaps;
}

int ms_interpose_start(struct ms_evring *r)
{
	struct ms_evring *none = NULL;
	size_t i;

	for (i = 0; i < NR_HOOKS; i++)
		if (!(*hooks[i].real = dlsym(RTLD_DEFAULT, hooks[i].name)))
			return -ENOTSUP;        /* a static binary */
	if (!__atomic_compare_exchange_n(&active, &none, r, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return -EBUSY;
	if (!atfork_set && !pthread_atfork(NULL, NULL, forget_ids))
		atfork_set = true;
	if (patch_all(true))
		return 0;
	ms_interpose_stop();
	return -ENOTSUP;
}

void ms_interpose_stop(void)
{
	patch_all(false);
	__atomic_store_n(&active, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&inflight, __ATOMIC_SEQ_CST))
		sched_yield();
}
#else
static int patch_all(bool on)
{
	(void)on;
	return 0;
}

int ms_interpose_start(struct ms_evring *r)
{
	(void)r;
	return -ENOTSUP;
}

void ms_interpose_stop(void)
{
}
#endif

/* Skips n space-separated fields of a /proc/PID/maps line. */
static const char *skip_fields(const char *p, int n)
{
	while (n--) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	return p;
}

/* Reads /proc/self/maps with a stack buffer: this runs inside shmdt, where nothing may allocate. */
int ms_interpose_extent(uint64_t addr, uint64_t *start, uint64_t *end)
{
	char buf[4096], *line, *nl, *p;
	uint64_t lo, hi, ino, seg_ino = 0;
	size_t have = 0;
	bool found = false, done = false;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (!done && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; !done && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			lo = strtoull(line, &p, 16);
			hi = strtoull(p + 1, &p, 16);
			ino = strtoull(skip_fields(p, 4), NULL, 10);
			if (!found && lo == addr) {
				found = true;
				*start = lo;
				*end = hi;
				seg_ino = ino;
			} else if (found && seg_ino && lo == *end && ino == seg_ino) {
				*end = hi;      /* the segment split by mprotect: all of it goes */
			} else if (found) {
				done = true;
			}
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;               /* a line longer than the buffer: its path does not matter */
	}
	close(fd);
	return found ? 0 : -ENOENT;
}
